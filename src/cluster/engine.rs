//! `--engine slurm` for the execute stage: plan here, freeze, submit one array, wait on the
//! log (module docs of [`crate::cluster`]).

use std::time::Duration;

use serde::Serialize;

use super::plan::{Plan, shard_count};
use super::slurm::{self, SlurmError, Submission};
use crate::events::Execution;
use crate::log::{EventBody, LogError, StageLog};
use crate::pipeline::{Pipeline, PipelineError};
use crate::settings::{ExecuteSettings, SlurmSettings};
use crate::stages::RunSummary;
use crate::store::{Hash, ObjectError};

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
}

/// Why a cluster run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    #[error("cannot store the plan")]
    Plan(#[from] ObjectError),
    #[error(transparent)]
    Slurm(#[from] SlurmError),
    #[error(transparent)]
    Log(#[from] LogError),
}

/// Plans the execute stage of `s`, submits it as one array and, when asked, waits for it.
pub fn execute(
    pipeline: &Pipeline,
    s: &ExecuteSettings,
    slurm: &SlurmSettings,
) -> Result<ClusterRun, ClusterError> {
    let units = pipeline.execute_pending(s)?;
    let shards = shard_count(slurm.shards, slurm.max_running, units.len());
    let plan = Plan::execute(s, units, shards);
    let hash = plan.put(pipeline.store)?;
    let mut run = ClusterRun {
        stage: Execution::STAGE.into(),
        plan: hash,
        shards,
        submission: None,
        planned: plan.units.len() as u64,
        committed: 0,
        waited: slurm.wait,
        failed: Vec::new(),
    };
    if plan.units.is_empty() {
        return Ok(run);
    }
    let submission = slurm::submit(pipeline.store.root(), &hash, &plan, slurm)?;
    pipeline.progress.info(&format!(
        "submitted plan {} as Slurm job {} ({shards} shards, {} at once)",
        hash.short(),
        submission.job_id,
        slurm.max_running
    ));
    if slurm.wait {
        run.committed = wait(pipeline, &plan, &submission)?;
        run.failed = failed_units(&submission, shards);
    }
    run.submission = Some(submission);
    Ok(run)
}

/// Shows committed / planned units until the array has no task left; the units committed.
fn wait(pipeline: &Pipeline, plan: &Plan, submission: &Submission) -> Result<u64, ClusterError> {
    let log = StageLog::new(pipeline.store, Execution::STAGE)?;
    let mut view = log.view()?;
    pipeline.progress.begin(&plan.stage, plan.units.len() as u64);
    let mut shown = 0;
    loop {
        let active = slurm::active(&submission.job_id)?;
        log.refresh(&mut view)?;
        let committed = plan.units.iter().filter(|k| view.contains(k)).count() as u64;
        pipeline.progress.advance(committed.saturating_sub(shown));
        shown = shown.max(committed);
        if !active {
            pipeline.progress.end();
            return Ok(committed);
        }
        std::thread::sleep(POLL);
    }
}

/// The failed units the tasks' outputs report (the last line of each is its run summary).
fn failed_units(submission: &Submission, shards: u32) -> Vec<(String, String)> {
    (0..shards)
        .filter_map(|i| std::fs::read_to_string(submission.output_dir.join(format!("{i}.out"))).ok())
        .filter_map(|out| {
            out.lines()
                .rev()
                .find_map(|line| serde_json::from_str::<RunSummary>(line).ok())
        })
        .flat_map(|summary| summary.failed)
        .collect()
}
