//! Stage 3, `execute`: run each distinct generated solution in the sandbox.
//!
//! Units come from the `generate` log: one per distinct (competition, format, code hash),
//! so code that several languages produced runs once. The unit key covers that triple, the
//! backend, the harness's and the requirements' blake3 and the limits; the event's upstream
//! is the first generate event that produced the code. The predictions (when the run is ok)
//! are stored as an object and named by hash; the harness's result record, the outcome
//! (`sandbox::Outcome`), the output tails and the static checks' findings (`crate::check`,
//! leakage included) are in the event.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::generate::Generation;
use super::{Planned, Stage, StageError};
use crate::competition::contract::Spec;
use crate::competition::{Benchmark, Competition};
use crate::log::{EventBody, LogError, StageLog, unit_key};
use crate::sandbox::{Backend, Format, Job, Limits, assets};
use crate::store::{Hash, Store};

/// One execution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Execution {
    pub competition: String,
    pub format: String,
    pub code_blake3: String,
    pub backend: String,
    /// The docker backend's runtime image id (`sha256:…`); none for `local`.
    pub image: Option<String>,
    /// A `sandbox::Outcome` name.
    pub outcome: String,
    pub predictions_blake3: Option<String>,
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
}

/// What one run needs.
#[derive(Clone, Debug)]
pub struct Unit {
    competition: String,
    format: Format,
    code: Hash,
}

/// The stage.
pub struct Execute {
    pub bench: Benchmark,
    pub runner: Runner,
    pub store: Store,
    /// Run only code generated after the generate segment with this hash.
    pub since: Option<Hash>,
}

/// How stored code runs: the sandbox backend, the managed Python and the limits. The execute
/// stage and the aide agent's validation runs share it.
#[derive(Clone)]
pub struct Runner {
    pub backend: Arc<dyn Backend>,
    pub python: PathBuf,
    pub limits: Limits,
}

/// One run of stored code.
pub struct Ran {
    pub run: crate::sandbox::Execution,
    /// The `sandbox::Outcome` name.
    pub outcome: String,
    /// The predictions, stored as an object (when the run wrote them).
    pub predictions: Option<Hash>,
}

impl Runner {
    /// What makes runs of the same code on the same data differ, for unit keys: the backend,
    /// its image, the harness's and the requirements' blake3 and the limits.
    pub fn identity(&self) -> serde_json::Map<String, serde_json::Value> {
        let v = serde_json::json!({
            "backend": self.backend.name(), "image": self.backend.image(),
            "harness": assets::hash(assets::HARNESS), "requirements": assets::hash(assets::REQUIREMENTS),
            "limits": self.limits,
        });
        match v {
            serde_json::Value::Object(map) => map,
            _ => unreachable!("a JSON object"),
        }
    }

    /// Runs `code` (an object of `store`) for `c` in `format`, with `public_dir` as its public
    /// folder (the competition's, or a validation split), and stores its predictions.
    pub async fn run(
        &self,
        store: &Store,
        c: &Competition,
        format: Format,
        code: &Hash,
        public_dir: PathBuf,
    ) -> Result<Ran, String> {
        let bytes = store.objects().get(code).map_err(|e| e.to_string())?;
        let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
        let code_path = scratch.path().join("code.py");
        std::fs::write(&code_path, &bytes).map_err(|e| e.to_string())?;
        let out_dir = scratch.path().join("out");
        std::fs::create_dir(&out_dir).map_err(|e| e.to_string())?;
        let job = Job {
            python: self.python.clone(),
            harness: assets::materialize("harness.py", assets::HARNESS).map_err(|e| e.to_string())?,
            code: code_path,
            format,
            public_dir,
            spec: Spec::of(&c.manifest),
            limits: self.limits.clone(),
        };
        let backend = self.backend.clone();
        let run = tokio::task::spawn_blocking(move || backend.run(&job, &out_dir))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| crate::error_chain(&e))?;
        let predictions = match &run.predictions {
            Some(p) => {
                let bytes = std::fs::read(p).map_err(|e| e.to_string())?;
                Some(store.objects().put(&bytes).map_err(|e| e.to_string())?)
            }
            None => None,
        };
        Ok(Ran {
            outcome: crate::manifest::serde_name(&run.outcome),
            run,
            predictions,
        })
    }
}

impl Stage for Execute {
    type Body = Execution;
    type Unit = Unit;

    fn plan(&self, store: &Store) -> Result<Vec<Planned<Unit>>, StageError> {
        let log = StageLog::new(store, Generation::STAGE)?;
        let from = match &self.since {
            Some(since) => super::version_after(&log, since)?,
            None => 0,
        };
        let state = log.state::<Generation>(from)?;
        let mut seen = BTreeSet::new();
        let mut planned = Vec::new();
        for e in state.events() {
            let g = &e.body;
            if !seen.insert((g.competition.clone(), g.format.clone(), g.code_blake3.clone())) {
                continue;
            }
            let format: Format = g
                .format
                .parse()
                .map_err(|err| StageError::Other(format!("generate event {}: {err}", e.id)))?;
            let code: Hash = g
                .code_blake3
                .parse()
                .map_err(|_| StageError::Other(format!("bad code hash in {}", e.id)))?;
            let mut params = self.runner.identity();
            params.insert("competition".into(), g.competition.clone().into());
            params.insert("format".into(), g.format.clone().into());
            params.insert("code".into(), g.code_blake3.clone().into());
            planned.push(Planned {
                key: unit_key(Execution::STAGE, Execution::SCHEMA_VERSION, &[], &params)?,
                upstream: vec![e.id],
                label: format!("{}/{}/{}", g.competition, g.format, &g.code_blake3[..12]),
                unit: Unit {
                    competition: g.competition.clone(),
                    format,
                    code,
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
            .map_err(StageError::Other)?[0];
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
        Ok(Execution {
            competition: unit.competition,
            format: unit.format.harness_mode().into(),
            code_blake3: unit.code.to_hex(),
            backend: backend.name().into(),
            image: backend.image(),
            outcome,
            predictions_blake3: predictions.map(|h| h.to_hex()),
            result: run.result.to_string(),
            detail: run.detail,
            wall_seconds: run.wall_seconds,
            stdout_tail: run.stdout_tail,
            stderr_tail: run.stderr_tail,
            leakage: findings.iter().any(|f| f.kind.is_leakage()),
            findings: serde_json::to_string(&findings).map_err(|e| fail(e.to_string()))?,
        })
    }
}
