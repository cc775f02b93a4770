//! The `execute` log: one run of a distinct generated solution in the sandbox.
//!
//! Written by `stages::execute`; read by grade and the views.
//!
//! Schema versions: 2 ended at `leakage`; 3 added the run's network, what the proxy saw
//! of it, the model cache it saw and its GPUs (nullable, at the end): a version-2 event reads them
//! as none, a run without a network or a cache. The unit key is hashed under [`UNIT_KEY_VERSION`], not the schema version:
//! what a unit is did not change, so a store written before runs none of its units again.

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
    /// Since version 3. The run's network when it had one (`proxy`); none: only a loopback
    /// of its own.
    pub network: Option<String>,
    /// Since version 3. What the proxy saw, in order (JSON list of `{method, host, port,
    /// status, allowed, sent, received}`, the first 1,000); none without a proxy.
    pub requests: Option<String>,
    /// Since version 3. How many requests the proxy saw, and refused: a refused request
    /// is evidence that the code tried a host outside the allowlist.
    pub requests_total: Option<u64>,
    pub requests_denied: Option<u64>,
    /// Since version 3. The object listing the model cache the run saw (`--model-cache`:
    /// every file's path, size and blake3); none without one.
    pub model_cache_blake3: Option<Hash>,
    /// Since version 3. The GPUs the run had (JSON list of `{index, name, driver,
    /// memory_mib, uuid}`, as `nvidia-smi` names them); none without `--gpus`.
    pub gpus: Option<String>,
}

impl Execution {
    /// The run's network, in a line, for `show` and the viewer: none without a network;
    /// with a proxy, how many requests it saw and each it refused (`host:port`, the first
    /// five). The flag says whether any was refused.
    pub fn network_summary(&self) -> Option<(String, bool)> {
        let network = self.network.as_deref()?;
        let (total, denied) = (
            self.requests_total.unwrap_or(0),
            self.requests_denied.unwrap_or(0),
        );
        let mut line = format!("{network}: {total} request(s), {denied} refused");
        if denied > 0 {
            let listed: Vec<serde_json::Value> = self
                .requests
                .as_deref()
                .and_then(|r| serde_json::from_str(r).ok())
                .unwrap_or_default();
            let refused: Vec<String> = listed
                .iter()
                .filter(|r| r["allowed"] == false)
                .take(5)
                .map(|r| {
                    format!(
                        "{} {}:{}",
                        r["method"].as_str().unwrap_or("?"),
                        r["host"].as_str().unwrap_or("?"),
                        r["port"]
                    )
                })
                .collect();
            line += &format!(" ({})", refused.join(", "));
        }
        Some((line, denied > 0))
    }

    /// The run's GPUs, in a line (`NVIDIA H200 (driver 570.86.15, 143771 MiB)`, …); none
    /// without `--gpus`.
    pub fn gpu_summary(&self) -> Option<String> {
        let devices: Vec<serde_json::Value> = serde_json::from_str(self.gpus.as_deref()?).ok()?;
        let each: Vec<String> = devices
            .iter()
            .map(|d| {
                format!(
                    "{} (driver {}, {} MiB)",
                    d["name"].as_str().unwrap_or("?"),
                    d["driver"].as_str().unwrap_or("?"),
                    d["memory_mib"]
                )
            })
            .collect();
        Some(each.join(", "))
    }
}

/// The version an execute unit key is hashed under: version 2's, for every schema since.
pub const UNIT_KEY_VERSION: u32 = 2;

impl EventBody for Execution {
    const STAGE: &'static str = "execute";
    const SCHEMA_VERSION: u32 = 3;
    const LOOKUP: &'static [&'static str] = &["competition", "format", "code_blake3"];
}
