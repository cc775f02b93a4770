//! `ml2b worker --plan P --shard I`: one Slurm array task. Reads the frozen plan `P` from
//! the store, runs its stage restricted to shard `I` (the units the log still lacks, with
//! the plan's settings, through the same pipeline as a local run) and prints the run
//! summary as one JSON line on stdout, which the submitting `ml2b` reads from the task's
//! output. Exit 1 when a unit failed (it stays uncommitted; the next run retries it).

use super::{ExitStatus, ProgressBars};
use crate::cluster::Plan;
use crate::pipeline::Pipeline;
use crate::settings::{GlobalSettings, WorkerSettings};

/// Runs `ml2b worker`.
pub(super) fn worker(settings: &GlobalSettings, args: &WorkerSettings) -> anyhow::Result<ExitStatus> {
    let plan = Plan::get(&settings.store, &args.plan)?;
    let execute = plan.shard_settings(&args.plan, args.shard)?;
    let progress = ProgressBars::new(&settings.printer);
    let pipeline = Pipeline {
        store: &settings.store,
        progress: &progress,
    };
    let summary = pipeline.execute(&execute)?;
    settings.printer.json(&summary)?;
    Ok(if summary.failed.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
