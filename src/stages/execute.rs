//! Stage 3, `execute`: run each distinct generated solution in the sandbox.
//!
//! Units come from the `generate` log: one per distinct (competition, format, code hash),
//! so code that several languages produced runs once. The unit key covers that triple, the
//! backend, the harness's and the requirements' blake3 and the limits; the event's upstream
//! is the first generate event that produced the code. The predictions (when the run is ok)
//! are stored as an object and named by hash; the harness's result record, the outcome
//! (`sandbox::Outcome`), the output tails and the static checks' findings (`crate::check`,
//! leakage included) are in the event, and, in a `--network proxy` run, every request the
//! proxy saw (`sandbox::network`), with how many it refused. Before a unit runs, its competition's public files are
//! checked against the manifest's blake3 (`competition::integrity`). A run the sandbox could
//! not start (`sandbox_error`, after one retry: `stages::solution`) is not a result: the
//! unit fails, its fault is recorded, and the sample counts as missing until a later run
//! executes it. A `sandbox_error` that an earlier ml2b committed as an execution is run
//! again, under a key that adds that event's id (the `runs` view takes the latest run).
//!
//! An external agent's `submission.csv` (MLE-bench's contract) is not code: it runs nowhere
//! (its key names no sandbox), and its event names the file as the predictions grade
//! scores, with backend `none`.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::solution::{Ran, Runner};
use super::{Planned, Stage, StageError};
use crate::competition::{Benchmark, Side};
use crate::events::{EXECUTE_KEY_VERSION, Execution, Generation};
use crate::events::{Format, Outcome};
use crate::log::{EventBody, LogError, StageLog, unit_key};
use crate::sandbox::network::LISTED_REQUESTS;
use crate::sandbox::{Network, ProxyRequest};
use crate::store::{Hash, Store};

/// What one run needs.
#[derive(Clone, Debug)]
pub struct Unit {
    competition: String,
    format: Format,
    code: Hash,
    /// The code is an external agent's `submission.csv`: graded as it is, never run.
    csv: bool,
}

/// The stage.
pub struct Execute {
    pub bench: Arc<Benchmark>,
    pub runner: Runner,
    pub store: Store,
    /// Run only code generated after the generate segment with this hash.
    pub since: Option<Hash>,
}

impl Stage for Execute {
    type Body = Execution;
    type Unit = Unit;

    const RECORDS_FAULTS: bool = true;

    fn plan(&self, store: &Store) -> Result<Vec<Planned<Unit>>, StageError> {
        let log = StageLog::new(store, Generation::STAGE)?;
        let from = match &self.since {
            Some(since) => super::version_after(&log, since)?,
            None => 0,
        };
        let state = log.state::<Generation>(from)?;
        let executed = StageLog::new(store, Execution::STAGE)?.state::<Execution>(0)?;
        let mut seen = BTreeSet::new();
        let mut planned = Vec::new();
        for e in state.events() {
            let g = &e.body;
            if !seen.insert((g.competition.clone(), g.format, g.code_blake3)) {
                continue;
            }
            let format = g.format;
            let code = g.code_blake3;
            let csv = g.is_csv_submission();
            // A submission.csv runs nowhere: its key names no sandbox.
            let mut params = match csv {
                false => self.runner.identity(),
                true => serde_json::Map::from_iter([("submission".to_string(), "csv".into())]),
            };
            params.insert("competition".into(), g.competition.clone().into());
            params.insert("format".into(), g.format.harness_mode().into());
            params.insert("code".into(), g.code_blake3.to_hex().into());
            let mut key = unit_key(Execution::STAGE, EXECUTE_KEY_VERSION, &[], &params)?;
            // An earlier ml2b committed a run the sandbox could not start as a result
            // (`sandbox_error`): run it again, under a key that names that event.
            while let Some(failed) = executed
                .get(&key)
                .filter(|e| e.body.outcome == Outcome::SandboxError)
            {
                key = unit_key(Execution::STAGE, EXECUTE_KEY_VERSION, &[failed.id], &params)?;
            }
            planned.push(Planned {
                key,
                upstream: vec![e.id],
                label: format!("{}/{}/{}", g.competition, g.format, g.code_blake3.short()),
                unit: Unit {
                    competition: g.competition.clone(),
                    format,
                    code,
                    csv,
                },
            });
        }
        Ok(planned)
    }

