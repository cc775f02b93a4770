//! The event log: append-only, hash-chained Parquet segments, one log per stage.
//!
//! ```text
//! store/log/<stage>/00000000000000000000.parquet   parent = ""
//!                   00000000000000000001.parquet   parent = hash(…0000.parquet)
//!                   …                              head   = hash(last segment)
//! ```
//! Invariants:
//! - a segment is published once under its version name and never modified or
//!   removed; versions are contiguous from 0;
//! - each segment names its parent's hash in its Parquet metadata, so the head
//!   hash names the stage's whole history;
//! - a unit key is committed at most once per log, even with concurrent writers;
//! - the state of a stage is the fold "latest event per unit key wins"
//!   ([`fold::State`]); reading the log in pieces folds to the same state.
//!
//! Beside the logs, `store/index/<stage>/` holds what is derived from them to read them
//! fast, each file checked before use and rebuilt when it fails: the committed unit keys
//! ([`index`], for planning) and where each event is ([`rows`], for reading one event).

mod error;
pub mod event;
pub mod fold;
pub mod index;
mod problem;
pub mod references;
pub mod rows;
pub mod segment;
pub mod stage_log;
pub mod verify;

use std::io;

pub use error::LogError;
pub use event::{Event, EventBody, Provenance, unit_key};
pub use fold::State;
pub use stage_log::{Committed, Head, SegmentRef, StageLog, View};

use crate::store::{Hash, Store, s3::S3Bucket};

/// The stages that have a log in `store`, sorted by name.
pub fn stages(store: &Store) -> Result<Vec<String>, LogError> {
    if let Some(s3) = store.s3() {
        return stages_s3(s3);
    }
    let root = store.log_root();
    let entries = match std::fs::read_dir(&root) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        other => other.map_err(|e| LogError::io(&root, e))?,
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| LogError::io(&root, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() && stage_log::check_stage_name(&name).is_ok() {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

fn stages_s3(s3: &S3Bucket) -> Result<Vec<String>, LogError> {
    let mut names = s3.list_dirs(crate::store::LOG_DIR)?;
    names.retain(|n| stage_log::check_stage_name(n).is_ok());
    Ok(names)
}

/// The run hash of `store` as it is now: [`run_hash`] over every log's head (what `ml2b log`
/// and `ml2b run` print).
pub fn current_run_hash(store: &Store) -> Result<Hash, LogError> {
    let mut heads = Vec::new();
    for stage in stages(store)? {
        let head = StageLog::new(store, &stage)?.head()?;
        heads.push((stage, head.hash));
    }
    Ok(run_hash(&heads))
}

/// The hash over every stage's head: names a whole run.
pub fn run_hash(heads: &[(String, Option<Hash>)]) -> Hash {
    let mut k = crate::store::KeyHasher::new("run");
    k.u64(heads.len() as u64);
    for (stage, head) in heads {
        k.str(stage);
        k.bytes(head.map(|h| h.0).as_ref().map_or(&[][..], |b| &b[..]));
    }
    k.finish()
}
