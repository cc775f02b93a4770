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

mod hash;
mod objects;

use std::path::{Path, PathBuf};

pub(crate) use hash::HashingWriter;
pub use hash::{Hash, KEY_ENCODING, KeyHasher, ParseHashError, traced};
pub use objects::{ObjectError, Objects, Stray, write_atomic};
pub(crate) use objects::{hash_file, sync_dir};

/// The blake3 of a file, as lowercase hex.
pub(crate) fn hash_file_hex(path: &Path) -> std::io::Result<String> {
    hash_file(path).map(|h| h.to_hex())
}

/// Name of the folder of segments.
pub const LOG_DIR: &str = "log";

/// A store rooted at a directory (created on first write).
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
    objects: Objects,
}

impl Store {
    /// Opens the store at `root`; nothing is created until something is written.
    pub fn open(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let objects = Objects::new(root.join("objects"));
        Self { root, objects }
    }

    /// The store's directory.
    pub fn root(&self) -> &Path {
        &self.root
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
