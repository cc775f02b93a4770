//! The Anthropic Messages protocol.
//!
//! `POST {endpoint}/v1/messages` (endpoint `https://api.anthropic.com`), headers
//! `x-api-key: <key>` and `anthropic-version: 2023-06-01`, body
//! `{model, max_tokens, system?, messages, temperature}`. The API takes the system prompt
//! apart from the turns, so `system` messages are joined (blank line between) into
//! `system` and left out of `messages`. It has no seed: `ChatRequest::seed` is not sent.
//! The answer is the concatenated `text` blocks of `content`; the counts are
//! `usage.input_tokens` and `usage.output_tokens`; `stop_reason` is the finish reason.
//!
//! Tool use: a request with tools sends them as `tools` (the react agent's Anthropic
//! protocol makes them `{name, description, input_schema}`). The provider-neutral history
//! is written in the API's content blocks:
//!
//! ```text
//! assistant {content, tool_calls}  ->  assistant [text?, tool_use {id, name, input}…]
//! tool {tool_call_id, content}…    ->  user [tool_result {tool_use_id, content}…]
//!                                      (the results of one turn in one user message)
//! ```
//! and an answer's `tool_use` blocks become [`Completion::tool_calls`], their `input`
//! written as JSON text.

use std::sync::Arc;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::transport::{Auth, Parsed, Transport};
use super::{ChatRequest, ClientConfig, Completion, FunctionCall, Message, ProviderError, ToolCall};
use crate::providers::budget::Budget;

const API_VERSION: &str = "2023-06-01";

/// A client of the Anthropic API.
#[derive(Debug)]
pub struct AnthropicClient {
    transport: Transport,
}

impl AnthropicClient {
    /// A client with a request budget of its own (`config.limits`).
    pub fn new(config: ClientConfig) -> Result<Self, ProviderError> {
        Self::with_budget(config, None)
    }

    /// A client drawing on `budget`, shared with the model's other clients (`None`: a
    /// budget of its own).
    pub fn with_budget(config: ClientConfig, budget: Option<Arc<Budget>>) -> Result<Self, ProviderError> {
        let transport = Transport::new(config, "v1/messages", budget)?;
        Ok(Self { transport })
    }

    /// The request budget this client draws on.
    pub fn budget(&self) -> &Arc<Budget> {
        self.transport.budget()
    }

    /// One completion, retried as `retry.rs` says.
    pub async fn complete(&self, req: &ChatRequest) -> Result<Completion, ProviderError> {
        let body = serde_json::to_vec(&Body::new(req)).expect("strings and numbers always serialise");
        self.send(body, req.token_estimate()).await
    }

    /// An agent's own request body (JSON, its `model` already this client's model id),
    /// sent as it is, with the same key, version header, retries and budget as
    /// [`Self::complete`]: what an external agent's gateway forwards.
    pub async fn forward(&self, body: Vec<u8>, tokens: u64) -> Result<Completion, ProviderError> {
        self.send(body, tokens).await
    }

    async fn send(&self, body: Vec<u8>, tokens: u64) -> Result<Completion, ProviderError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        let auth = Auth {
            name: HeaderName::from_static("x-api-key"),
            prefix: "",
        };
        self.transport.complete(headers, auth, body, parse, tokens).await
    }
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<String>,
    messages: Vec<Value>,
    temperature: f64,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: &'a [Value],
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
            messages: wire_turns(&turns),
            temperature: req.temperature,
            tools: &req.tools,
        }
    }
}

/// The turns in the API's shape: a text message as it is, an assistant message with tool
/// calls as content blocks, and the `tool` messages after it as one user message of
/// `tool_result` blocks.
fn wire_turns(messages: &[&Message]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for m in messages {
        match m.role.as_str() {
            "tool" => push_result(&mut out, m),
            "assistant" if !m.tool_calls.is_empty() => out.push(tool_use(m)),
            _ => out.push(json!({"role": m.role, "content": m.content})),
        }
    }
    out
}

