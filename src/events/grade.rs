//! The `grade` log: one execution scored on the private answers, with r_p against both
//! baselines.
//!
//! Written by `stages::grade`; read by `ml2b baselines`, the views and the report.

use serde::{Deserialize, Serialize};

use crate::log::EventBody;
use crate::sandbox::{Format, Outcome};
use crate::store::Hash;

/// One grade.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grade {
    pub competition: String,
    pub format: Format,
    pub code_blake3: Hash,
    pub metric: String,
    /// `minimize` or `maximize`.
    pub direction: String,
    /// The execution's outcome.
    pub outcome: Outcome,
    pub valid: bool,
    pub score: Option<f64>,
    pub reason: Option<String>,
    /// The reference solution's score: its run's (`baseline_run`), else the manifest's.
    pub baseline_score: Option<f64>,
    /// The reference solution's execute event compared with (none: the manifest's score).
    pub baseline_run: Option<Hash>,
    /// r_p against the reference solution; 0 for a failed or invalid run.
    pub r_p: Option<f64>,
    /// The algorithmic baseline's (AutoGluon's) score, run and r_p, likewise.
    pub automl_score: Option<f64>,
    pub automl_run: Option<Hash>,
    pub r_p_automl: Option<f64>,
    /// Which baseline this run itself is (`reference`, `automl`), if any.
    pub role: Option<String>,
    /// A baseline's own run: whether it scored inside the manifest's expected range (none:
    /// the manifest records no range for it, or the run is invalid).
    pub in_expected_range: Option<bool>,
    pub answers_blake3: Hash,
}

impl EventBody for Grade {
    const STAGE: &'static str = "grade";
    const SCHEMA_VERSION: u32 = 2;
}
