//! `ml2b worker --plan P --shard I`: one Slurm array task. Reads the frozen plan `P` from
//! the store, runs its stage (execute, or a searching agent's generate) restricted to shard
//! `I` (the units the log still lacks, with
//! the plan's settings, through the same pipeline as a local run) and prints the run
//! summary as one JSON line on stdout, which the submitting `ml2b` reads from the task's
//! output. Exit 1 when a unit failed (it stays uncommitted; the next run retries it). On
//! SIGTERM it commits what finished, requeues its own task and exits 1 (`crate::cluster`).

use std::io::Write;

use super::{ExitStatus, ProgressBars};
use crate::cluster::Plan;
use crate::cluster::plan::ShardSettings;
use crate::config::{ExecuteSettings, GenerateSettings};
use crate::pipeline::Pipeline;
use crate::progress::Progress;
use crate::settings::{GlobalSettings, WorkerSettings};

/// Runs `ml2b worker`.
pub(super) fn worker(settings: &GlobalSettings, args: &WorkerSettings) -> anyhow::Result<ExitStatus> {
    let plan = Plan::get(&settings.store, &args.plan)?;
    let stop = Some(crate::cluster::term::catch_sigterm());
    let progress = ProgressBars::new(&settings.printer);
    let pipeline = Pipeline::new(&settings.store, &progress);
    let summary = match plan.shard_settings(&args.plan, args.shard)? {
        ShardSettings::Execute(execute) => pipeline.execute(&ExecuteSettings { stop, ..execute })?,
        ShardSettings::Generate(generate) => pipeline.generate(&GenerateSettings { stop, ..generate })?,
    };
    // On S3 the output stays on the node: the summary goes into the store.
    crate::cluster::folder::PlanFolder::new(&settings.store, args.plan)
        .record_summary(args.shard, &summary)?;
    // One line: the submitter reads the last line of each task's output.
    writeln!(settings.printer.stdout(), "{}", serde_json::to_string(&summary)?)?;
    if summary.interrupted && crate::cluster::slurm::requeue_self()? {
        progress.warn("stopped by SIGTERM: what finished is committed; the task is requeued");
    }
    Ok(if summary.failed.is_empty() && !summary.interrupted {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
