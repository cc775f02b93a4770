//! A failure of the event log ([`LogError`]): the file, segment or column it is about, and
//! its cause. A leaf of `log/`.

use std::io;
use std::path::{Path, PathBuf};

use crate::store::{Hash, ObjectError, S3Error};

/// A failure of the event log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("I/O failed at {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Object(#[from] ObjectError),
    /// The S3 backend failed (boxed: its client's errors are large).
    #[error(transparent)]
    S3(Box<S3Error>),
    #[error("segment {path} is damaged: {reason}")]
    Damaged { path: PathBuf, reason: String },
    #[error("segment {path} is missing: the log has a gap there")]
    Gap { path: PathBuf },
    #[error(
        "segment {path} breaks the hash chain: its parent should be {} but it names {}",
        show(expected),
        show(found)
    )]
    BrokenChain {
        path: PathBuf,
        expected: Option<Hash>,
        found: Option<Hash>,
    },
    #[error("`{0}` is not a stage name (lowercase letters, digits, `_`)")]
    StageName(String),
    #[error("the events of stage `{stage}` have no valid schema: {reason}")]
    Schema { stage: String, reason: String },
    #[error("column `{0}` is missing or malformed")]
    Column(String),
    #[error("could not encode a value for hashing")]
    Json(#[source] serde_json::Error),
    #[error("could not convert events to or from Arrow")]
    Arrow(#[source] serde_arrow::Error),
    #[error("Arrow failed")]
    ArrowCore(#[from] arrow::error::ArrowError),
    #[error("Parquet failed")]
    Parquet(#[from] parquet::errors::ParquetError),
}

fn show(h: &Option<Hash>) -> String {
    h.map_or_else(|| "nothing".to_string(), |h| h.short())
}

impl From<S3Error> for LogError {
    fn from(e: S3Error) -> Self {
        Self::S3(Box::new(e))
    }
}

impl LogError {
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn damaged(path: &Path, reason: impl Into<String>) -> Self {
        Self::Damaged {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }
}
