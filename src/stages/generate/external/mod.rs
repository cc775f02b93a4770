//! External agents (`--agent external:NAME`): a program nobody here wrote — WecoAI's
//! AIDE as published, ML-Master, one's own — run per generate unit under ml2b's contract,
//! every model request it makes recorded by a gateway.
//!
//! ```text
//! manifests/agents.toml ──► External ──► unit: the prompt in the pair's language ─┐
//!                                                                                  ▼
//!   sandbox::agent (bubblewrap): /home/instructions.txt, /home/data, /home/agent,
//!   /home/submission, /home/logs; the only way out 127.0.0.1:3128 ──► gateway ──► model
//!                                                                                  │
//!   gateway log: one event per request ◄──────────────────────────────────────────┘
//!   external log: how the run ended, its stdout, stderr, logs and submission (objects)
//!   generate event: the submission as the unit's code (executed and graded like any),
//!                   tokens and cost summed over the requests, finish_reason = how it ended
//! ```
//!
//! The agent gets ML2B's agent contract: the task's prompt in the pair's language (the
//! one-shot prompt: its format's functions, the limits, the output), the public files
//! read-only, a writable workspace, its time limit (`time_limit_s`, killed past it), the
//! sandbox's memory and process limits, and these variables besides its manifest's `env`:
//! `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY` (the
//! gateway and this run's key), `ML2B_MODEL` (the model to name), `ML2B_FORMAT` (`modular`
//! or `mono`), `ML2B_LANGUAGE`, `ML2B_COMPETITION`, `ML2B_TIME_LIMIT_S`. It leaves
//! `/home/submission/submission.py`; what it writes to `/home/logs` is kept.
//!
//! The unit's key covers the agent (its manifest entry and every file of its folder: its
//! identity), the prompt, the limits and the budget, so another version of the agent is
//! another unit. A unit killed part-way re-runs from the start, and the gateway answers the
//! requests it already paid for from the request cache: a deterministic agent resumes where
//! it stopped without asking the model again. A `replay` model answers only from the other
//! store's `gateway` events, so a recorded run re-runs without any model.

pub mod gateway;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::json;

use crate::competition::Competition;
use crate::events::{ExternalRun, GatewayCall, Generation};
use crate::log::LogError;
use crate::manifest::agents::{ExternalAgent, SubmissionKind};
use crate::sandbox::agent::{AgentJob, AgentRun, GATEWAY_PORT};
use crate::sandbox::local::Local;
use crate::sandbox::{Limits, SandboxError};
use crate::stages::StageError;
use crate::stages::requests::{Requests, blocking, commit_steps};
use crate::store::{Hash, KeyHasher};
use gateway::Gateway;

/// An external agent, ready to run units.
pub struct External {
    /// Its name in `manifests/agents.toml`.
    pub name: String,
    pub agent: ExternalAgent,
    /// Its folder.
    pub dir: PathBuf,
    /// The Python it runs with.
    pub python: PathBuf,
    /// The sandbox's limits, with the agent's time limit as the wall clock.
    pub limits: Limits,
    /// Its manifest entry and every file of its folder ([`identity`]).
    pub identity: Hash,
    pub backend: Local,
}

/// One unit: the prompt the agent gets.
#[derive(Clone, Debug)]
pub struct Unit {
    pub key: Hash,
    pub instructions: Vec<u8>,
}

impl External {
    /// What the unit key covers besides the sample.
    pub fn key_params(&self, instructions: &Hash) -> serde_json::Value {
        json!({
            "external": self.name,
            "identity": self.identity.to_hex(),
            "instructions": instructions.to_hex(),
            "limits": self.limits,
            "budget": self.agent.budget,
        })
    }
}

/// The instructions of an agent that leaves a `submission.csv` (MLE-bench's contract): the
/// contract in English, as MLE-bench's `instructions.txt` gives it, then the task's text in
/// the pair's language.
pub fn csv_instructions(c: &Competition, task: &crate::manifest::TaskText, language: &str) -> String {
    let columns = &c.manifest.columns;
    let targets: Vec<String> = match columns.one_hot.is_empty() {
        true => columns.targets.iter().map(|t| format!("`{t}`")).collect(),
        false => columns.one_hot.iter().map(|t| format!("`{t}`")).collect(),
    };
    format!(
        "You are solving a machine-learning competition. Its description (language: {language}) follows the rules.\n\n\
         - The data is in /home/data (read-only): train.csv holds the training rows with the target column(s) {targets}; test.csv holds the rows to predict.\n\
         - Write your predictions to /home/submission/submission.csv: a header, then one row per row of test.csv, with the column `{id}` and the column(s) {targets}.\n\
         - It is scored with {metric} on the held-out answers of test.csv.\n\
         - Anything you want kept (a journal, notes) goes to /home/logs; /home/workspace is yours.\n\n\
         # {title}\n\n{description}\n\n## Data\n\n{data_card}\n",
        targets = targets.join(", "),
        id = columns.id,
        metric = c.manifest.metric.name,
        title = task.title,
        description = task.description.trim_end(),
        data_card = task.data_card.trim_end(),
    )
}

