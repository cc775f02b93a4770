//! What the HTTP clients speak: a chat request and its messages (tool calls included), a
//! client's settings, the record of one attempt, a completion, its cost, and the size caps
//! of a body. A leaf of `providers/http/`: both protocols and the transport read it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One message of a chat.
///
/// The tool-calling fields are left out of the JSON when empty, so a request without
/// tools serializes (and is keyed in the request cache) as it did before they existed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user`, `assistant`, or `tool` (the answer to a tool call).
    pub role: String,
    pub content: String,
    /// An assistant message's tool calls (OpenAI tool calling).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// A `tool` message: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A plain text message.
    pub fn text(role: &str, content: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// One tool call of an assistant message, in the OpenAI wire shape
/// (`{"id", "type": "function", "function": {"name", "arguments"}}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    pub function: FunctionCall,
}

/// The function a tool call names, and its arguments as the model wrote them (JSON text).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    pub arguments: String,
}

fn function_kind() -> String {
    "function".into()
}

/// One chat-completion request, provider-neutral.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The provider's model id (`Model::model` of the manifest).
    pub model: String,
    pub messages: Vec<Message>,
    pub temperature: f64,
    /// Sent to OpenAI-compatible servers; the Anthropic API has no seed and ignores it.
    pub seed: Option<u64>,
    pub max_tokens: u32,
    /// The tools offered, in the shape of the API they are sent to (OpenAI function specs,
    /// Anthropic `{name, description, input_schema}`); left out when none, so a request
    /// without tools keeps its cache key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<serde_json::Value>,
}

impl ChatRequest {
    /// What the request counts against a tokens-per-minute limit before its answer says:
    /// its messages' characters / 4 (rounded up) plus `max_tokens`, as providers reserve.
    pub fn token_estimate(&self) -> u64 {
        let chars: usize = self.messages.iter().map(|m| m.content.chars().count()).sum();
        (chars as u64).div_ceil(4) + u64::from(self.max_tokens)
    }
}

/// The default cap on a response body, in bytes: 8 MiB, some 2,000 times a 4,096-token
/// answer.
pub const MAX_RESPONSE_BYTES: u64 = 8 << 20;

/// How much of an error body is read (its excerpt is 500 characters).
pub const ERROR_BODY_BYTES: u64 = 64 << 10;

/// How a client reaches its server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    /// Base URL: `https://api.openai.com/v1`, `https://api.anthropic.com`, …
    pub endpoint: String,
    /// The environment variable holding the key; `None` sends no authentication (a local
    /// server). Only the variable's name is kept, so `Debug` cannot show the key.
    pub api_key_env: Option<String>,
    /// Limit for one attempt, from connecting to the last byte of the body.
    pub timeout: Duration,
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The backoff before attempt k+2 is drawn from `0..=min(max_backoff, base_backoff·2^k)`.
    pub base_backoff: Duration,
    pub max_backoff: Duration,
    /// The model's request limits, for a client with a budget of its own.
    pub limits: crate::providers::budget::RequestLimits,
    /// The most bytes of a response body read (at least 1).
    pub max_response_bytes: u64,
}

/// One HTTP attempt, as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// 1 for the first attempt.
    pub number: u32,
    /// From sending the request to the end of the body (waiting for a permit excluded).
    pub duration_ms: u64,
    /// The HTTP status, if a response head arrived.
    pub status: Option<u16>,
    /// `kind: message` for a failed attempt (`timeout`, `connect`, `body`, `request`,
    /// `status 503`, `malformed`); `None` for the successful one.
    pub error: Option<String>,
    /// The server's `Retry-After`, as it asked (before [`RETRY_AFTER_CAP`]).
    pub retry_after_ms: Option<u64>,
    /// How long the client waited before the next attempt; `None` when there was none.
    pub backoff_ms: Option<u64>,
}

/// A successful completion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    pub text: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// `finish_reason` (OpenAI) or `stop_reason` (Anthropic).
    pub finish_reason: Option<String>,
    /// The response carried no usage; both token counts are then 0.
    pub usage_missing: bool,
    /// The raw body of the successful response.
    pub response_json: String,
    /// The tool calls the answer made (OpenAI tool calling); left out when none, so the
    /// responses recorded before tools existed read back unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Every attempt, in order; the last one succeeded.
    pub attempts: Vec<Attempt>,
    /// The answer's body passed this many bytes, the model's cap, and was read no further:
    /// `text` is empty, the usage unknown. Left out when not, so the responses recorded
    /// before the cap read back unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub too_large: Option<u64>,
}

/// The price of a completion in US dollars, from per-million-token prices.
pub fn cost_usd(
    input_tokens: u64,
    output_tokens: u64,
    usd_per_mtok_input: f64,
    usd_per_mtok_output: f64,
) -> f64 {
    (input_tokens as f64 * usd_per_mtok_input + output_tokens as f64 * usd_per_mtok_output) / 1e6
}
