//! The `trajectory` log: one step of a react search (a model turn and the tool call it
//! made).
//!
//! Written by the react agent of `stages::generate`; read by the views. A step is keyed by
//! (the generate unit's key, step), like a `journal` attempt, so `trajectory.search` joins
//! `generate.unit_key`. The model's message and the tool's observation are stored as
//! objects (JSON) and named here by blake3; the columns keep what a query needs without
//! opening them (the tool, its arguments, whether the observation is an error, a
//! validation's score).

use serde::{Deserialize, Serialize};

use crate::events::Format;
use crate::log::EventBody;
use crate::store::Hash;

/// One step of a react search: an event of the `trajectory` log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryStep {
    pub competition: String,
    pub language: String,
    pub model: String,
    pub format: Format,
    pub seed: u32,
    /// The generate unit this search is (its unit key): `generate.unit_key`.
    pub search: Hash,
    /// 0-based.
    pub step: u32,
    /// How the tools were offered: `openai` (tool calling) or `text`.
    pub protocol: String,
    /// The model's message as an object (JSON: role, content, tool calls).
    pub message_blake3: Hash,
    /// The text of the model's message (its thought), at most 2,000 characters.
    pub thought: String,
    /// The tool called (none when the turn called none).
    pub tool: Option<String>,
    /// The call's arguments as the model wrote them (JSON text).
    pub arguments: Option<String>,
    /// What the tool returned, as an object (JSON, `{"ok": …}` or `{"error": …}`), as the
    /// model was shown it.
    pub observation_blake3: Hash,
    /// The observation is an error (bad arguments, an unknown tool, a refused path, a
    /// failed run, a turn without a call).
    pub is_error: bool,
    /// Tool calls of the turn beyond the first, answered with an error and not run.
    pub extra_calls: u32,
    /// `validate`: the validation score, when the run was ok and its predictions valid.
    pub validation_score: Option<f64>,
    /// `submit` succeeded: the search ends with this step.
    pub submitted: bool,
    pub request_blake3: Hash,
    pub response_blake3: Hash,
    pub http_attempts: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// The model's answer time, retries included.
    pub answer_seconds: f64,
    /// The tool's recorded run time (sandbox runs; 0 for the file tools).
    pub tool_seconds: f64,
    /// Recorded seconds used by the search up to and including this step.
    pub elapsed_seconds: f64,
}

impl EventBody for TrajectoryStep {
    const STAGE: &'static str = "trajectory";
    const SCHEMA_VERSION: u32 = 1;
}
