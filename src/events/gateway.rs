//! The `gateway` log: one model request of an external agent, as ml2b's recording gateway
//! saw it (`stages::generate::external::gateway`).
//!
//! Written when the agent's unit ends, before its generate event, keyed by (the generate
//! unit's key, call), like a `journal` attempt or a `trajectory` step, so `gateway.search`
//! joins `generate.unit_key`. The agent's request body and the response (JSON of
//! `providers::Completion`: the raw body, usage, every HTTP attempt) are objects named
//! here by blake3; a call the gateway refused (a budget spent, a streamed request, the
//! other protocol, the model's own refusal) names no response and says why.

use serde::{Deserialize, Serialize};

use crate::events::Format;
use crate::log::EventBody;
use crate::store::Hash;

/// One request of an external agent: an event of the `gateway` log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GatewayCall {
    pub competition: String,
    pub language: String,
    pub model: String,
    pub format: Format,
    pub seed: u32,
    /// The external agent (its name in `manifests/agents.toml`).
    pub agent: String,
    /// The generate unit this run is (its unit key): `generate.unit_key`.
    pub search: Hash,
    /// 0-based, in the order the gateway received the requests.
    pub call: u32,
    /// The protocol the agent spoke: `openai` (`/v1/chat/completions`) or `anthropic`
    /// (`/v1/messages`).
    pub protocol: String,
    /// The request body as the agent sent it, as an object.
    pub request_blake3: Hash,
    /// The request cache's key of the forwarded request (`cache/requests/`); none for a
    /// request refused before it was read (no key, not JSON).
    pub key: Option<Hash>,
    /// The response (JSON of `providers::Completion`); none when the call was refused.
    pub response_blake3: Option<Hash>,
    /// The HTTP status the agent got.
    pub status: u16,
    /// Why the gateway answered with an error instead of an answer (none: answered).
    pub refused: Option<String>,
    /// Answered from the store (the request cache, or a replayed store): no model was asked.
    pub cached: bool,
    pub http_attempts: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// From receiving the request to answering it.
    pub answer_seconds: f64,
}

impl EventBody for GatewayCall {
    const STAGE: &'static str = "gateway";
    const SCHEMA_VERSION: u32 = 1;
    const LOOKUP: &'static [&'static str] = &["search"];
}