/// The agent's identity: blake3 over its manifest entry (JSON) and each file of its folder
/// (relative path and bytes, in path order; links by their target).
pub fn identity(
    name: &str,
    agent: &ExternalAgent,
    dir: &Path,
    requirements: &str,
) -> Result<Hash, StageError> {
    let mut k = KeyHasher::new("ml2b external agent v1");
    k.str(name).str(requirements);
    k.json(agent).map_err(LogError::Json)?;
    let mut files = Vec::new();
    walk(dir, dir, &mut files).map_err(|source| StageError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    files.sort();
    for (rel, bytes) in files {
        k.str(&rel).bytes(&bytes);
    }
    Ok(k.finish())
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            out.push((
                rel,
                std::fs::read_link(&path)?
                    .to_string_lossy()
                    .into_owned()
                    .into_bytes(),
            ));
        } else if kind.is_dir() {
            walk(root, &path, out)?;
        } else {
            out.push((rel, std::fs::read(&path)?));
        }
    }
    Ok(())
}

/// Runs the unit: the agent in its sandbox, its requests through the gateway; commits its
/// `gateway` calls and its `external` run, and returns the generate event.
pub async fn run(
    g: &Requests,
    ext: &External,
    c: &Competition,
    mut body: Generation,
    unit: Unit,
) -> Result<Generation, StageError> {
    body.prompt_blake3 = Some(g.put(unit.instructions.clone()).await?);
    let token = format!(
        "ml2b-{}",
        Hash::of(format!("{}{:?}", unit.key, std::time::SystemTime::now()).as_bytes()).short()
    );
    let gw = Gateway::new(
        g.clone(),
        body.clone(),
        &ext.name,
        unit.key,
        ext.agent.budget.clone(),
        token.clone(),
    )?;
    let ran = run_agent(ext, c, &body, &unit, &gw, &g.model, &token).await;
    let record = gw.finish();
    let (ran, _kept) = ran?;
    let outcome = Outcome::of(&ran, &record, ext.agent.submission);
    let run = keep(g, ext, &body, &unit, &ran, &record, &outcome).await?;
    finish(&mut body, &record.calls, &outcome, &run, ext.agent.submission);
    let code = outcome.submission.clone().unwrap_or_default();
    body.code_blake3 = g.put(code.clone()).await?;
    body.code_bytes = code.len() as u64;
    let (g, key, calls) = (g.clone(), unit.key, record.calls);
    blocking(move || {
        commit_steps(&g, &key, calls.into_iter().map(|c| (c.call, c.answer_seconds, c)))?;
        commit_steps(&g, &key, [(0, run.wall_seconds, run)])
    })
    .await?;
    Ok(body)
}

/// How the run ended, and what it left.
struct Outcome {
    ended: &'static str,
    submission: Option<Vec<u8>>,
}

impl Outcome {
    fn of(ran: &AgentRun, record: &gateway::Record, kind: SubmissionKind) -> Self {
        let path = ran.kept.join("submission").join(kind.file());
        let submission = std::fs::read(&path).ok();
        let ended = if ran.timed_out {
            "timeout"
        } else if ran.over_limits.is_some() {
            "over_limits"
        } else if record.over_budget {
            "budget_exceeded"
        } else if submission.is_some() {
            "submitted"
        } else {
            "no_submission"
        };
        Self { ended, submission }
    }
}

/// Runs the agent in its sandbox (blocking, off the async workers) with the gateway served
/// on the sandbox's socket until it ends; what it kept is in the folder returned.
async fn run_agent(
    ext: &External,
    c: &Competition,
    body: &Generation,
    unit: &Unit,
    gw: &Gateway,
    model: &crate::manifest::Model,
    token: &str,
) -> Result<(AgentRun, tempfile::TempDir), StageError> {
    let handle = tokio::runtime::Handle::current();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let stopped = Mutex::new(Some(stopped));
    let server = std::sync::Arc::new(Mutex::new(None));
    let router = gw.router();
    let serving = server.clone();
    let serve = move |listener: std::os::unix::net::UnixListener| -> Result<(), SandboxError> {
        let io = |e| SandboxError::Io {
            what: "serving the model gateway".into(),
            source: e,
        };
        listener.set_nonblocking(true).map_err(io)?;
        let _entered = handle.enter();
        let listener = tokio::net::UnixListener::from_std(listener).map_err(io)?;
        let stopped = stopped.lock().unwrap_or_else(|e| e.into_inner()).take();
        let shutdown = async move {
            if let Some(s) = stopped {
                let _ = s.await;
            }
        };
        let router = router.clone();
        let task = handle.spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(shutdown)
                .await;
        });
        *serving.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
        Ok(())
    };
    let job = AgentJob {
        python: ext.python.clone(),
        agent_dir: ext.dir.clone(),
        command: ext.agent.command.clone(),
        instructions: unit.instructions.clone(),
        public_dir: c.dir.join("public"),
        limits: ext.limits.clone(),
        env: environment(ext, body, model, token),
        serve: Box::new(serve),
    };
    let sandbox =
        |e: SandboxError| StageError::failed(format!("running the external agent `{}`", ext.name), e);
    let out = crate::sandbox::scratch_dir().map_err(sandbox)?;
    let out_path = out.path().to_path_buf();
    let backend = ext.backend.clone();
    let ran = tokio::task::spawn_blocking(move || backend.run_agent(&job, &out_path))
        .await
        .map_err(StageError::Panicked)?;
    let _ = stop.send(());
    let task = server.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(task) = task {
        let abort = task.abort_handle();
        if tokio::time::timeout(std::time::Duration::from_secs(5), task)
            .await
            .is_err()
        {
            abort.abort();
        }
    }
    Ok((ran.map_err(sandbox)?, out))
}

