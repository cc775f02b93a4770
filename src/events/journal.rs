//! The `journal` log: one attempt of an aide search (AIDE's journal fields).
//!
//! Written by the aide agent of `stages::generate`; read by `ml2b journal` and the views.

use serde::{Deserialize, Serialize};

use crate::events::{Format, Outcome};
use crate::log::EventBody;
use crate::store::Hash;

/// One attempt of a search: an event of the `journal` log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub competition: String,
    pub language: String,
    pub model: String,
    pub format: Format,
    pub seed: u32,
    /// The generate unit this search is (its unit key): `generate.unit_key`.
    pub search: Hash,
    /// This attempt's id: blake3 of (search, step), 32 hex digits.
    pub node: String,
    /// The attempt it revised.
    pub parent: Option<String>,
    /// 0-based.
    pub step: u32,
    /// `draft`, `debug` or `improve`.
    pub stage: String,
    pub debug_depth: u32,
    /// The text before the code in the answer.
    pub plan: String,
    pub code_blake3: Hash,
    pub prompt_blake3: Hash,
    pub request_blake3: Hash,
    pub response_blake3: Hash,
    pub http_attempts: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// The validation run's outcome.
    pub outcome: Outcome,
    pub exec_seconds: f64,
    /// The run's errors and output, trimmed (AIDE's `term_out`).
    pub term_out: String,
    pub exc_type: Option<String>,
    /// The validation score (AIDE's `metric.value`; none when buggy).
    pub metric: Option<f64>,
    pub maximize: bool,
    pub is_buggy: bool,
    /// The review: what happened, in a sentence (AIDE's `analysis`).
    pub analysis: String,
    /// Whether this attempt was the best good one when it was made.
    pub is_best_so_far: bool,
    /// Recorded seconds used by the search up to and including this attempt.
    pub elapsed_seconds: f64,
    /// The validation split's blake3 (`competition::validation`).
    pub validation_blake3: String,
}

impl EventBody for Attempt {
    const STAGE: &'static str = "journal";
    const SCHEMA_VERSION: u32 = 1;
    const LOOKUP: &'static [&'static str] = &["search"];
}
