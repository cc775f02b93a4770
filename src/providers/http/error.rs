//! Why a completion failed. Texts that came from a server or the network have had the
//! API key redacted before they reach a variant (see `transport::redact`).

use super::Attempt;

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("client configuration: {message}")]
    InvalidConfig { message: String },

    #[error("could not build the HTTP client")]
    Client(#[source] reqwest::Error),

    #[error("the API key variable `{var}` is not set or empty")]
    MissingKey { var: String },

    #[error("the API key in `{var}` is not a valid HTTP header value")]
    InvalidKey { var: String },

    /// Every attempt failed with a retryable error (408, 429, 5xx, network, timeout, a
    /// malformed or truncated body).
    #[error("gave up after {} attempts; the last failed with {last}", attempts.len())]
    Exhausted { attempts: Vec<Attempt>, last: String },

    /// The server refused the request with a status retrying will not change.
    #[error("the server refused the request with HTTP {status}: {message}")]
    Fatal {
        status: u16,
        message: String,
        attempts: Vec<Attempt>,
    },
}

impl ProviderError {
    /// The attempts made before the error (empty when none was sent).
    pub fn attempts(&self) -> &[Attempt] {
        match self {
            Self::Exhausted { attempts, .. } | Self::Fatal { attempts, .. } => attempts,
            _ => &[],
        }
    }
}
