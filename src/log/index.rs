//! A derived index of committed unit keys, so planning need not re-read the log.
//!
//! Deciding which planned units are already committed would otherwise decode
//! the `unit_key` column of every segment. Instead a stage's view starts from
//! the newest index (a sorted array of keys, memory-mapped, looked up by binary
//! search) and decodes only the segments committed after it.
//!
//! On disk, `store/index/<stage>/{next:020}.keys`:
//! ```text
//! "ml2b-keys/1\n" | next: u64 LE | head: [u8; 32] | count: u64 LE |
//! count × 32-byte keys, sorted, unique | blake3 of all the above: [u8; 32]
//! ```
//! `next` is the number of segments covered and `head` the hash of the last
//! of them. An index is a cache: it is checked on load (checksum, and `head`
//! against the log) and ignored when it does not match, never trusted blindly;
//! deleting the folder only costs one full read of the log.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::store::{Hash, sync_dir};

const MAGIC: &[u8; 12] = b"ml2b-keys/1\n";
const HEADER: usize = 12 + 8 + 32 + 8;

/// A verified, memory-mapped index.
#[derive(Debug)]
pub struct KeyIndex {
    map: Mmap,
    /// Segments covered.
    pub next: u64,
    /// Hash of the last covered segment.
    pub head: Hash,
    count: usize,
}

impl KeyIndex {
    /// Opens and verifies an index file; `None` if it is malformed or damaged.
    pub fn open(path: &Path) -> io::Result<Option<Self>> {
        let file = File::open(path)?;
        // SAFETY: index files are written once to a temp name and renamed into
        // place, never modified; the checksum below rejects a file changed under us.
        let map = unsafe { Mmap::map(&file)? };
        Ok(Self::parse(map))
    }

    fn parse(map: Mmap) -> Option<Self> {
        if map.len() < HEADER + 32 || &map[..12] != MAGIC {
            return None;
        }
        let body = map.len() - 32;
        let count = u64::from_le_bytes(map[52..60].try_into().ok()?) as usize;
        if HEADER + count.checked_mul(32)? != body {
            return None;
        }
        let mut hasher = blake3::Hasher::new();
        hasher.update_rayon(&map[..body]);
        if hasher.finalize().as_bytes() != &map[body..] {
            return None;
        }
        let next = u64::from_le_bytes(map[12..20].try_into().ok()?);
        let head = Hash(map[20..52].try_into().ok()?);
        Some(Self {
            map,
            next,
            head,
            count,
        })
    }

    fn key(&self, i: usize) -> &[u8] {
        &self.map[HEADER + 32 * i..HEADER + 32 * (i + 1)]
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Whether `key` is in the index (binary search).
    pub fn contains(&self, key: &Hash) -> bool {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.key(mid).cmp(&key.0[..]) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }

    fn keys(&self) -> impl Iterator<Item = Hash> + '_ {
        (0..self.count).map(|i| Hash(self.key(i).try_into().expect("32-byte keys")))
    }
}

/// The index files of a folder, newest first.
pub fn candidates(dir: &Path) -> Vec<(u64, PathBuf)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(u64, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_str()?.strip_suffix(".keys")?.parse().ok()?;
            Some((name, e.path()))
        })
        .collect();
    found.sort_by_key(|c| std::cmp::Reverse(c.0));
    found
}

/// Writes the index of `base ∪ recent` covering `next` segments ending at `head`.
pub fn write(
    dir: &Path,
    next: u64,
    head: Hash,
    base: Option<&KeyIndex>,
    recent: &HashSet<Hash>,
) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let mut fresh: Vec<Hash> = recent.iter().copied().collect();
    fresh.sort_unstable();
    let merged = merge(base.map(|b| b.keys()), fresh);
    let tmp = tempfile::NamedTempFile::new_in(dir)?;
    let mut out = BufWriter::new(tmp.as_file());
    let mut hasher = blake3::Hasher::new();
    let mut put = |bytes: &[u8], out: &mut BufWriter<&File>| -> io::Result<()> {
        hasher.update(bytes);
        out.write_all(bytes)
    };
    put(MAGIC, &mut out)?;
    put(&next.to_le_bytes(), &mut out)?;
    put(&head.0, &mut out)?;
    put(&(merged.len() as u64).to_le_bytes(), &mut out)?;
    for k in &merged {
        put(&k.0, &mut out)?;
    }
    out.write_all(hasher.finalize().as_bytes())?;
    out.flush()?;
    drop(out);
    tmp.as_file().sync_all()?;
    let path = dir.join(format!("{next:020}.keys"));
    tmp.persist(&path).map_err(|e| e.error)?;
    sync_dir(dir)?;
    Ok(path)
}

/// Merges two sorted runs into one sorted run without repeats.
fn merge(base: Option<impl Iterator<Item = Hash>>, fresh: Vec<Hash>) -> Vec<Hash> {
    let base: Vec<Hash> = base.map(Iterator::collect).unwrap_or_default();
    let mut out = Vec::with_capacity(base.len() + fresh.len());
    let (mut a, mut b) = (base.into_iter().peekable(), fresh.into_iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x <= y => a.next(),
            (Some(_), Some(_)) | (None, Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, None) => break,
        };
        let k = next.expect("peeked");
        if out.last() != Some(&k) {
            out.push(k);
        }
    }
    out
}

/// Removes index files older than `keep` (best effort: they are a cache).
pub fn prune(dir: &Path, keep: u64) {
    for (next, path) in candidates(dir) {
        if next < keep {
            let _ = fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_open_lookup() {
        let dir = tempfile::tempdir().unwrap();
        let keys: HashSet<Hash> = (0..1000u32).map(|i| Hash::of(&i.to_le_bytes())).collect();
        let head = Hash::of(b"head");
        let path = write(dir.path(), 7, head, None, &keys).unwrap();
        let idx = KeyIndex::open(&path).unwrap().unwrap();
        assert_eq!((idx.next, idx.head, idx.len()), (7, head, 1000));
        assert!(keys.iter().all(|k| idx.contains(k)));
        assert!(!idx.contains(&Hash::of(b"absent")));

        let more: HashSet<Hash> = (1000..1100u32).map(|i| Hash::of(&i.to_le_bytes())).collect();
        let path2 = write(dir.path(), 9, head, Some(&idx), &more).unwrap();
        let idx2 = KeyIndex::open(&path2).unwrap().unwrap();
        assert_eq!(idx2.len(), 1100);
        assert!(more.iter().chain(&keys).all(|k| idx2.contains(k)));
        assert_eq!(
            candidates(dir.path()).iter().map(|c| c.0).collect::<Vec<_>>(),
            vec![9, 7]
        );
    }

    #[test]
    fn damaged_index_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let keys: HashSet<Hash> = (0..10u32).map(|i| Hash::of(&i.to_le_bytes())).collect();
        let path = write(dir.path(), 1, Hash::of(b"h"), None, &keys).unwrap();
        let mut bytes = fs::read(&path).unwrap();
        bytes[HEADER + 5] ^= 1;
        fs::write(&path, bytes).unwrap();
        assert!(KeyIndex::open(&path).unwrap().is_none());
    }
}
