//! The model providers: who answers a chat request, and the record of the answer.
//!
//! ```text
//! manifests/models.toml provider   answered by
//! openai, anthropic                [`http`]: the HTTP chat APIs, retries, every attempt recorded
//! local                            [`local`]: an embedded llama.cpp model, seeded sampling
//! replay                           [`replay`]: the responses another store recorded
//! reference, template              nothing is asked: the reference solution, or a rendering
//!                                  of a template ([`template`], the AutoGluon baseline)
//! ```
//! Every provider that answers requests is a [`ChatModel`]: a [`ChatRequest`] and the
//! [`Sample`] it is for in, a [`Completion`] out. [`Responder`] stores each completion as
//! an object (JSON: text, usage, finish reason, raw body, every attempt) before anything
//! uses it, so a recorded response is one hash. Providers know nothing of the generate
//! stage: they read no stage type, only the events of a store they replay.

pub mod budget;
pub mod http;
pub mod local;
mod model;
pub mod replay;
pub mod template;

use std::sync::Arc;
use std::time::Duration;

pub use http::{Attempt, ChatRequest, ClientConfig, Completion, Message, ProviderError, cost_usd};

pub use model::{ChatModel, ForwardError, Protocol, RespondError, Response, Sample};

use budget::{Budget, RequestLimits};

use crate::events::Provider;
use crate::log::LogError;
use crate::manifest::models::Model;
use crate::store::Store;

/// The answering side of a model (none for `reference` and `template`), and the model's
/// request budget: HTTP clients take a permit per attempt, the others one per answer.
#[derive(Clone)]
pub struct Responder {
    chat: Option<Arc<dyn ChatModel>>,
    budget: Arc<Budget>,
    /// The HTTP clients take their permits per attempt themselves.
    per_attempt: bool,
}

/// HTTP settings of a model's client, with the model's request limits.
pub fn client_config(model: &Model, timeout: Duration, limits: RequestLimits) -> ClientConfig {
    ClientConfig {
        endpoint: model.endpoint.clone(),
        api_key_env: (!model.api_key_env.is_empty()).then(|| model.api_key_env.clone()),
        timeout,
        max_attempts: 6,
        base_backoff: Duration::from_secs(1),
        max_backoff: Duration::from_secs(60),
        limits,
        max_response_bytes: model.max_response_bytes.unwrap_or(http::MAX_RESPONSE_BYTES),
    }
}

impl Responder {
    /// The responder of `model`, drawing on `budget` (the model's, shared in the process).
    pub fn for_model(model: &Model, config: ClientConfig, budget: Arc<Budget>) -> Result<Self, RespondError> {
        let setup = |e: &(dyn std::error::Error + 'static)| RespondError::Setup {
            model: model.name.clone(),
            reason: crate::error::chain(e),
        };
        let shared = Some(budget.clone());
        let chat: Option<Arc<dyn ChatModel>> = match model.provider {
            Provider::Reference | Provider::Template => None,
            Provider::Openai => Some(Arc::new(
                http::OpenAiClient::with_budget(config, shared).map_err(|e| setup(&e))?,
            )),
            Provider::Anthropic => Some(Arc::new(
                http::AnthropicClient::with_budget(config, shared).map_err(|e| setup(&e))?,
            )),
            Provider::Replay => Some(Arc::new(replay::Replay::open(model)?)),
            Provider::Local => Some(Arc::new(local::Embedded::load(model).map_err(|e| setup(&*e))?)),
        };
        Ok(Self {
            chat,
            budget,
            per_attempt: model.provider.is_http(),
        })
    }

    /// See [`ChatModel::identity`].
    pub fn identity(&self) -> String {
        self.chat.as_ref().map(|c| c.identity()).unwrap_or_default()
    }

    /// The model's request budget.
    pub fn budget(&self) -> &Arc<Budget> {
        &self.budget
    }

