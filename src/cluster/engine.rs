//! The Slurm engine (`--engine slurm`, for the execute stage and a searching agent's
//! generate), below the pipeline: given the units the pipeline planned, freeze them into
//! a plan, submit its arrays, wait on the log, then check how the tasks ended (module docs
//! of [`crate::cluster`]): a waited-for run whose tasks left units undone without running
//! them is an error ([`TasksFailed`]), never a run summary. It never calls back up: what
//! to run comes in as units and a plan, progress goes out through [`Progress`].

use std::time::Duration;

use serde::Serialize;

use super::arrays;
use super::folder::{FolderError, PlanFolder};
use super::plan::{Plan, shard_count};
use super::slurm::{self, SlurmError, Submission};
use super::tasks::{self, TasksFailed};
use crate::config::SlurmSettings;
use crate::log::{Committed, LogError, StageLog};
use crate::progress::Progress;
use crate::stages::RunSummary;
use crate::store::{Hash, ObjectError, Store};

/// How often the log is read while the array runs.
const POLL: Duration = Duration::from_secs(2);

/// What a cluster run of a stage did.
#[derive(Debug, Serialize)]
pub struct ClusterRun {
    pub stage: String,
    /// The frozen plan.
    pub plan: Hash,
    pub shards: u32,
    /// None when nothing was left to run.
    pub submission: Option<Submission>,
    /// The plan's units, and those the log holds now.
    pub planned: u64,
    pub committed: u64,
    /// Whether the array was waited for.
    pub waited: bool,
    /// Units the workers report as failed (label, error); they stay uncommitted.
    pub failed: Vec<(String, String)>,
    /// The segments the plan's tasks committed (their footers name its jobs), once waited.
    pub commits: Vec<Committed>,
}

impl ClusterRun {
    /// The run as a stage's run summary (what `ml2b run` reports per stage): the planned
    /// units, those committed before the tasks ran them as skipped, the tasks' segments.
    pub fn summary(&self) -> RunSummary {
        let ran: u64 = self.commits.iter().map(|c| c.events).sum();
        RunSummary {
            stage: self.stage.clone(),
            planned: self.planned,
            skipped: self.committed.saturating_sub(ran),
            ran,
            commits: self.commits.clone(),
            failed: self.failed.clone(),
            interrupted: !self.waited,
            ..RunSummary::default()
        }
    }
}

/// Why a cluster run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("cannot store the plan")]
    Plan(#[from] ObjectError),
    #[error(transparent)]
    Slurm(#[from] SlurmError),
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(transparent)]
    Folder(#[from] FolderError),
    #[error(transparent)]
    Tasks(#[from] TasksFailed),
}

/// Where a stage's units run on Slurm: the store every node sees, and where the
/// submitter shows its progress.
pub struct Slurm<'a> {
    pub store: &'a Store,
    pub progress: &'a dyn Progress,
    pub settings: &'a SlurmSettings,
}

/// Cuts the planned `units` of `stage` (those the log lacks, as the pipeline planned them)
/// into shards, freezes them into the plan `freeze` makes, submits it (one array, or
/// several beyond the cluster's `MaxArraySize`) and, when asked, waits for it.
pub fn run(
    on: &Slurm<'_>,
    stage: &str,
    units: Vec<Hash>,
    freeze: impl FnOnce(Vec<Hash>, u32) -> Plan,
) -> Result<ClusterRun, ClusterError> {
    let (store, slurm) = (on.store, on.settings);
    let first_version = StageLog::new(store, stage)?.list()?.len() as u64;
    let max_array_size = if units.is_empty() {
        arrays::DEFAULT_MAX_ARRAY_SIZE
    } else {
        slurm::max_array_size()?
    };
    let shards = shard_count(slurm.shards, slurm.max_running, units.len(), max_array_size);
    let plan = freeze(units, shards);
    let hash = plan.put(store)?;
    let mut run = ClusterRun {
        stage: stage.into(),
        plan: hash,
        shards,
        submission: None,
        planned: plan.units.len() as u64,
        committed: 0,
        waited: slurm.wait,
        failed: Vec::new(),
        commits: Vec::new(),
    };
    if plan.units.is_empty() {
        return Ok(run);
    }
    let submission = slurm::submit(store, &hash, &plan, slurm, max_array_size)?;
    let jobs: Vec<&str> = submission.arrays.iter().map(|a| a.job_id.as_str()).collect();
    on.progress.info(&format!(
        "submitted plan {} as Slurm job {} ({shards} shards, {} at once)",
        hash.short(),
        jobs.join(", "),
        slurm.max_running
    ));
    if slurm.wait {
        run.committed = wait(on, &plan, &submission)?;
        let view = StageLog::new(store, stage)?.view()?;
        let report = tasks::check(store, &hash, &plan, &submission.arrays, &view)?;
        if !report.faults.is_empty() {
            return Err(TasksFailed {
                plan: hash,
                shards,
                report,
            }
            .into());
        }
        run.failed = PlanFolder::new(store, hash).failed_units(shards)?;
        run.commits = commits_of(store, &plan.stage, &submission, first_version)?;
    }
    run.submission = Some(submission);
    Ok(run)
}

/// Shows committed / planned units until the array has no task left; the units committed.
fn wait(on: &Slurm<'_>, plan: &Plan, submission: &Submission) -> Result<u64, ClusterError> {
    let log = StageLog::new(on.store, &plan.stage)?;
    let mut view = log.view()?;
    on.progress.begin(&plan.stage, plan.units.len() as u64);
    let mut shown = 0;
    loop {
        let active = slurm::active(&submission.arrays)?;
        log.refresh(&mut view)?;
        let committed = plan.units.iter().filter(|k| view.contains(k)).count() as u64;
        on.progress.advance(committed.saturating_sub(shown));
        shown = shown.max(committed);
        if !active {
            on.progress.end();
            return Ok(committed);
        }
        std::thread::sleep(POLL);
    }
}

/// The segments from version `from` on that the submission's tasks committed.
fn commits_of(
    store: &Store,
    stage: &str,
    submission: &Submission,
    from: u64,
) -> Result<Vec<Committed>, LogError> {
    let log = StageLog::new(store, stage)?;
    let ours = |job: &str| submission.arrays.iter().any(|a| a.job_id == job);
    let mut commits = Vec::new();
    for r in log.list()?.into_iter().filter(|r| r.version >= from) {
        let (hash, meta) = log.check_with_meta(&r)?;
        if meta.slurm.as_ref().is_some_and(|t| ours(&t.job)) {
            commits.push(Committed {
                version: r.version,
                hash,
                events: meta.events,
                duplicates: 0,
            });
        }
    }
    Ok(commits)
}
