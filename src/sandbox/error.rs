//! [`SandboxError`]: why a backend, the runtime image or the managed Python environment could
//! not run a job at all, as distinct from a job that ran and failed (an `Outcome`). A leaf of
//! the sandbox modules: every other one uses it.

/// Why a backend could not run a job at all (distinct from the job failing).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("{0}")]
    Unavailable(String),
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// An output of a run that [`classify`](super::steps) accepted could not be copied out.
    #[error("copying {name} out of the sandbox")]
    Output {
        name: String,
        #[source]
        source: super::Refused,
    },
}

impl crate::error::IsInputError for SandboxError {
    /// No sandbox on this host (bubblewrap or Docker missing) is for the user to fix.
    fn is_input_error(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }
}
crate::error::input_error!(SandboxError);

pub(super) fn io(what: String) -> impl FnOnce(std::io::Error) -> SandboxError {
    move |source| SandboxError::Io { what, source }
}
