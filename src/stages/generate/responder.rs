//! Who answers a request: an HTTP provider, or the recorded responses of another store.
//!
//! Every response is stored in this store as an object (JSON of `provider::Completion`:
//! text, usage, finish reason, raw body, every attempt) before the stage uses it.

use std::collections::HashMap;
use std::time::Duration;

use super::provider::{self, AnthropicClient, ChatRequest, ClientConfig, Completion, OpenAiClient};
use super::{Generation, StageError};
use crate::log::{EventBody, LogError, StageLog};
use crate::manifest::models::{Model, Provider};
use crate::store::{Hash, Store};

/// A stored response.
#[derive(Clone, Debug)]
pub struct Response {
    pub completion: Completion,
    /// The object holding `completion` as JSON.
    pub object: Hash,
}

/// The answering side of a model.
#[derive(Debug)]
pub enum Responder {
    /// `reference`: nothing is asked.
    None,
    OpenAi(OpenAiClient),
    Anthropic(AnthropicClient),
    Replay(Replay),
}

/// HTTP settings of the stage's clients.
pub fn client_config(model: &Model, timeout: Duration) -> ClientConfig {
    ClientConfig {
        endpoint: model.endpoint.clone(),
        api_key_env: (!model.api_key_env.is_empty()).then(|| model.api_key_env.clone()),
        timeout,
        max_attempts: 6,
        base_backoff: Duration::from_secs(1),
        max_backoff: Duration::from_secs(60),
        concurrency: 4,
    }
}

impl Responder {
    /// The responder of `model`.
    pub fn for_model(model: &Model, config: ClientConfig) -> Result<Self, StageError> {
        let err = |e: provider::ProviderError| {
            StageError::Other(format!("model `{}`: {}", model.name, crate::error_chain(&e)))
        };
        Ok(match model.provider {
            Provider::Reference => Self::None,
            Provider::Openai => Self::OpenAi(OpenAiClient::new(config).map_err(err)?),
            Provider::Anthropic => Self::Anthropic(AnthropicClient::new(config).map_err(err)?),
            Provider::Replay => Self::Replay(Replay::open(model)?),
        })
    }

    /// Asks for `request` and stores the response in `store`.
    pub async fn respond(
        &self,
        store: &Store,
        body: &Generation,
        request: &ChatRequest,
    ) -> Result<Response, StageError> {
        let failed = |e: provider::ProviderError| StageError::Unit {
            label: super::label(body),
            message: format!("{} ({} attempts)", crate::error_chain(&e), e.attempts().len()),
        };
        let completion = match self {
            Self::None => {
                return Err(StageError::Other(
                    "the reference provider answers no requests".into(),
                ));
            }
            Self::OpenAi(c) => c.complete(request).await.map_err(failed)?,
            Self::Anthropic(c) => c.complete(request).await.map_err(failed)?,
            Self::Replay(r) => r.completion(body)?,
        };
        let json = serde_json::to_vec(&completion).map_err(|e| StageError::Other(e.to_string()))?;
        let object = store.objects().put(&json).map_err(LogError::from)?;
        Ok(Response { completion, object })
    }
}

/// The generate events of another store, for one of its models.
#[derive(Debug)]
pub struct Replay {
    source: Store,
    by_unit: HashMap<(String, String, String, u32), Generation>,
}

impl Replay {
    /// Reads the generate log of `model.store` for the model named `model.model`.
    fn open(model: &Model) -> Result<Self, StageError> {
        let source = Store::open(&model.store);
        let events = StageLog::new(&source, Generation::STAGE)?.read_events::<Generation>(0)?;
        let by_unit = events
            .into_iter()
            .map(|e| e.body)
            .filter(|g| g.model == model.model && g.response_blake3.is_some())
            .map(|g| {
                (
                    (
                        g.competition.clone(),
                        g.language.clone(),
                        g.format.clone(),
                        g.seed,
                    ),
                    g,
                )
            })
            .collect();
        Ok(Self { source, by_unit })
    }

    fn completion(&self, body: &Generation) -> Result<Completion, StageError> {
        let unit = (
            body.competition.clone(),
            body.language.clone(),
            body.format.clone(),
            body.seed,
        );
        let missing = |why: String| StageError::Unit {
            label: super::label(body),
            message: why,
        };
        let recorded = self.by_unit.get(&unit).ok_or_else(|| {
            missing(format!(
                "the replayed store {} has no response for it",
                self.source.root().display()
            ))
        })?;
        if recorded.prompt_blake3 != body.prompt_blake3 {
            return Err(missing(
                "the recorded response answered a different prompt".into(),
            ));
        }
        let object: Hash = recorded
            .response_blake3
            .as_deref()
            .unwrap_or_default()
            .parse()
            .map_err(|_| missing("a recorded response hash is malformed".into()))?;
        let bytes = self.source.objects().get(&object).map_err(LogError::from)?;
        serde_json::from_slice(&bytes).map_err(|e| missing(format!("recorded response {object}: {e}")))
    }
}