/// The agent's variables: the gateway's, the unit's, then its manifest's. `ML2B_MODEL` is
/// the model's name, and a replay's the name of the model it replays, so the agent writes
/// the same requests as in the run replayed.
fn environment(
    ext: &External,
    body: &Generation,
    model: &crate::manifest::Model,
    token: &str,
) -> Vec<(String, String)> {
    let name = match model.provider {
        crate::events::Provider::Replay => model.model.clone(),
        _ => body.model.clone(),
    };
    let base = format!("http://127.0.0.1:{GATEWAY_PORT}");
    let mut env: Vec<(String, String)> = [
        ("OPENAI_BASE_URL", format!("{base}/v1")),
        ("OPENAI_API_KEY", token.to_string()),
        ("ANTHROPIC_BASE_URL", base.clone()),
        ("ANTHROPIC_API_KEY", token.to_string()),
        ("ML2B_MODEL", name),
        ("ML2B_FORMAT", body.format.to_string()),
        ("ML2B_LANGUAGE", body.language.clone()),
        ("ML2B_COMPETITION", body.competition.clone()),
        ("ML2B_TIME_LIMIT_S", ext.agent.time_limit_s.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    env.extend(ext.agent.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}

/// Stores what the run left (stdout, stderr, the logs folder's files and listing, the
/// submission) and makes its `external` event.
async fn keep(
    g: &Requests,
    ext: &External,
    body: &Generation,
    unit: &Unit,
    ran: &AgentRun,
    record: &gateway::Record,
    outcome: &Outcome,
) -> Result<ExternalRun, StageError> {
    let stdout_blake3 = g.put(ran.stdout.clone()).await?;
    let stderr_blake3 = g.put(ran.stderr.clone()).await?;
    let mut listing = serde_json::Map::new();
    let mut files = Vec::new();
    let logs = ran.kept.join("logs");
    if logs.is_dir() {
        walk(&logs, &logs, &mut files).map_err(|source| StageError::Read {
            path: logs.clone(),
            source,
        })?;
    }
    files.sort();
    for (rel, bytes) in files {
        let size = bytes.len();
        let hash = g.put(bytes).await?;
        listing.insert(rel, json!({"bytes": size, "blake3": hash.to_hex()}));
    }
    let logs_blake3 = if listing.is_empty() {
        None
    } else {
        Some(
            g.put(serde_json::to_vec(&listing).map_err(LogError::Json)?)
                .await?,
        )
    };
    let submission_blake3 = match &outcome.submission {
        Some(bytes) => Some(g.put(bytes.clone()).await?),
        None => None,
    };
    let calls = &record.calls;
    Ok(ExternalRun {
        competition: body.competition.clone(),
        language: body.language.clone(),
        model: body.model.clone(),
        format: body.format,
        seed: body.seed,
        agent: ext.name.clone(),
        agent_blake3: ext.identity,
        search: unit.key,
        ended: outcome.ended.to_string(),
        exit_code: ran.exit_code,
        wall_seconds: ran.wall_seconds,
        calls: calls.len() as u32,
        refused_calls: calls.iter().filter(|c| c.refused.is_some()).count() as u32,
        input_tokens: calls.iter().map(|c| c.input_tokens).sum(),
        output_tokens: calls.iter().map(|c| c.output_tokens).sum(),
        cost_usd: calls.iter().map(|c| c.cost_usd).sum(),
        stdout_blake3,
        stderr_blake3,
        logs_blake3,
        submission_blake3,
    })
}

/// The generate event's fields from the run.
fn finish(
    body: &mut Generation,
    calls: &[GatewayCall],
    outcome: &Outcome,
    run: &ExternalRun,
    kind: SubmissionKind,
) {
    if let Some(last) = calls.iter().rev().find(|c| c.response_blake3.is_some()) {
        body.request_blake3 = last.key;
        body.response_blake3 = last.response_blake3;
    }
    body.extraction = Some(json!({ "external": outcome.ended, "submission": kind }).to_string());
    body.finish_reason = Some(outcome.ended.to_string());
    body.attempts = calls.iter().map(|c| c.http_attempts).sum();
    body.input_tokens = run.input_tokens;
    body.output_tokens = run.output_tokens;
    body.cost_usd = run.cost_usd;
}
