//! Why an import (or one competition of it) failed ([`ImportError`]), and which of those
//! failures are the user's input. A leaf of `competition/import/`.

use std::path::{Path, PathBuf};

use crate::competition::prepare;
use crate::manifest::ManifestError;

/// Why an import (or one competition of it) failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{id}` already exists at {}; remove it first (import never overwrites)", path.display())]
    Exists { id: String, path: PathBuf },
    #[error("{} of the selected competitions are not there:\n  {}", .0.len(), .0.join("\n  "))]
    NotFound(Vec<String>),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("preparing imported `{id}`")]
    Prepare {
        id: String,
        #[source]
        source: prepare::PrepareError,
    },
}

impl crate::error::IsInputError for ImportError {
    fn is_input_error(&self) -> bool {
        matches!(
            self,
            Self::Invalid { .. } | Self::NotFound(_) | Self::Exists { .. } | Self::Manifest(_)
        )
    }
}
crate::error::input_error!(ImportError);

impl ImportError {
    pub(crate) fn invalid(path: &Path, message: impl Into<String>) -> Self {
        Self::Invalid {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}