/// An assistant message with its calls as `tool_use` blocks (an input that is not a JSON
/// object, which the API would refuse, is sent as `{}`).
fn tool_use(m: &Message) -> Value {
    let mut blocks = Vec::new();
    if !m.content.is_empty() {
        blocks.push(json!({"type": "text", "text": m.content}));
    }
    for call in &m.tool_calls {
        let input = serde_json::from_str::<Value>(&call.function.arguments)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        blocks.push(json!({
            "type": "tool_use", "id": call.id, "name": call.function.name, "input": input,
        }));
    }
    json!({"role": "assistant", "content": blocks})
}

/// Adds a tool's answer to the user message of results that follows its call.
fn push_result(out: &mut Vec<Value>, m: &Message) {
    let block = json!({"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content});
    match out.last_mut() {
        Some(last) if last["role"] == "user" && last["content"].is_array() => {
            if let Some(blocks) = last["content"].as_array_mut() {
                blocks.push(block);
            }
        }
        _ => out.push(json!({"role": "user", "content": [block]})),
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
    id: Option<String>,
    name: Option<String>,
    input: Option<Value>,
}

impl Block {
    /// A `tool_use` block as a call; a missing id is named by its position.
    fn into_call(self, index: usize) -> ToolCall {
        ToolCall {
            id: self.id.unwrap_or_else(|| format!("toolu_{index}")),
            kind: "function".into(),
            function: FunctionCall {
                name: self.name.unwrap_or_default(),
                arguments: self.input.map(|v| v.to_string()).unwrap_or_default(),
            },
        }
    }
}

#[derive(Deserialize)]
struct Usage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

fn parse(body: &[u8]) -> Result<Parsed, String> {
    let response: Response = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let (uses, others): (Vec<Block>, Vec<Block>) =
        response.content.into_iter().partition(|b| b.kind == "tool_use");
    let text = others
        .into_iter()
        .filter(|b| b.kind == "text")
        .filter_map(|b| b.text)
        .collect();
    let tool_calls = uses
        .into_iter()
        .enumerate()
        .map(|(i, b)| b.into_call(i))
        .collect();
    let input = response.usage.as_ref().and_then(|u| u.input_tokens);
    let output = response.usage.as_ref().and_then(|u| u.output_tokens);
    Ok(Parsed {
        text,
        input_tokens: input.unwrap_or(0),
        output_tokens: output.unwrap_or(0),
        finish_reason: response.stop_reason,
        usage_missing: input.is_none() || output.is_none(),
        tool_calls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_use_blocks_become_calls_and_the_text_is_kept() {
        let body = br#"{"content":[{"type":"text","text":"Look first."},
            {"type":"tool_use","id":"toolu_a","name":"list_files","input":{"path":"/data"}}],
            "stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":2}}"#;
        let p = parse(body).unwrap();
        assert_eq!(p.text, "Look first.");
        assert_eq!(p.finish_reason.as_deref(), Some("tool_use"));
        assert_eq!(p.tool_calls.len(), 1);
        assert_eq!(p.tool_calls[0].id, "toolu_a");
        assert_eq!(p.tool_calls[0].function.name, "list_files");
        assert_eq!(p.tool_calls[0].function.arguments, r#"{"path":"/data"}"#);
    }

    #[test]
    fn the_history_is_written_in_content_blocks() {
        let call = |id: &str, args: &str| ToolCall {
            id: id.into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "read_file".into(),
                arguments: args.into(),
            },
        };
        let assistant = Message {
            role: "assistant".into(),
            content: "Reading.".into(),
            tool_calls: vec![call("t1", r#"{"path":"a"}"#), call("t2", "not json")],
            tool_call_id: None,
        };
        let result = |id: &str, text: &str| Message {
            role: "tool".into(),
            content: text.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(id.into()),
        };
        let user = Message::text("user", "task");
        let (r1, r2) = (result("t1", "one"), result("t2", "Error: two"));
        let wire = wire_turns(&[&user, &assistant, &r1, &r2]);
        assert_eq!(
            Value::Array(wire),
            json!([
                {"role": "user", "content": "task"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
                    {"type": "tool_use", "id": "t2", "name": "read_file", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "Error: two"},
                ]},
            ])
        );
    }
}
