//! One thing `verify` found wrong: a file and what is wrong with it. A leaf that both the
//! segment walk (`verify`) and the check of what events name (`references`) report into.

use std::path::PathBuf;

/// One thing found wrong.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// The damaged or missing file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub message: String,
}

impl Problem {
    /// A problem with `path`: the error and its causes.
    pub(super) fn of(path: PathBuf, error: &(dyn std::error::Error + 'static)) -> Self {
        Self {
            path,
            message: crate::error::chain(error),
        }
    }
}
