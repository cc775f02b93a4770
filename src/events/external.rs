//! The `external` log: how one run of an external agent ended (`--agent external:NAME`,
//! `stages::generate::external`).
//!
//! Written when the unit ends, after its `gateway` calls and before its generate event,
//! keyed by the generate unit's key (`external.search` joins `generate.unit_key`). What
//! the agent left is stored as objects: its stdout and stderr (head and tail, as execute
//! keeps a run's), the listing of its logs folder (JSON `{path: {bytes, blake3}}`, each
//! file an object) and its submission.

use serde::{Deserialize, Serialize};

use crate::events::Format;
use crate::log::EventBody;
use crate::store::Hash;

/// One run of an external agent: an event of the `external` log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExternalRun {
    pub competition: String,
    pub language: String,
    pub model: String,
    pub format: Format,
    pub seed: u32,
    /// The agent's name in `manifests/agents.toml`.
    pub agent: String,
    /// What identifies the agent: its manifest entry and every file of its folder.
    pub agent_blake3: Hash,
    /// The generate unit this run is (its unit key).
    pub search: Hash,
    /// How it ended: `submitted`, `no_submission`, `budget_exceeded` (the gateway refused
    /// a request past the unit's budget), `timeout` (killed at the time limit) or
    /// `sandbox_error` (the agent never started).
    pub ended: String,
    /// The agent's exit code (none when it was killed).
    pub exit_code: Option<i32>,
    pub wall_seconds: f64,
    /// Requests the gateway received, and how many of them it refused.
    pub calls: u32,
    pub refused_calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub stdout_blake3: Hash,
    pub stderr_blake3: Hash,
    /// The listing of the agent's logs folder (none when it left nothing there).
    pub logs_blake3: Option<Hash>,
    /// The submission's file as the agent left it (none: it left none).
    pub submission_blake3: Option<Hash>,
}

impl EventBody for ExternalRun {
    const STAGE: &'static str = "external";
    const SCHEMA_VERSION: u32 = 1;
    const LOOKUP: &'static [&'static str] = &["search"];
}
