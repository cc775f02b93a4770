//! The `planned` log: every sample the generate stage set out to produce, recorded before
//! any of them runs, so that a table's denominator is the plan and not what happened to
//! succeed.
//!
//! Written by `stages::generate` (the runner hands it the units of each invocation, before
//! the first one runs; a cluster submitter records the plan it freezes); read by the
//! `runs` view, which has a row for every planned sample: one that was never generated has
//! outcome `not_generated` and `missing_stage = 'generate'`.
//!
//! A planned sample names its generate unit's key (`generate_key`), so a fault of that unit
//! (the `fault` log) finds its model; its own unit key is derived from it (so that no event
//! of another log shares it), and the log drops a key it holds: planning the same units
//! again appends nothing.
//!
//! Schema versions: 2 added `agent_name` (nullable, at the end): an external agent's name,
//! which makes its entrant (`<model>+<agent>`). Version-1 events read it as none. The
//! unit key is hashed under [`UNIT_KEY_VERSION`] (version 1's), so planning a store
//! written before appends nothing.

use serde::{Deserialize, Serialize};

use super::Agent;
use crate::events::Format;
use crate::log::EventBody;
use crate::store::Hash;

/// One planned sample: the coordinates of a row of `runs`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedSample {
    pub competition: String,
    pub language: String,
    pub model: String,
    pub agent: Agent,
    pub format: Format,
    pub seed: u32,
    /// The generate unit's key.
    pub generate_key: Hash,
    /// Since version 2. The external agent's name (`--agent external:NAME`); none for every
    /// other agent.
    pub agent_name: Option<String>,
}

/// The version a planned sample's unit key is hashed under: version 1's, for every schema
/// since.
pub const UNIT_KEY_VERSION: u32 = 1;

impl EventBody for PlannedSample {
    const STAGE: &'static str = "planned";
    const SCHEMA_VERSION: u32 = 2;
}
