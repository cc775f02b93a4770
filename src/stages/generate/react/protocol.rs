//! How the react agent's tools reach a model and its calls come back: OpenAI tool calling,
//! Anthropic tool use, or a text protocol for endpoints without tool support.
//!
//! ```text
//! openai     request: tools = [function specs]           answer: message.tool_calls
//!            history: assistant {content, tool_calls} then one `tool` message per call
//!            (its tool_call_id); the first call is run, the others are answered with an
//!            error
//! anthropic  request: tools = [{name, description, input_schema}]
//!            answer: `tool_use` blocks, which the Anthropic client reads as tool calls;
//!            history as openai's, which the client writes as `tool_use` / `tool_result`
//!            blocks (`providers::http::anthropic`)
//! text     the instructions describe the tools and the format (keywords in English in
//!          every language); the answer is parsed:
//!              Thought: …
//!              Action: <tool>
//!              Action Input: {json arguments}
//!          history: the assistant's text (cut before any `Observation:` it wrote itself),
//!          then a user message `Observation: <what the tool returned>`
//! ```
//! A turn without a call is answered with an error observation asking for one.

use serde_json::{Value, json};

use super::instructions::Instructions;
use super::tools::{Observation, TOOLS};
use crate::manifest::models::ToolProtocol;
use crate::providers::{Completion, Message};

/// A call as the model made it: the tool's name and its arguments' JSON text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Made {
    pub tool: String,
    pub arguments: String,
    /// The OpenAI call id (none in the text protocol).
    pub id: Option<String>,
}

/// What the model's turn asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    /// The assistant message as it goes into the history.
    pub message: Message,
    /// The call to run, or why there is none.
    pub call: Result<Made, String>,
    /// Further calls of the turn (OpenAI): answered with an error, not run.
    pub extra: Vec<Made>,
}

/// The protocol's name in events.
pub fn name(p: ToolProtocol) -> &'static str {
    match p {
        ToolProtocol::Openai => "openai",
        ToolProtocol::Anthropic => "anthropic",
        ToolProtocol::Text => "text",
    }
}

/// The `tools` a request carries.
pub fn tools(p: ToolProtocol) -> Vec<Value> {
    match p {
        ToolProtocol::Openai => specs()
            .into_iter()
            .map(|(name, description, parameters)| {
                json!({"type": "function", "function": {
                    "name": name, "description": description, "parameters": parameters,
                }})
            })
            .collect(),
        ToolProtocol::Anthropic => specs()
            .into_iter()
            .map(|(name, description, parameters)| {
                json!({"name": name, "description": description, "input_schema": parameters})
            })
            .collect(),
        ToolProtocol::Text => Vec::new(),
    }
}

/// The protocol's part of the instructions, in the language of `i`. The text protocol's
/// keywords and the tools' names and descriptions stay English (see `instructions`).
pub fn instructions(p: ToolProtocol, i: &Instructions) -> String {
    match p {
        ToolProtocol::Openai | ToolProtocol::Anthropic => format!("\n{}\n", i.function_calling),
        ToolProtocol::Text => {
            let mut text = format!("\n{}\n\n", i.text_format);
            for (name, description, parameters) in specs() {
                let args: Vec<String> = parameters["properties"]
                    .as_object()
                    .map(|p| p.keys().map(|k| format!("\"{k}\"")).collect())
                    .unwrap_or_default();
                text.push_str(&format!("- {name} {{{}}}: {description}\n", args.join(", ")));
            }
            text
        }
    }
}

/// (name, description, JSON schema of the arguments) of every tool, in [`TOOLS`] order.
fn specs() -> Vec<(&'static str, &'static str, Value)> {
    let path = json!({"type": "string", "description": "/data/<file> or a workspace path"});
    let descriptions = [
        "List a folder: /data (the public files) or a workspace folder (default: the workspace).",
        "Read lines start_line..end_line (1-based, inclusive) of a file of /data or the workspace.",
        "Write a text file in the workspace (replacing it).",
        "Run a workspace script (path) or Python code (code) in the sandbox with /data mounted; \
         returns the exit status and the end of stdout and stderr.",
        "Check a solution file and run it on a validation split of the training rows; returns \
         the static findings, the run's outcome and the validation score.",
        "Submit a workspace file as the solution. This ends the work.",
    ];
    let parameters = [
        json!({"type": "object", "properties": {"path": path}}),
        json!({"type": "object", "properties": {"path": path,
            "start_line": {"type": "integer"}, "end_line": {"type": "integer"}}, "required": ["path"]}),
        json!({"type": "object", "properties": {"path": path, "content": {"type": "string"}},
            "required": ["path", "content"]}),
        json!({"type": "object", "properties": {"path": path, "code": {"type": "string"},
            "timeout": {"type": "integer", "description": "seconds"}}}),
        json!({"type": "object", "properties": {"path": path}, "required": ["path"]}),
        json!({"type": "object", "properties": {"path": path}, "required": ["path"]}),
    ];
    TOOLS
        .into_iter()
        .zip(descriptions)
        .zip(parameters)
        .map(|((n, d), p)| (n, d, p))
        .collect()
}

/// Reads the model's turn.
pub fn turn(p: ToolProtocol, completion: &Completion) -> Turn {
    match p {
        ToolProtocol::Openai | ToolProtocol::Anthropic => openai_turn(completion),
        ToolProtocol::Text => text_turn(&completion.text),
    }
}