    async fn run(&self, unit: Unit) -> Result<Execution, StageError> {
        let label = format!("{}/{:?}", unit.competition, unit.format);
        let fail = |message: String| StageError::Unit {
            label: label.clone(),
            message,
        };
        let c = self
            .bench
            .select(std::slice::from_ref(&unit.competition))
            .map_err(StageError::Benchmark)?[0];
        if unit.csv {
            return Ok(submitted_csv(unit));
        }
        c.verify_files(Side::Public)?;
        let code = self.store.objects().get(&unit.code).map_err(LogError::from)?;
        let findings = crate::check::check(&String::from_utf8_lossy(&code), unit.format);
        let Ran {
            run,
            outcome,
            predictions,
        } = self
            .runner
            .run(&self.store, c, unit.format, &unit.code, c.dir.join("public"))
            .await
            .map_err(fail)?;
        let backend = &self.runner.backend;
        let network = &self.runner.network;
        let traffic = run
            .requests
            .as_deref()
            .map(|r| Traffic::of(r, &fail))
            .transpose()?;
        Ok(Execution {
            competition: unit.competition,
            format: unit.format,
            code_blake3: unit.code,
            backend: backend.name().into(),
            image: backend.image(),
            outcome,
            predictions_blake3: predictions,
            result: run.result.to_string(),
            detail: run.detail,
            wall_seconds: run.wall_seconds,
            stdout_tail: run.stdout_tail,
            stderr_tail: run.stderr_tail,
            leakage: findings.iter().any(|f| f.kind.is_leakage()),
            findings: serde_json::to_string(&findings).map_err(|e| fail(e.to_string()))?,
            network: (*network != Network::None).then(|| network.name().to_string()),
            requests: traffic.as_ref().map(|t| t.listed.clone()),
            requests_total: traffic.as_ref().map(|t| t.total),
            requests_denied: traffic.as_ref().map(|t| t.denied),
            gpus: match &self.runner.gpus {
                Some(g) => Some(serde_json::to_string(&g.devices).map_err(|e| fail(e.to_string()))?),
                None => None,
            },
            model_cache_blake3: match &self.runner.model_cache {
                Some(cache) => Some(
                    self.store
                        .objects()
                        .put(cache.listing.as_bytes())
                        .map_err(LogError::from)?,
                ),
                None => None,
            },
        })
    }
}

/// The execution of an external agent's `submission.csv`: nothing runs; the file is the
/// predictions grade reads (a missing or malformed one is an invalid grade, as
/// `ml2b grade-sample` finds it).
fn submitted_csv(unit: Unit) -> Execution {
    Execution {
        competition: unit.competition,
        format: unit.format,
        code_blake3: unit.code,
        backend: "none".into(),
        image: None,
        outcome: Outcome::Ok,
        predictions_blake3: Some(unit.code),
        result: "{}".into(),
        detail: Some("an external agent's submission.csv: graded as it is, not run".into()),
        wall_seconds: 0.0,
        stdout_tail: String::new(),
        stderr_tail: String::new(),
        findings: "[]".into(),
        leakage: false,
        network: None,
        requests: None,
        requests_total: None,
        requests_denied: None,
        model_cache_blake3: None,
        gpus: None,
    }
}

/// What the proxy saw of a run, as the event records it.
struct Traffic {
    /// JSON of the first [`LISTED_REQUESTS`].
    listed: String,
    total: u64,
    denied: u64,
}

impl Traffic {
    fn of(requests: &[ProxyRequest], fail: &impl Fn(String) -> StageError) -> Result<Self, StageError> {
        let shown = &requests[..requests.len().min(LISTED_REQUESTS)];
        Ok(Self {
            listed: serde_json::to_string(shown).map_err(|e| fail(e.to_string()))?,
            total: requests.len() as u64,
            denied: requests.iter().filter(|r| !r.allowed).count() as u64,
        })
    }
}
