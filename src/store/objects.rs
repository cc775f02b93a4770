//! Content-addressed objects: `objects/blake3/ab/cd/<rest>`.
//!
//! `put` streams the bytes into a temp file in `objects/tmp/` while hashing
//! them, fsyncs it, and renames it to its hash's path; if the target already
//! exists, that is success (same name, same bytes). `get` re-hashes what it reads
//! and refuses bytes that do not match their name. Objects are never modified or
//! deleted.
//!
//! On an S3 store ([`super::s3`]) the same keys hold the same bytes: `put` hashes in
//! memory and writes with a plain PUT (a repeat writes identical bytes), `get` and
//! `verify` re-hash what they read, and a "path" is the object's URL
//! (`s3://BUCKET/PREFIX/objects/blake3/ab/cd/<rest>`), for messages only.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::s3::{S3Bucket, S3Error};
use super::{Hash, HashingWriter};

/// A failure reading or writing an object.
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    /// The filesystem refused.
    #[error("object store I/O failed at {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The object does not exist.
    #[error("object {hash} is missing ({path})")]
    Missing { hash: Hash, path: PathBuf },
    /// The bytes on disk do not hash to the object's name.
    #[error("object {expected} is damaged: its content hashes to {actual} ({path})")]
    Damaged {
        expected: Hash,
        actual: Hash,
        path: PathBuf,
    },
    /// The S3 backend failed (boxed: its client's errors are large).
    #[error(transparent)]
    S3(Box<S3Error>),
}

