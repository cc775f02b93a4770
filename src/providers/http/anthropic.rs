//! The Anthropic Messages protocol.
//!
//! `POST {endpoint}/v1/messages` (endpoint `https://api.anthropic.com`), headers
//! `x-api-key: <key>` and `anthropic-version: 2023-06-01`, body
//! `{model, max_tokens, system?, messages, temperature}`. The API takes the system prompt
//! apart from the turns, so `system` messages are joined (blank line between) into
//! `system` and left out of `messages`. It has no seed: `ChatRequest::seed` is not sent.
//! The answer is the concatenated `text` blocks of `content`; the counts are
//! `usage.input_tokens` and `usage.output_tokens`; `stop_reason` is the finish reason.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};

use super::transport::{Auth, Parsed, Transport};
use super::{ChatRequest, ClientConfig, Completion, Message, ProviderError};

const API_VERSION: &str = "2023-06-01";

/// A client of the Anthropic API.
#[derive(Debug)]
pub struct AnthropicClient {
    transport: Transport,
}

impl AnthropicClient {
    pub fn new(config: ClientConfig) -> Result<Self, ProviderError> {
        let transport = Transport::new(config, "v1/messages")?;
        Ok(Self { transport })
    }

    /// One completion, retried as `retry.rs` says.
    pub async fn complete(&self, req: &ChatRequest) -> Result<Completion, ProviderError> {
        let body = serde_json::to_vec(&Body::new(req)).expect("strings and numbers always serialise");
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        let auth = Auth {
            name: HeaderName::from_static("x-api-key"),
            prefix: "",
        };
        self.transport.complete(headers, auth, body, parse).await
    }
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<String>,
    messages: Vec<&'a Message>,
    temperature: f64,
}

impl<'a> Body<'a> {
    fn new(req: &'a ChatRequest) -> Self {
        let (system, turns): (Vec<&Message>, Vec<&Message>) =
            req.messages.iter().partition(|m| m.role == "system");
        let system = (!system.is_empty()).then(|| {
            let parts: Vec<&str> = system.iter().map(|m| m.content.as_str()).collect();
            parts.join("\n\n")
        });
        Self {
            model: &req.model,
            max_tokens: req.max_tokens,
            system,
            messages: turns,
            temperature: req.temperature,
        }
    }
}

#[derive(Deserialize)]
struct Response {
    content: Vec<Block>,
    stop_reason: Option<String>,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

fn parse(body: &[u8]) -> Result<Parsed, String> {
    let response: Response = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let text = response
        .content
        .into_iter()
        .filter(|b| b.kind == "text")
        .filter_map(|b| b.text)
        .collect();
    let input = response.usage.as_ref().and_then(|u| u.input_tokens);
    let output = response.usage.as_ref().and_then(|u| u.output_tokens);
    Ok(Parsed {
        text,
        input_tokens: input.unwrap_or(0),
        output_tokens: output.unwrap_or(0),
        finish_reason: response.stop_reason,
        usage_missing: input.is_none() || output.is_none(),
        tool_calls: Vec::new(),
    })
}
