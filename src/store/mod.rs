//! The store: one directory that holds everything a benchmark run produced.
//!
//! ```text
//! store/
//!   objects/blake3/ab/cd/<60 more hex>   immutable blobs, named by their BLAKE3 hash
//!   objects/tmp/                         staging files (invisible to readers)
//!   log/<stage>/{v:020}.parquet          committed event segments (see `crate::log`)
//!   index/<stage>/{next:020}.keys        derived, disposable index of committed unit
//!                                        keys (see `crate::log::index`)
//! ```
//!
//! Invariants: nothing under `objects/blake3` or `log/` is ever modified or
//! deleted (`index/` is a cache, checked on load and rebuilt at will); every name under
//! `objects/blake3` is the hash of its content; a
//! segment under `log/` is a hard link to the object holding its bytes, so the
//! segment's hash is its content address. Several processes may write one store
//! at once: every publish is atomic (rename or hard link).
//!
//! A store may also live on S3-compatible object storage, `s3://BUCKET/PREFIX`, with the
//! same layout under the prefix ([`s3`]): objects by plain PUT, segments by
//! create-if-absent PUT, no `objects/tmp/` (a PUT is atomic) and no `index/` (yet).
//! There, [`Store::root`] and the paths derived from it are the keys' URLs, which name
//! them in messages; only the objects and the logs (`crate::log`) read and write S3 so
//! far, so the commands refuse an S3 store except where they say otherwise.

mod hash;
mod objects;
pub mod s3;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) use hash::HashingWriter;
pub use hash::{Hash, KEY_ENCODING, KeyHasher, ParseHashError, traced};
pub use objects::{LocalFile, ObjectError, Objects, Stray, write_atomic};
pub(crate) use objects::{hash_file, same_file, sync_dir};
pub use s3::{S3Bucket, S3Error};

/// The blake3 of a file, as lowercase hex.
pub(crate) fn hash_file_hex(path: &Path) -> std::io::Result<String> {
    hash_file(path).map(|h| h.to_hex())
}

/// Name of the folder of segments.
pub const LOG_DIR: &str = "log";

/// A store rooted at a directory (created on first write), or at a prefix of an S3 bucket.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
    objects: Objects,
    s3: Option<Arc<S3Bucket>>,
}

impl Store {
    /// Opens the store at `root`; nothing is created until something is written.
    pub fn open(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let objects = Objects::new(root.join("objects"));
        Self {
            root,
            objects,
            s3: None,
        }
    }

    /// Opens the store a location names: `s3://BUCKET/PREFIX` (configured from the AWS
    /// environment, see [`s3`]) or a directory.
    pub fn open_location(location: &str) -> Result<Self, S3Error> {
        if location.starts_with(s3::SCHEME) {
            Self::open_s3(location, &[])
        } else {
            Ok(Self::open(location))
        }
    }

    /// Opens `s3://BUCKET/PREFIX`, configured from the AWS environment and then `options`
    /// (`object_store`'s keys: `aws_endpoint`, `aws_allow_http`, …); refuses a server that
    /// does not honour `If-None-Match: *`.
    pub fn open_s3(url: &str, options: &[(&str, &str)]) -> Result<Self, S3Error> {
        let bucket = S3Bucket::open(url, options)?;
        Ok(Self {
            root: PathBuf::from(bucket.root_url()),
            objects: Objects::on_s3(bucket.clone()),
            s3: Some(bucket),
        })
    }

    /// The store's directory (on S3: its URL, for messages).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The bucket of an S3 store.
    pub(crate) fn s3(&self) -> Option<&S3Bucket> {
        self.s3.as_deref()
    }

    /// Whether the store lives on S3.
    pub fn is_s3(&self) -> bool {
        self.s3.is_some()
    }

    /// The content-addressed objects.
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    /// The folder holding every stage log.
    pub fn log_root(&self) -> PathBuf {
        self.root.join(LOG_DIR)
    }

    /// The folder of one stage's segments.
    pub fn log_dir(&self, stage: &str) -> PathBuf {
        self.log_root().join(stage)
    }
}