impl From<S3Error> for ObjectError {
    fn from(e: S3Error) -> Self {
        Self::S3(Box::new(e))
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> ObjectError + '_ {
    move |source| ObjectError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The object area of a store.
#[derive(Clone, Debug)]
pub struct Objects {
    /// The `objects` folder; on S3, its URL.
    root: PathBuf,
    s3: Option<Arc<S3Bucket>>,
}

/// The key of an object below the store's root: `objects/blake3/ab/cd/<rest>`.
fn key(hash: &Hash) -> String {
    let hex = hash.to_hex();
    format!("objects/blake3/{}/{}/{}", &hex[..2], &hex[2..4], &hex[4..])
}

impl Objects {
    pub(crate) fn new(root: PathBuf) -> Self {
        Self { root, s3: None }
    }

    pub(crate) fn on_s3(bucket: Arc<S3Bucket>) -> Self {
        let root = PathBuf::from(bucket.url("objects"));
        Self {
            root,
            s3: Some(bucket),
        }
    }

    /// Where the object named `hash` lives (on S3: its URL).
    pub fn path(&self, hash: &Hash) -> PathBuf {
        let hex = hash.to_hex();
        self.root
            .join("blake3")
            .join(&hex[..2])
            .join(&hex[2..4])
            .join(&hex[4..])
    }

    /// Whether the object exists (not whether it is intact), or why that cannot be told
    /// (a folder this user cannot read): an object that cannot be seen is not missing.
    pub fn exists(&self, hash: &Hash) -> Result<bool, ObjectError> {
        if let Some(s3) = &self.s3 {
            return Ok(s3.exists(&key(hash))?);
        }
        let path = self.path(hash);
        match fs::metadata(&path) {
            Ok(m) => Ok(m.is_file()),
            Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => Ok(false),
            Err(source) => Err(ObjectError::Io { path, source }),
        }
    }

    /// Stores `bytes`; returns their hash.
    pub fn put(&self, bytes: &[u8]) -> Result<Hash, ObjectError> {
        self.put_with(|w| w.write_all(bytes))
    }

    /// Stores what `write` writes; returns its hash.
    pub fn put_with(
        &self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<Hash, ObjectError> {
        if let Some(s3) = &self.s3 {
            return put_s3(s3, &self.root, write);
        }
        let tmp_dir = self.root.join("tmp");
        fs::create_dir_all(&tmp_dir).map_err(io_err(&tmp_dir))?;
        let tmp = tempfile::NamedTempFile::new_in(&tmp_dir).map_err(io_err(&tmp_dir))?;
        let mut w = HashingWriter {
            inner: io::BufWriter::new(tmp.as_file()),
            hasher: blake3::Hasher::new(),
        };
        write(&mut w).map_err(io_err(tmp.path()))?;
        w.flush().map_err(io_err(tmp.path()))?;
        let hash = Hash::from(w.hasher.finalize());
        drop(w);
        tmp.as_file().sync_all().map_err(io_err(tmp.path()))?;
        self.publish(tmp, &hash)?;
        Ok(hash)
    }

    fn publish(&self, tmp: tempfile::NamedTempFile, hash: &Hash) -> Result<(), ObjectError> {
        let path = self.path(hash);
        if path.is_file() {
            return Ok(());
        }
        let dir = path.parent().expect("object paths have parents");
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        tmp.persist(&path).map_err(|e| ObjectError::Io {
            path: path.clone(),
            source: e.error,
        })?;
        sync_dir(dir).map_err(io_err(dir))
    }

    /// Reads an object, verifying its hash.
    pub fn get(&self, hash: &Hash) -> Result<Vec<u8>, ObjectError> {
        let path = self.path(hash);
        if let Some(s3) = &self.s3 {
            let bytes = s3.get(&key(hash))?.ok_or(ObjectError::Missing {
                hash: *hash,
                path: path.clone(),
            })?;
            check(hash, Hash::of(&bytes), &path)?;
            return Ok(bytes.to_vec());
        }
        let bytes = match fs::read(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(ObjectError::Missing { hash: *hash, path });
            }
            other => other.map_err(io_err(&path))?,
        };
        check(hash, Hash::of(&bytes), &path)?;
        Ok(bytes)
    }

    /// Re-hashes an object on disk without keeping its bytes.
    pub fn verify(&self, hash: &Hash) -> Result<(), ObjectError> {
        if self.s3.is_some() {
            return self.get(hash).map(drop);
        }
        let path = self.path(hash);
        if !self.exists(hash)? {
            return Err(ObjectError::Missing { hash: *hash, path });
        }
        check(hash, hash_file(&path).map_err(io_err(&path))?, &path)
    }

    /// The object as a file a program can read, verified: the object's own file in a
    /// local store, a temporary copy (removed when the value is dropped) of an S3 store's.
    pub fn local_file(&self, hash: &Hash) -> Result<LocalFile, ObjectError> {
        if self.s3.is_none() {
            self.verify(hash)?;
            return Ok(LocalFile::Stored(self.path(hash)));
        }
        let bytes = self.get(hash)?;
        let tmp = std::env::temp_dir();
        let mut file = tempfile::Builder::new()
            .prefix("ml2b-object-")
            .tempfile_in(&tmp)
            .map_err(io_err(&tmp))?;
        file.write_all(&bytes).map_err(io_err(file.path()))?;
        file.flush().map_err(io_err(file.path()))?;
        Ok(LocalFile::Copy(file.into_temp_path()))
    }

    /// Every object name on disk, with the path it was found at.
    ///
    /// Names that are not well-formed hashes, and folders that cannot be read, are
    /// returned as [`Stray`]s. A store without objects lists nothing.
    pub fn list(&self) -> Box<dyn Iterator<Item = Result<(Hash, PathBuf), Stray>>> {
        match &self.s3 {
            Some(s3) => Box::new(self.list_s3(s3).into_iter()),
            None => Box::new(self.list_dir()),
        }
    }

    fn list_s3(&self, s3: &S3Bucket) -> Vec<Result<(Hash, PathBuf), Stray>> {
        let dir = self.root.join("blake3");
        let keys = match s3.list_all("objects/blake3") {
            Ok(keys) => keys,
            Err(e) => {
                return vec![Err(Stray::Unreadable {
                    path: dir,
                    source: io::Error::other(e),
                })];
            }
        };
        keys.iter()
            .map(|k| {
                let path = dir.join(k);
                parse_object_path(&path).ok_or(Stray::Name(path))
            })
            .collect()
    }

    fn list_dir(&self) -> impl Iterator<Item = Result<(Hash, PathBuf), Stray>> + use<> {
        walkdir::WalkDir::new(self.root.join("blake3"))
            .min_depth(3)
            .max_depth(3)
            .sort_by_file_name()
            .into_iter()
            .filter_map(|entry| match entry {
                Ok(e) if e.file_type().is_file() => {
                    Some(parse_object_path(e.path()).ok_or_else(|| Stray::Name(e.path().to_path_buf())))
                }
                Ok(_) => None,
                Err(e)
                    if e.depth() == 0
                        && e.io_error().is_some_and(|e| e.kind() == io::ErrorKind::NotFound) =>
                {
                    None
                }
                Err(e) => Some(Err(Stray::unreadable(e))),
            })
    }
}

/// What [`Objects::list`] finds under `objects/blake3` that is not an object.
#[derive(Debug, thiserror::Error)]
pub enum Stray {
    /// A file whose path is not an object name.
    #[error("not an object name")]
    Name(PathBuf),
    /// A folder that could not be read.
    #[error("cannot be listed")]
    Unreadable {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl Stray {
    fn unreadable(e: walkdir::Error) -> Self {
        let path = e.path().map(Path::to_path_buf).unwrap_or_default();
        let source = e
            .into_io_error()
            .unwrap_or_else(|| io::Error::other("a symbolic link loop"));
        Self::Unreadable { path, source }
    }

    /// The file or folder found.
    pub fn path(&self) -> &Path {
        match self {
            Self::Name(path) | Self::Unreadable { path, .. } => path,
        }
    }
}

fn parse_object_path(path: &Path) -> Option<(Hash, PathBuf)> {
    let rest = path.file_name()?.to_str()?;
    let cd = path.parent()?.file_name()?.to_str()?;
    let ab = path.parent()?.parent()?.file_name()?.to_str()?;
    let hash = format!("{ab}{cd}{rest}").parse().ok()?;
    Some((hash, path.to_path_buf()))
}

/// `put_with` on S3: hashes the bytes in memory, then one plain PUT.
/// An object as a local file ([`Objects::local_file`]).
#[derive(Debug)]
pub enum LocalFile {
    /// The object's file in a local store.
    Stored(PathBuf),
    /// A copy of an S3 store's object, removed on drop.
    Copy(tempfile::TempPath),
}

impl std::ops::Deref for LocalFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        match self {
            Self::Stored(path) => path,
            Self::Copy(path) => path,
        }
    }
}

impl AsRef<Path> for LocalFile {
    fn as_ref(&self) -> &Path {
        self
    }
}

fn put_s3(
    s3: &S3Bucket,
    root: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<Hash, ObjectError> {
    let mut w = HashingWriter {
        inner: Vec::new(),
        hasher: blake3::Hasher::new(),
    };
    write(&mut w).map_err(io_err(root))?;
    let hash = Hash::from(w.hasher.finalize());
    s3.put(&key(&hash), w.inner.into())?;
    Ok(hash)
}

fn check(expected: &Hash, actual: Hash, path: &Path) -> Result<(), ObjectError> {
    if *expected == actual {
        return Ok(());
    }
    Err(ObjectError::Damaged {
        expected: *expected,
        actual,
        path: path.to_path_buf(),
    })
}

/// Whether two paths name one file (device and inode).
pub(crate) fn same_file(a: &Path, b: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let (a, b) = (fs::metadata(a)?, fs::metadata(b)?);
    Ok(a.dev() == b.dev() && a.ino() == b.ino())
}

/// Hashes a file's content (memory-mapped, multi-threaded for large files).
pub(crate) fn hash_file(path: &Path) -> io::Result<Hash> {
    let mut hasher = blake3::Hasher::new();
    let len = fs::metadata(path)?.len();
    if len > 1 << 20 {
        hasher.update_mmap_rayon(path)?;
    } else {
        let mut buf = Vec::with_capacity(len as usize);
        File::open(path)?.read_to_end(&mut buf)?;
        hasher.update(&buf);
    }
    Ok(hasher.finalize().into())
}

/// Writes a whole file or nothing: `bytes` go to a temporary file in `path`'s folder
/// (created if missing), which is made readable by every user (0644; temp files start
/// private), synced, renamed over `path`, and the folder synced.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().set_permissions(fs::Permissions::from_mode(0o644))?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir)
}

/// Makes a directory entry durable.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_get_and_damage() {
        let dir = tempfile::tempdir().unwrap();
        let objects = Objects::new(dir.path().join("objects"));
        let h = objects.put(b"hello").unwrap();
        assert_eq!(h, Hash::of(b"hello"));
        assert_eq!(objects.put(b"hello").unwrap(), h, "already exists is success");
        assert_eq!(objects.get(&h).unwrap(), b"hello");
        let listed: Vec<_> = objects.list().map(|r| r.unwrap().0).collect();
        assert_eq!(listed, vec![h]);

        fs::write(objects.path(&h), b"hellO").unwrap();
        let err = objects.get(&h).unwrap_err().to_string();
        assert!(err.contains(&h.to_hex()) && err.contains("damaged"), "{err}");
        assert!(objects.verify(&h).is_err());
    }

    #[test]
    fn missing_object_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let objects = Objects::new(dir.path().join("objects"));
        let h = Hash::of(b"nope");
        let err = objects.get(&h).unwrap_err().to_string();
        assert!(err.contains("missing") && err.contains(&h.to_hex()), "{err}");
    }
}
