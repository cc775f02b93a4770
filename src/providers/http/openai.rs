//! The OpenAI chat-completions protocol, which OpenAI, vLLM, Ollama, llama.cpp server and
//! OpenRouter all speak.
//!
//! `POST {endpoint}/chat/completions`, `Authorization: Bearer <key>` (no header without
//! `api_key_env`), a non-streaming JSON body
//! `{model, messages, temperature, max_tokens, seed?, stream: false}`; the answer is
//! `choices[0].message.content` (`null`, as for a refusal, reads as empty text), the counts
//! `usage.prompt_tokens` and `usage.completion_tokens`. `max_tokens` rather than
//! `max_completion_tokens`, because every compatible server accepts it.
//!
//! Tool calling: a request with tools sends them as `tools` (function specs); the answer's
//! `choices[0].message.tool_calls` become [`Completion::tool_calls`], their `arguments`
//! kept as the JSON text the model wrote (a server that sends an object instead has it
//! written back as text).

use std::sync::Arc;

use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde::{Deserialize, Serialize};

use super::transport::{Auth, Parsed, Transport};
use super::{ChatRequest, ClientConfig, Completion, FunctionCall, Message, ProviderError, ToolCall};
use crate::providers::budget::Budget;

/// A client of one OpenAI-compatible server.
#[derive(Debug)]
pub struct OpenAiClient {
    transport: Transport,
}

impl OpenAiClient {
    /// A client with a request budget of its own (`config.limits`).
    pub fn new(config: ClientConfig) -> Result<Self, ProviderError> {
        Self::with_budget(config, None)
    }

    /// A client drawing on `budget`, shared with the model's other clients (`None`: a
    /// budget of its own).
    pub fn with_budget(config: ClientConfig, budget: Option<Arc<Budget>>) -> Result<Self, ProviderError> {
        let transport = Transport::new(config, "chat/completions", budget)?;
        Ok(Self { transport })
    }

    /// The request budget this client draws on.
    pub fn budget(&self) -> &Arc<Budget> {
        self.transport.budget()
    }

    /// One completion, retried as `retry.rs` says.
    pub async fn complete(&self, req: &ChatRequest) -> Result<Completion, ProviderError> {
        let body = Body {
            model: &req.model,
            messages: &req.messages,
            temperature: req.temperature,
            max_tokens: req.max_tokens,
            seed: req.seed,
            stream: false,
            tools: &req.tools,
        };
        let body = serde_json::to_vec(&body).expect("strings and numbers always serialise");
        let auth = Auth {
            name: AUTHORIZATION,
            prefix: "Bearer ",
        };
        self.transport
            .complete(HeaderMap::new(), auth, body, parse, req.token_estimate())
            .await
    }

    /// An agent's own request body (JSON, its `model` already this client's model id),
    /// sent as it is, with the same key, retries and budget as [`Self::complete`]: what an
    /// external agent's gateway forwards. `tokens` is its estimate against the budget.
    pub async fn forward(&self, body: Vec<u8>, tokens: u64) -> Result<Completion, ProviderError> {
        let auth = Auth {
            name: AUTHORIZATION,
            prefix: "Bearer ",
        };
        self.transport
            .complete(HeaderMap::new(), auth, body, parse, tokens)
            .await
    }
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: &'a [Message],
    temperature: f64,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    stream: bool,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: &'a [serde_json::Value],
}

#[derive(Deserialize)]
struct Response {
    choices: Vec<Choice>,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: serde_json::Value,
}

impl WireToolCall {
    /// The call in the recorded shape; a missing id is named by its position.
    fn into_call(self, index: usize) -> ToolCall {
        let arguments = match self.function.arguments {
            serde_json::Value::String(s) => s,
            serde_json::Value::Null => String::new(),
            v => v.to_string(),
        };
        ToolCall {
            id: self.id.unwrap_or_else(|| format!("call_{index}")),
            kind: "function".into(),
            function: FunctionCall {
                name: self.function.name,
                arguments,
            },
        }
    }
}

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

fn parse(body: &[u8]) -> Result<Parsed, String> {
    let response: Response = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let usage = response.usage;
    let choice = response.choices.into_iter().next().ok_or("no choices")?;
    let input = usage.as_ref().and_then(|u| u.prompt_tokens);
    let output = usage.as_ref().and_then(|u| u.completion_tokens);
    let calls = choice.message.tool_calls.unwrap_or_default();
    Ok(Parsed {
        tool_calls: calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| c.into_call(i))
            .collect(),
        text: choice.message.content.unwrap_or_default(),
        input_tokens: input.unwrap_or(0),
        output_tokens: output.unwrap_or(0),
        finish_reason: choice.finish_reason,
        usage_missing: input.is_none() || output.is_none(),
    })
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn parses_content_usage_and_finish_reason() {
        let body = br#"{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#;
        let p = parse(body).unwrap();
        assert_eq!((p.text.as_str(), p.input_tokens, p.output_tokens), ("hi", 3, 1));
        assert_eq!(p.finish_reason.as_deref(), Some("stop"));
        assert!(!p.usage_missing);
    }

    #[test]
    fn null_content_is_empty_and_no_choices_is_malformed() {
        let p = parse(br#"{"choices":[{"message":{"content":null}}]}"#).unwrap();
        assert_eq!((p.text.as_str(), p.usage_missing), ("", true));
        assert_eq!(parse(br#"{"choices":[]}"#).err().unwrap(), "no choices");
        assert!(parse(b"{\"choices\": [").is_err());
    }

    #[test]
    fn tool_calls_keep_their_arguments_as_text() {
        let body = br#"{"choices":[{"message":{"content":null,"tool_calls":[
            {"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"a.py\"}"}},
            {"type":"function","function":{"name":"list_files","arguments":{"path":"/data"}}}]},
            "finish_reason":"tool_calls"}]}"#;
        let p = parse(body).unwrap();
        assert_eq!(p.tool_calls.len(), 2);
        assert_eq!(p.tool_calls[0].id, "c1");
        assert_eq!(p.tool_calls[0].function.arguments, r#"{"path": "a.py"}"#);
        assert_eq!(p.tool_calls[1].id, "call_1");
        assert_eq!(p.tool_calls[1].function.arguments, r#"{"path":"/data"}"#);
    }
}
