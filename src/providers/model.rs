//! What a model is to the stages ([`ChatModel`]: a chat request answered for a sample of
//! the benchmark), the sample it is asked for, a stored response, and why a request got
//! none. A leaf of `providers/`: every provider implements it.

use crate::events::Format;
use crate::log::LogError;
use crate::providers::http::{ChatRequest, Completion};
use crate::store::Hash;

/// What a request is asked for: the sample of the benchmark it answers.
#[derive(Clone, Copy, Debug)]
pub struct Sample<'a> {
    pub competition: &'a str,
    pub language: &'a str,
    /// The submission format of a generate sample; none for a translation.
    pub format: Option<Format>,
    pub seed: u32,
    /// The rendered prompt's object hash: a replayed response must answer the same.
    pub prompt_blake3: Option<Hash>,
}

impl<'a> From<&'a crate::events::Generation> for Sample<'a> {
    /// The sample a generate event is.
    fn from(b: &'a crate::events::Generation) -> Self {
        Self {
            competition: &b.competition,
            language: &b.language,
            format: Some(b.format),
            seed: b.seed,
            prompt_blake3: b.prompt_blake3,
        }
    }
}

/// Why a request got no response.
#[derive(Debug, thiserror::Error)]
pub enum RespondError {
    /// The model could not be set up (a client, the replayed store, the local weights).
    #[error("model `{model}`: {reason}")]
    Setup { model: String, reason: String },
    /// The model answers no requests (`reference`, `template`).
    #[error("the reference provider answers no requests")]
    NoRequests,
    /// The provider was asked and gave no answer; the text is what the unit records.
    #[error("{0}")]
    Unanswered(String),
    /// The response could not be stored or a replayed one read.
    #[error(transparent)]
    Store(#[from] LogError),
    /// Storing the response panicked.
    #[error("storing the response failed")]
    Panicked(#[source] tokio::task::JoinError),
}

impl From<crate::store::ObjectError> for RespondError {
    fn from(e: crate::store::ObjectError) -> Self {
        Self::Store(e.into())
    }
}

/// A provider that answers chat requests.
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// Answers `request`, asked for `sample`.
    async fn complete(&self, request: &ChatRequest, sample: &Sample<'_>) -> Result<Completion, RespondError>;

    /// What identifies the answering model beyond its manifest entry (a local model's
    /// weights), for the request cache's key.
    fn identity(&self) -> String {
        String::new()
    }
}

/// A stored response.
#[derive(Clone, Debug)]
pub struct Response {
    pub completion: Completion,
    /// The object holding `completion` as JSON.
    pub object: Hash,
}
