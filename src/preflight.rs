//! Preflight: the environment a run needs, checked before its first unit, so that a fault
//! of the environment stops the run with one clear error instead of being recorded unit by
//! unit (or, worse, as the model's results).
//!
//! ```text
//! sandbox   one canary solution through the real harness, in the run's backend, with the
//!           run's Python and limits: bubblewrap (or Docker) starts, the Python environment
//!           imports what solutions use, the harness writes predictions that ml2b reads
//! graders   each selected competition graded by MLE-bench's own program: its files match
//!           the manifest and its grade.py loads in the grading sandbox (nothing is graded)
//! models    each HTTP model: its API key variable is set, and its endpoint answers (any
//!           HTTP status but 401/403 and 5xx; a GET of `{endpoint}/models` or
//!           `{endpoint}/v1/models`, which costs no tokens)
//! ```
//! A preflight records nothing in the store. What it cannot check (a model's answers, a
//! Slurm node's environment) is still caught later, unit by unit, as a fault.

use std::path::Path;
use std::time::Duration;

use crate::competition::Competition;
use crate::competition::spec::{Kind, Spec};
use crate::events::Provider;
use crate::events::{Format, Outcome};
use crate::manifest::Model;
use crate::sandbox::{Backend, Job, Limits, assets};

/// One failed check: what was checked and why it failed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Failed {
    pub check: String,
    pub problem: String,
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.check, self.problem)
    }
}

/// Every check that failed.
#[derive(Debug, thiserror::Error)]
#[error("preflight: {} check(s) failed, so nothing ran:\n  {}", .0.len(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  "))]
pub struct PreflightError(pub Vec<Failed>);

/// The canary solution: what every solution does at least (the libraries it imports, a
/// prediction per test row).
const CANARY: &str = "import numpy\nimport pandas\nimport sklearn\n\n\ndef train_and_predict(data, X_val):\n    return [float(data[\"y\"].mean())] * len(X_val)\n";

/// Runs the canary solution in `backend` with `python` and `limits`.
pub fn sandbox(backend: &dyn Backend, python: &Path, limits: &Limits) -> Result<(), Failed> {
    let failed = |problem: String| Failed {
        check: format!("the {} sandbox", backend.name()),
        problem,
    };
    let dir = tempfile::Builder::new()
        .prefix("ml2b-preflight-")
        .tempdir()
        .map_err(|e| failed(format!("cannot create a scratch folder: {e}")))?;
    let public = dir.path().join("public");
    let out = dir.path().join("out");
    let code = dir.path().join("code.py");
    let write = |path: &Path, text: &str| {
        std::fs::write(path, text).map_err(|e| failed(format!("cannot write {}: {e}", path.display())))
    };
    std::fs::create_dir_all(&public).map_err(|e| failed(e.to_string()))?;
    std::fs::create_dir_all(&out).map_err(|e| failed(e.to_string()))?;
    write(&public.join("train.csv"), "id,x,y\n1,0.5,1.0\n2,1.5,3.0\n")?;
    write(&public.join("test.csv"), "id,x\n3,2.5\n")?;
    write(&code, CANARY)?;
    let job = Job {
        python: python.to_path_buf(),
        harness: assets::materialize("harness.py", assets::HARNESS)
            .map_err(|e| failed(crate::error::chain(&e)))?,
        code,
        format: Format::Mono,
        public_dir: public,
        spec: Spec {
            id: "id".into(),
            targets: vec!["y".into()],
            kind: Kind::Values,
            k: None,
        },
        limits: limits.clone(),
        proxy: None,
        model_cache: None,
        gpus: None,
    };
    let run = backend
        .run(&job, &out)
        .map_err(|e| failed(crate::error::chain(&e)))?;
    if run.outcome == Outcome::Ok {
        return Ok(());
    }
    let detail = run
        .detail
        .clone()
        .or_else(|| run.result["errors"][0].as_str().map(String::from))
        .unwrap_or_else(|| {
            run.stderr_tail
                .trim()
                .lines()
                .last()
                .unwrap_or_default()
                .to_string()
        });
    Err(failed(format!(
        "a canary solution with Python {} ended {}: {detail}",
        python.display(),
        run.outcome
    )))
}

/// Whether each of `competitions` graded by a program has a grader that loads.
pub fn graders(competitions: &[&Competition]) -> Vec<Failed> {
    competitions
        .iter()
        .filter(|c| c.manifest.is_program_graded())
        .filter_map(|c| {
            crate::competition::program::check_locally(c)
                .err()
                .map(|e| Failed {
                    check: format!("the grading program of `{}`", c.id()),
                    problem: crate::error::chain(&e),
                })
        })
        .collect()
}

/// How long a model's endpoint may take to answer the preflight's request.
const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(15);

/// Whether each HTTP model of `models` has its key and an endpoint that answers.
pub async fn models(models: &[&Model]) -> Vec<Failed> {
    let mut failed = Vec::new();
    for m in models {
        if let Err(problem) = model(m).await {
            failed.push(Failed {
                check: format!("model `{}` ({})", m.name, m.endpoint),
                problem,
            });
        }
    }
    failed
}

async fn model(m: &Model) -> Result<(), String> {
    let (path, header, prefix) = match m.provider {
        Provider::Openai => ("models", "authorization", "Bearer "),
        Provider::Anthropic => ("v1/models", "x-api-key", ""),
        _ => return Ok(()),
    };
    let key = if m.api_key_env.is_empty() {
        None
    } else {
        match std::env::var(&m.api_key_env) {
            Ok(k) if !k.is_empty() => Some(k),
            _ => {
                return Err(format!(
                    "its API key variable `{}` is not set or empty",
                    m.api_key_env
                ));
            }
        }
    };
    let client = reqwest::Client::builder()
        .timeout(ENDPOINT_TIMEOUT)
        .user_agent(concat!("ml2b/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| crate::error::chain(&e))?;
    let url = format!("{}/{path}", m.endpoint.trim_end_matches('/'));
    let mut request = client.get(&url);
    if let Some(key) = key {
        request = request.header(header, format!("{prefix}{key}"));
    }
    if m.provider == Provider::Anthropic {
        request = request.header("anthropic-version", "2023-06-01");
    }
    let status = request
        .send()
        .await
        .map_err(|e| format!("cannot reach it: {}", crate::error::chain(&e)))?
        .status();
    match status.as_u16() {
        401 | 403 => Err(format!("it refused the API key (HTTP {status})")),
        s if s >= 500 => Err(format!("it answered HTTP {status}")),
        _ => Ok(()),
    }
}
