//! What a model is to the stages ([`ChatModel`]: a chat request answered for a sample of
//! the benchmark, or an agent's own request forwarded as it was written), the sample it is
//! asked for, a stored response, and why a request got none. A leaf of `providers/`: every
//! provider implements it.

use serde::{Deserialize, Serialize};

use crate::events::Format;
use crate::log::LogError;
use crate::providers::http::{Attempt, ChatRequest, Completion, ProviderError};
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

/// The wire protocol an agent's own request is written in (what an external agent's
/// gateway serves: `POST /v1/chat/completions`, `POST /v1/messages`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// OpenAI chat completions.
    Openai,
    /// Anthropic messages.
    Anthropic,
}

impl Protocol {
    /// As events record it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
        }
    }

    /// The gateway's path of a request in this protocol.
    pub fn path(self) -> &'static str {
        match self {
            Self::Openai => "/v1/chat/completions",
            Self::Anthropic => "/v1/messages",
        }
    }
}

/// Why a forwarded request got no answer, as the agent is told: the HTTP status to answer
/// with (the server's own refusal, 502 when every attempt failed, 501 when the model takes
/// no forwarded request, 500 when it is not set up) and what went wrong.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ForwardError {
    pub status: u16,
    pub message: String,
    /// The attempts made (empty when none was sent).
    pub attempts: Vec<Attempt>,
}

impl From<ProviderError> for ForwardError {
    fn from(e: ProviderError) -> Self {
        let status = match &e {
            ProviderError::Fatal { status, .. } => *status,
            ProviderError::Exhausted { .. } => 502,
            _ => 500,
        };
        Self {
            status,
            message: crate::error::chain(&e),
            attempts: e.attempts().to_vec(),
        }
    }
}

/// A provider that answers chat requests.
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// Answers `request`, asked for `sample`.
    async fn complete(&self, request: &ChatRequest, sample: &Sample<'_>) -> Result<Completion, RespondError>;

    /// Sends an agent's own request `body` (JSON in `protocol`'s shape, its `model` already
    /// the provider's model id) as it is; `tokens` is its estimate against the budget.
    /// Only the HTTP providers of the same protocol take one.
    async fn forward(
        &self,
        protocol: Protocol,
        _body: Vec<u8>,
        _tokens: u64,
    ) -> Result<Completion, ForwardError> {
        Err(ForwardError {
            status: 501,
            message: format!(
                "this model takes no {} requests: an external agent needs a model of provider `openai` or `anthropic` speaking its protocol",
                protocol.name()
            ),
            attempts: Vec::new(),
        })
    }

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