fn openai_turn(c: &Completion) -> Turn {
    let mut calls = c.tool_calls.iter().map(|t| Made {
        tool: t.function.name.clone(),
        arguments: t.function.arguments.clone(),
        id: Some(t.id.clone()),
    });
    let call = calls
        .next()
        .ok_or_else(|| "no tool was called: call one of the tools".to_string());
    Turn {
        message: Message {
            role: "assistant".into(),
            content: c.text.clone(),
            tool_calls: c.tool_calls.clone(),
            tool_call_id: None,
        },
        call,
        extra: calls.collect(),
    }
}

fn text_turn(text: &str) -> Turn {
    // What the model wrote after an `Observation:` of its own is not part of the turn.
    let kept = match text.find("\nObservation:") {
        Some(i) => &text[..i],
        None => text,
    };
    Turn {
        message: Message::text("assistant", kept.trim_end()),
        call: parse_action(kept),
        extra: Vec::new(),
    }
}

/// The first `Action:` of `text` and the `Action Input:` after it.
pub fn parse_action(text: &str) -> Result<Made, String> {
    let missing = "no action found: answer with Thought, then `Action: <tool>` and \
                   `Action Input: {json}` on their own lines";
    let at = line_start(text, "Action:").ok_or(missing)?;
    let rest = &text[at + "Action:".len()..];
    let (tool, after) = rest.split_once('\n').unwrap_or((rest, ""));
    let tool = tool
        .trim()
        .trim_matches(|c| c == '`' || c == '"' || c == '\'')
        .trim();
    let arguments = match line_start(after, "Action Input:") {
        Some(i) => first_json(&strip_fence(after[i + "Action Input:".len()..].trim())),
        None => String::new(),
    };
    Ok(Made {
        tool: tool.to_string(),
        arguments,
        id: None,
    })
}

/// The byte offset of the first line of `text` that starts with `prefix` (after spaces).
fn line_start(text: &str, prefix: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        if line.trim_start().starts_with(prefix) {
            return Some(offset + indent);
        }
        offset += line.len();
    }
    None
}

/// The first JSON value of `text` as written, without what follows it (a model's own
/// commentary); all of `text` when it does not begin with JSON.
fn first_json(text: &str) -> String {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(_)) => text[..values.byte_offset()].to_string(),
        _ => text.to_string(),
    }
}

/// `text` without a surrounding code fence (```json … ```).
fn strip_fence(text: &str) -> String {
    let Some(inner) = text.strip_prefix("```") else {
        return text.to_string();
    };
    let inner = inner.split_once('\n').map_or("", |(_, body)| body);
    inner.trim_end().trim_end_matches("```").trim().to_string()
}

/// The messages that answer a turn: its observation, and errors for the calls not run.
pub fn answers(p: ToolProtocol, turn: &Turn, observation: &Observation) -> Vec<Message> {
    match p {
        ToolProtocol::Text => vec![Message::text(
            "user",
            format!("Observation: {}", observation.shown()),
        )],
        ToolProtocol::Openai | ToolProtocol::Anthropic => {
            let Ok(made) = &turn.call else {
                return vec![Message::text("user", observation.shown())];
            };
            let mut out = vec![tool_message(made, observation.shown())];
            let skipped = Observation::error("one tool call per step: this call was not run");
            out.extend(turn.extra.iter().map(|m| tool_message(m, skipped.shown())));
            out
        }
    }
}

fn tool_message(made: &Made, content: String) -> Message {
    Message {
        role: "tool".into(),
        content,
        tool_calls: Vec::new(),
        tool_call_id: made.id.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_protocol_reads_the_first_action_and_its_input() {
        let reply = "Thought: look at the data\nAction: read_file\nAction Input: {\"path\": \"/data/train.csv\", \"end_line\": 3}\nObservation: made up\nAction: submit\n";
        let t = text_turn(reply);
        assert_eq!(
            t.call,
            Ok(Made {
                tool: "read_file".into(),
                arguments: r#"{"path": "/data/train.csv", "end_line": 3}"#.into(),
                id: None
            })
        );
        assert!(
            !t.message.content.contains("made up"),
            "its own observation is cut"
        );
        let fenced = "Action: `validate`\nAction Input:\n```json\n{\"path\": \"s.py\"}\n```\n";
        let m = parse_action(fenced).unwrap();
        assert_eq!(
            (m.tool.as_str(), m.arguments.as_str()),
            ("validate", r#"{"path": "s.py"}"#)
        );
        assert!(
            parse_action("I think I am done.")
                .unwrap_err()
                .contains("no action")
        );
        let chatty = "Action: submit\nAction Input: {\"path\": \"s.py\"} and that is all.\n";
        assert_eq!(parse_action(chatty).unwrap().arguments, r#"{"path": "s.py"}"#);
    }

    #[test]
    fn openai_specs_name_every_tool() {
        let specs = tools(ToolProtocol::Openai);
        let names: Vec<&str> = specs
            .iter()
            .map(|s| s["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, TOOLS);
        let anthropic = tools(ToolProtocol::Anthropic);
        let names: Vec<&str> = anthropic.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, TOOLS);
        for (a, o) in anthropic.iter().zip(&specs) {
            assert_eq!(a["input_schema"], o["function"]["parameters"]);
            assert_eq!(a["description"], o["function"]["description"]);
        }
        assert!(tools(ToolProtocol::Text).is_empty());
        let text = instructions(ToolProtocol::Text, &Instructions::of("en").unwrap());
        let line = text.lines().find(|l| l.starts_with("- write_file {")).unwrap();
        assert!(
            line.contains("\"content\"") && line.contains("\"path\""),
            "{line}"
        );
    }
}
