//! Who answers a request: an HTTP provider, an embedded model, or the recorded responses
//! of another store.
//!
//! Every response is stored in this store as an object (JSON of `provider::Completion`:
//! text, usage, finish reason, raw body, every attempt) before the stage uses it.

use std::collections::HashMap;
use std::time::Duration;

use super::local::{Finish, LocalModel, ModelCache, ModelSpec};
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
pub enum Responder {
    /// `reference`, `template`: nothing is asked.
    None,
    OpenAi(OpenAiClient),
    Anthropic(AnthropicClient),
    Replay(Replay),
    /// An embedded model (one generation at a time) and its GGUF's blake3.
    Local(std::sync::Arc<LocalModel>, String),
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
            Provider::Reference | Provider::Template => Self::None,
            Provider::Openai => Self::OpenAi(OpenAiClient::new(config).map_err(err)?),
            Provider::Anthropic => Self::Anthropic(AnthropicClient::new(config).map_err(err)?),
            Provider::Replay => Self::Replay(Replay::open(model)?),
            Provider::Local => {
                let (loaded, blake3) = load_local(model)?;
                Self::Local(std::sync::Arc::new(loaded), blake3)
            }
        })
    }

    /// What identifies the answering model beyond its manifest entry (a local model's
    /// weights), for the request cache's key.
    pub fn identity(&self) -> String {
        match self {
            Self::Local(_, blake3) => format!("gguf:{blake3}"),
            _ => String::new(),
        }
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
            Self::Local(m, _) => {
                local_completion(m.clone(), request.clone())
                    .await
                    .map_err(|e| StageError::Unit {
                        label: super::label(body),
                        message: e,
                    })?
            }
        };
        let json = serde_json::to_vec(&completion).map_err(|e| StageError::Other(e.to_string()))?;
        let object = store.objects().put(&json).map_err(LogError::from)?;
        Ok(Response { completion, object })
    }
}

/// Resolves (fetching the demo model on first use) and loads a `local` model.
fn load_local(model: &Model) -> Result<(LocalModel, String), StageError> {
    let spec = match model.model.as_str() {
        "" | "demo" => ModelSpec::Demo,
        path => ModelSpec::File(path.into()),
    };
    let err = |e: &(dyn std::error::Error + 'static)| {
        StageError::Other(format!("model `{}`: {}", model.name, crate::error_chain(e)))
    };
    let resolved = ModelCache::from_env().resolve(&spec).map_err(|e| err(&e))?;
    let loaded = LocalModel::load(&resolved.path).map_err(|e| err(&e))?;
    Ok((loaded, resolved.blake3))
}

/// One generation of the embedded model, on a blocking thread, as a `Completion`.
async fn local_completion(
    model: std::sync::Arc<LocalModel>,
    request: ChatRequest,
) -> Result<Completion, String> {
    let started = std::time::Instant::now();
    let done = tokio::task::spawn_blocking(move || {
        let messages: Vec<(&str, &str)> = request
            .messages
            .iter()
            .map(|m| (m.role.as_str(), m.content.as_str()))
            .collect();
        model.generate(&messages, request.max_tokens, request.seed)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| crate::error_chain(&e))?;
    let finish = match done.finish {
        Finish::EndOfText => "stop",
        Finish::MaxTokens => "length",
    };
    Ok(Completion {
        response_json: serde_json::json!({
            "text": done.text, "input_tokens": done.input_tokens,
            "output_tokens": done.output_tokens, "tokens_per_second": done.tokens_per_second,
            "finish": finish,
        })
        .to_string(),
        text: done.text,
        input_tokens: done.input_tokens,
        output_tokens: done.output_tokens,
        finish_reason: Some(finish.into()),
        usage_missing: false,
        attempts: vec![provider::Attempt {
            number: 1,
            duration_ms: started.elapsed().as_millis() as u64,
            status: None,
            error: None,
            retry_after_ms: None,
            backoff_ms: None,
        }],
    })
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