    /// Forwards an agent's own request `body` (see [`ChatModel::forward`]) and stores the
    /// response in `store`.
    pub async fn forward(
        &self,
        store: &Store,
        protocol: Protocol,
        body: Vec<u8>,
        tokens: u64,
    ) -> Result<Response, ForwardError> {
        let not_set_up = |message: String| ForwardError {
            status: 500,
            message,
            attempts: Vec::new(),
        };
        let chat = self
            .chat
            .as_ref()
            .ok_or_else(|| not_set_up(RespondError::NoRequests.to_string()))?;
        let completion = chat.forward(protocol, body, tokens).await?;
        let json = serde_json::to_vec(&completion).map_err(|e| not_set_up(e.to_string()))?;
        let store = store.clone();
        let object = tokio::task::spawn_blocking(move || store.objects().put(&json))
            .await
            .map_err(|e| not_set_up(e.to_string()))?
            .map_err(|e| not_set_up(format!("storing the response: {}", crate::error::chain(&e))))?;
        Ok(Response { completion, object })
    }

    /// Asks for `request` and stores the response in `store`.
    pub async fn respond(
        &self,
        store: &Store,
        sample: &Sample<'_>,
        request: &ChatRequest,
    ) -> Result<Response, RespondError> {
        let chat = self.chat.as_ref().ok_or(RespondError::NoRequests)?;
        let completion = if !self.per_attempt {
            let permit = self.budget.acquire(request.token_estimate()).await;
            let answer = chat.complete(request, sample).await;
            if let Ok(c) = &answer {
                permit.answered((!c.usage_missing).then_some(c.input_tokens + c.output_tokens));
            }
            answer?
        } else {
            chat.complete(request, sample).await?
        };
        let json = serde_json::to_vec(&completion).map_err(LogError::Json)?;
        // The put syncs to disk: off the async workers, which serve the requests in flight.
        let store = store.clone();
        let object = tokio::task::spawn_blocking(move || store.objects().put(&json))
            .await
            .map_err(RespondError::Panicked)??;
        Ok(Response { completion, object })
    }
}

#[async_trait::async_trait]
impl ChatModel for http::OpenAiClient {
    async fn complete(&self, request: &ChatRequest, _: &Sample<'_>) -> Result<Completion, RespondError> {
        http::OpenAiClient::complete(self, request)
            .await
            .map_err(unanswered)
    }

    async fn forward(
        &self,
        protocol: Protocol,
        body: Vec<u8>,
        tokens: u64,
    ) -> Result<Completion, ForwardError> {
        speaks(Protocol::Openai, protocol)?;
        Ok(http::OpenAiClient::forward(self, body, tokens).await?)
    }
}

#[async_trait::async_trait]
impl ChatModel for http::AnthropicClient {
    async fn complete(&self, request: &ChatRequest, _: &Sample<'_>) -> Result<Completion, RespondError> {
        http::AnthropicClient::complete(self, request)
            .await
            .map_err(unanswered)
    }

    async fn forward(
        &self,
        protocol: Protocol,
        body: Vec<u8>,
        tokens: u64,
    ) -> Result<Completion, ForwardError> {
        speaks(Protocol::Anthropic, protocol)?;
        Ok(http::AnthropicClient::forward(self, body, tokens).await?)
    }
}

/// A forwarded request must be in the protocol the model speaks: ml2b forwards an agent's
/// request as it was written, never translated.
fn speaks(model: Protocol, asked: Protocol) -> Result<(), ForwardError> {
    if model == asked {
        return Ok(());
    }
    Err(ForwardError {
        status: 400,
        message: format!(
            "this unit's model speaks the {} protocol, not {}: send the request to {}",
            model.name(),
            asked.name(),
            model.path()
        ),
        attempts: Vec::new(),
    })
}

/// An HTTP failure as the unit records it: the cause chain and how many attempts it took.
fn unanswered(e: ProviderError) -> RespondError {
    RespondError::Unanswered(format!(
        "{} ({} attempts)",
        crate::error::chain(&e),
        e.attempts().len()
    ))
}
