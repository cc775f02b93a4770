//! The embedded model as a [`ChatModel`]: one generation at a time on a blocking thread,
//! recorded as a [`Completion`] with one attempt, like an HTTP answer.

use std::sync::Arc;

use super::{Finish, LocalModel, ModelCache, ModelSpec};
use crate::manifest::models::Model;
use crate::providers::{Attempt, ChatModel, ChatRequest, Completion, RespondError, Sample};

/// A loaded `local` model and its GGUF's blake3.
pub struct Embedded {
    model: Arc<LocalModel>,
    blake3: String,
}

impl Embedded {
    /// Resolves (fetching the demo model on first use) and loads a `local` model.
    pub fn load(model: &Model) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        let spec = match model.model.as_str() {
            "" | "demo" => ModelSpec::Demo,
            path => ModelSpec::File(path.into()),
        };
        let resolved = ModelCache::from_env().resolve(&spec)?;
        let loaded = LocalModel::load(&resolved.path)?;
        Ok(Self {
            model: Arc::new(loaded),
            blake3: resolved.blake3,
        })
    }
}

#[async_trait::async_trait]
impl ChatModel for Embedded {
    async fn complete(&self, request: &ChatRequest, _: &Sample<'_>) -> Result<Completion, RespondError> {
        generate(self.model.clone(), request.clone())
            .await
            .map_err(RespondError::Unanswered)
    }

    fn identity(&self) -> String {
        format!("gguf:{}", self.blake3)
    }
}

/// One generation, on a blocking thread, as a `Completion`.
async fn generate(model: Arc<LocalModel>, request: ChatRequest) -> Result<Completion, String> {
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
    .map_err(|e| crate::error::chain(&e))?;
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
        tool_calls: Vec::new(),
        // Bounded by the context: prompt and `max_tokens` tokens, far below any cap.
        too_large: None,
        attempts: vec![Attempt {
            number: 1,
            duration_ms: started.elapsed().as_millis() as u64,
            status: None,
            error: None,
            retry_after_ms: None,
            backoff_ms: None,
        }],
    })
}
