//! The AIDE search's settings ([`Config`]): every one changes results, so all are in the
//! unit key. A leaf of `aide/`: the policy and the search read it.

use serde::{Deserialize, Serialize};

/// The search's settings; all of them change results, so all are in the unit key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Attempts at most.
    pub steps: u32,
    /// Recorded seconds at most (see the module docs); the step that crosses it is the last.
    pub time_budget_s: u64,
    /// Drafts before any debugging or improving (AIDE's `num_drafts`).
    pub drafts: u32,
    /// Probability of debugging a buggy leaf at a step (AIDE's `debug_prob`).
    pub debug_prob: f64,
    /// Debug chains deeper than this are abandoned (AIDE's `max_debug_depth`).
    pub max_debug_depth: u32,
    /// Share of the public training rows held out for validation.
    pub validation_fraction: f64,
}

impl Config {
    /// AIDE's defaults (`steps 20, num_drafts 5, debug_prob 0.5, max_debug_depth 3`), an
    /// hour, and a fifth of the rows (AIDE's 5-fold validation holds out a fifth).
    pub const AIDE: Self = Self {
        steps: 20,
        time_budget_s: 3600,
        drafts: 5,
        debug_prob: 0.5,
        max_debug_depth: 3,
        validation_fraction: 0.2,
    };
}

impl Default for Config {
    fn default() -> Self {
        Self::AIDE
    }
}
