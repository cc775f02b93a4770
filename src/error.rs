//! Which errors are the user's input being wrong (exit 2) rather than the work failing
//! (exit 1), decided by the error types themselves.
//!
//! Every error type that can carry bad input implements [`IsInputError`]; a wrapper
//! (`PipelineError`, `StageError`) asks the error it wraps, so the answer survives
//! `#[error(transparent)]`, which hides the wrapped error from the cause chain.
//! [`is_input_error`] walks an error's cause chain and asks each cause it knows.

use crate::cluster::ClusterError;
use crate::competition::import::ImportError;
use crate::competition::prepare::PrepareError;
use crate::manifest::ManifestError;
use crate::metrics::aup::AupError;
use crate::metrics::grading::GradeError;
use crate::metrics::text_files::TextStatsError;
use crate::pipeline::PipelineError;
use crate::query::QueryError;
use crate::record::RecordError;
use crate::sandbox::SandboxError;
use crate::settings::InputError;
use crate::stages::StageError;

/// An error that knows whether it is the user's input being wrong.
pub trait IsInputError {
    fn is_input_error(&self) -> bool;
}

/// Whether any cause in `err`'s chain is an input error.
pub fn is_input_error(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(err);
    while let Some(e) = cause {
        if classify(e) == Some(true) {
            return true;
        }
        cause = e.source();
    }
    false
}

/// Asks `e` itself, when its type is one that knows.
fn classify(e: &(dyn std::error::Error + 'static)) -> Option<bool> {
    macro_rules! ask {
        ($($t:ty),* $(,)?) => {
            $(if let Some(e) = e.downcast_ref::<$t>() {
                return Some(e.is_input_error());
            })*
        };
    }
    ask!(
        InputError,
        PipelineError,
        ClusterError,
        StageError,
        ManifestError,
        SandboxError,
        ImportError,
        PrepareError,
        QueryError,
        RecordError,
        AupError,
        TextStatsError,
        GradeError,
    );
    None
}

impl IsInputError for InputError {
    fn is_input_error(&self) -> bool {
        true
    }
}

impl IsInputError for PipelineError {
    fn is_input_error(&self) -> bool {
        match self {
            Self::Input(e) => e.is_input_error(),
            Self::Manifest(e) => e.is_input_error(),
            Self::Sandbox(e) => e.is_input_error(),
            Self::Stage(e) => e.is_input_error(),
            Self::Cluster { source, .. } => source.is_input_error(),
            Self::Log(_) | Self::Runtime(_) | Self::TranslationChecks(_) | Self::Preflight(_) => false,
        }
    }
}

impl IsInputError for ClusterError {
    fn is_input_error(&self) -> bool {
        match self {
            Self::Pipeline(e) => e.is_input_error(),
            Self::Plan(_) | Self::Slurm(_) | Self::Log(_) | Self::Folder(_) | Self::Tasks(_) => false,
        }
    }
}

impl IsInputError for StageError {
    fn is_input_error(&self) -> bool {
        match self {
            Self::Manifest(e) => e.is_input_error(),
            _ => false,
        }
    }
}

impl IsInputError for ManifestError {
    fn is_input_error(&self) -> bool {
        true
    }
}

impl IsInputError for SandboxError {
    /// No sandbox on this host (bubblewrap or Docker missing) is for the user to fix.
    fn is_input_error(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }
}

impl IsInputError for ImportError {
    fn is_input_error(&self) -> bool {
        matches!(
            self,
            Self::Invalid { .. } | Self::NotFound(_) | Self::Exists { .. } | Self::Manifest(_)
        )
    }
}

impl IsInputError for PrepareError {
    fn is_input_error(&self) -> bool {
        matches!(self, Self::Csv { .. } | Self::Data { .. } | Self::Manifest(_))
    }
}

impl IsInputError for QueryError {
    fn is_input_error(&self) -> bool {
        matches!(self, Self::Invalid(_))
    }
}

impl IsInputError for AupError {
    fn is_input_error(&self) -> bool {
        true
    }
}

impl IsInputError for TextStatsError {
    fn is_input_error(&self) -> bool {
        self.is_bad_input()
    }
}

impl IsInputError for GradeError {
    fn is_input_error(&self) -> bool {
        matches!(
            self,
            Self::UnknownMetric(_) | Self::Read(_) | Self::Answers { .. } | Self::InferredTargets { .. }
        )
    }
}
