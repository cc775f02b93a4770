//! The `fault` log: a unit that could not be completed, and why — a fault of the
//! environment (the provider unreachable or refusing after every retry, the sandbox or the
//! grader unable to start, a data file that is not what its manifest says), never a verdict
//! on the model.
//!
//! Written by the stage runner when a unit of generate, execute or grade fails; that unit
//! stays uncommitted in its own log, so the next run retries it, and the `runs` view counts
//! the sample as missing (`missing_stage`), in every denominator. `ml2b report` and
//! `ml2b run` list the faults of the units still missing.
//!
//! Key: (stage, the unit's key, the message), so the same failure recorded twice is one
//! event and a different one is another; upstream: the unit's own upstream ids. The latest
//! by `created_at` is the unit's current fault.

use serde::{Deserialize, Serialize};

use crate::log::EventBody;
use crate::store::Hash;

/// One failed unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fault {
    /// The stage whose unit failed (`generate`, `execute`, `grade`).
    pub stage: String,
    /// That stage's unit key.
    pub unit: Hash,
    /// The unit's label (`competition/language/format/seed`, …).
    pub label: String,
    /// The error and its causes.
    pub message: String,
}

impl EventBody for Fault {
    const STAGE: &'static str = "fault";
    const SCHEMA_VERSION: u32 = 1;
}
