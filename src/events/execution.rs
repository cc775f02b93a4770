//! The `execute` log: one run of a distinct generated solution in the sandbox.
//!
//! Written by `stages::execute`; read by grade and the views.

use serde::{Deserialize, Serialize};

use crate::events::{Format, Outcome};
use crate::log::EventBody;
use crate::store::Hash;

/// One execution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Execution {
    pub competition: String,
    pub format: Format,
    pub code_blake3: Hash,
    pub backend: String,
    /// The docker backend's runtime image id (`sha256:…`); none for `local`.
    pub image: Option<String>,
    pub outcome: Outcome,
    pub predictions_blake3: Option<Hash>,
    /// The harness's result record (JSON text).
    pub result: String,
    pub detail: Option<String>,
    pub wall_seconds: f64,
    pub stdout_tail: String,
    pub stderr_tail: String,
    /// The static checks' findings on the code (`crate::check`), as JSON.
    pub findings: String,
    /// Whether the leakage detector flagged the code.
    pub leakage: bool,
}

impl EventBody for Execution {
    const STAGE: &'static str = "execute";
    const SCHEMA_VERSION: u32 = 2;
    const LOOKUP: &'static [&'static str] = &["competition", "format", "code_blake3"];
}
