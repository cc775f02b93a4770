//! `--model-cache DIR`: a folder of pretrained weights every run sees read-only at
//! `/cache`, where the libraries look: `HF_HOME=/cache/huggingface` (Hugging Face's hub
//! cache, `hub/models--org--name/…`) and `TORCH_HOME=/cache/torch` (`torch.hub`'s
//! `hub/checkpoints/…`), with `HF_HUB_OFFLINE=1`, so that nodes without internet run
//! solutions that load pretrained models, and a run loads what the cache holds instead of
//! downloading it.
//!
//! A published number names the weights it ran with: the cache's listing ([`ModelCache`])
//! is one line per entry, sorted by path — `f <path> <bytes> <blake3>` for a file,
//! `l <path> <target>` for a symbolic link (the hub cache links its snapshots to its
//! blobs; a link is listed, not followed) — and its blake3 is part of the execute unit key;
//! the listing itself is stored as an object that the execute event names.

use std::path::{Path, PathBuf};

use super::error::{SandboxError, io};
use crate::store::Hash;

/// Where a run sees the cache.
pub const MOUNT: &str = "/cache";

/// A model cache, listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelCache {
    pub dir: PathBuf,
    /// The listing (see the module's documentation).
    pub listing: String,
    pub blake3: Hash,
    pub files: u64,
    pub bytes: u64,
}

impl ModelCache {
    /// Lists `dir` (hashing every file; a file unchanged since ml2b last hashed it is not
    /// read again).
    pub fn open(dir: &Path) -> Result<Self, SandboxError> {
        let dir = std::path::absolute(dir).map_err(io(format!("resolving {}", dir.display())))?;
        if !dir.is_dir() {
            return Err(SandboxError::Unavailable(format!(
                "--model-cache {}: not a folder",
                dir.display()
            )));
        }
        let mut entries = Vec::new();
        walk(&dir, &dir, &mut entries)?;
        entries.sort();
        let (mut files, mut bytes) = (0, 0);
        let mut listing = String::new();
        for (path, entry) in entries {
            match entry {
                Entry::File { size, hash } => {
                    files += 1;
                    bytes += size;
                    listing += &format!("f {path} {size} {}\n", hash.to_hex());
                }
                Entry::Link(target) => listing += &format!("l {path} {target}\n"),
            }
        }
        Ok(Self {
            blake3: Hash::of(listing.as_bytes()),
            dir,
            listing,
            files,
            bytes,
        })
    }

    /// The environment a run gets with this cache.
    pub fn env() -> [(&'static str, String); 3] {
        [
            ("HF_HOME", format!("{MOUNT}/huggingface")),
            ("TORCH_HOME", format!("{MOUNT}/torch")),
            ("HF_HUB_OFFLINE", "1".into()),
        ]
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Entry {
    File { size: u64, hash: Hash },
    Link(String),
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Entry)>) -> Result<(), SandboxError> {
    let read = std::fs::read_dir(dir).map_err(io(format!("listing {}", dir.display())))?;
    for entry in read {
        let entry = entry.map_err(io(format!("listing {}", dir.display())))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(io(format!("reading {}", path.display())))?;
        let relative = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace(['\n', ' '], "?");
        if kind.is_symlink() {
            let target =
                std::fs::read_link(&path).map_err(io(format!("reading the link {}", path.display())))?;
            out.push((
                relative,
                Entry::Link(target.to_string_lossy().replace(['\n', ' '], "?")),
            ));
        } else if kind.is_dir() {
            walk(root, &path, out)?;
        } else if kind.is_file() {
            let size = entry
                .metadata()
                .map_err(io(format!("reading {}", path.display())))?
                .len();
            let hash = crate::competition::integrity::file_hash(&path)
                .map_err(io(format!("hashing {}", path.display())))?;
            out.push((relative, Entry::File { size, hash }));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_names_every_file_and_link_and_changes_with_any() {
        let dir = tempfile::tempdir().unwrap();
        let hub = dir.path().join("huggingface/hub/models--org--m");
        std::fs::create_dir_all(hub.join("blobs")).unwrap();
        std::fs::create_dir_all(hub.join("snapshots/r1")).unwrap();
        std::fs::write(hub.join("blobs/abc"), b"weights").unwrap();
        std::os::unix::fs::symlink("../../blobs/abc", hub.join("snapshots/r1/model.bin")).unwrap();
        let cache = ModelCache::open(dir.path()).unwrap();
        assert_eq!(
            cache.listing,
            format!(
                "f huggingface/hub/models--org--m/blobs/abc 7 {}\nl huggingface/hub/models--org--m/snapshots/r1/model.bin ../../blobs/abc\n",
                Hash::of(b"weights").to_hex()
            )
        );
        assert_eq!((cache.files, cache.bytes), (1, 7));
        std::fs::write(hub.join("blobs/abc"), b"other weights").unwrap();
        assert_ne!(ModelCache::open(dir.path()).unwrap().blake3, cache.blake3);
        assert!(ModelCache::open(&dir.path().join("nope")).is_err());
    }
}
