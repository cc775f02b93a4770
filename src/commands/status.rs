//! `ml2b status [--plan P]`: where the store's runs stand, local or on a cluster, from the
//! store alone ([`crate::cluster::status`]).
//!
//! Without `--plan`, on a terminal or a log: every planned sample per model and format —
//! planned, complete, and the missing ones by the stage each still waits on (the
//! `completeness` table over the `runs` view, so it counts what a local run, a crashed one
//! or a cluster's tasks committed alike) — the open faults per stage, then the submitted
//! plans.
//!
//! With `--plan` (a hash or a unique prefix of a submitted plan's): the plan's stage, when
//! and where it was made, its shards, committed / planned / failed units, every failed unit
//! with its error, the Slurm jobs it was submitted as and, once Slurm says they ended, how
//! their tasks ended (the one thing asked of Slurm, [`crate::cluster::tasks`]): each task
//! that left its shard undone without running it, with its state, exit code, node, output
//! and the output's last lines. Without: one line per submitted plan, newest first, from
//! the store alone. `--json` gives the [`PlanStatus`] (a list without `--plan`). Exit 0;
//! 1 when a task of the plan left its shard undone; 2 when `--plan` names no plan or
//! several.

use std::io::Write;

use chrono::SecondsFormat;

use super::{ExitStatus, InputError};
use crate::cluster::status::{self, PlanStatus};
use crate::cluster::tasks::{self, TaskReport};
use crate::cluster::{Plan, PlanError, slurm};
use crate::log::{StageLog, View};
use crate::settings::{GlobalSettings, StatusSettings};
use crate::store::{Hash, Store};
use crate::terminal::{Column, table};

/// Runs `ml2b status`.
pub(super) fn status(settings: &GlobalSettings, args: &StatusSettings) -> anyhow::Result<ExitStatus> {
    let store = &settings.store;
    let Some(wanted) = &args.plan else {
        let plans = status::all(store)?;
        if settings.printer.json {
            settings.printer.json(&plans)?;
        } else {
            print_samples(settings, &args.root)?;
            print_list(settings, &plans)?;
        }
        return Ok(ExitStatus::Success);
    };
    let hash = resolve(store, wanted)?;
    let frozen = Plan::get(store, &hash)?;
    let view = StageLog::new(store, &frozen.stage)?.view()?;
    let mut plan = PlanStatus::of(store, &hash, &view)?;
    plan.tasks = ended_tasks(settings, &plan, &frozen, &view)?;
    if settings.printer.json {
        settings.printer.json(&plan)?;
    } else {
        print_plan(settings, &plan)?;
    }
    let undone = plan.tasks.as_ref().map_or(0, |t| t.faults.len());
    if undone == 0 {
        return Ok(ExitStatus::Success);
    }
    settings.printer.error(format_args!(
        "{undone} Slurm task(s) of plan {} ended without running their shard",
        plan.plan.short()
    ));
    Ok(ExitStatus::Failure)
}

/// How the plan's tasks ended, once Slurm says its arrays have; none while they run, or
/// when Slurm cannot be asked (said on stderr).
fn ended_tasks(
    settings: &GlobalSettings,
    status: &PlanStatus,
    plan: &Plan,
    view: &View,
) -> anyhow::Result<Option<TaskReport>> {
    let arrays = status.arrays();
    if arrays.is_empty() {
        return Ok(None);
    }
    match slurm::active(&arrays) {
        Ok(true) => Ok(None),
        Ok(false) => Ok(Some(tasks::check(
            &settings.store,
            &status.plan,
            plan,
            &arrays,
            view,
        )?)),
        Err(e) => {
            settings.printer.warn(format_args!(
                "cannot ask Slurm whether the plan's jobs ended, so their tasks are not checked: {}",
                e.reason()
            ));
            Ok(None)
        }
    }
}

/// The plan `wanted` names: a full hash of a stored plan, or the unique submitted plan it
/// prefixes.
fn resolve(store: &Store, wanted: &str) -> Result<Hash, anyhow::Error> {
    if let Ok(hash) = wanted.parse::<Hash>() {
        return match Plan::get(store, &hash) {
            Err(PlanError::Object { .. }) => Err(InputError(format!(
                "--plan {wanted}: the store {} holds no such plan",
                store.root().display()
            ))
            .into()),
            other => other.map(|_| hash).map_err(Into::into),
        };
    }
    let matching: Vec<Hash> = crate::cluster::folder::submitted(store)?
        .into_iter()
        .filter(|h| h.to_hex().starts_with(wanted))
        .collect();
    match matching.as_slice() {
        [one] => Ok(*one),
        [] => Err(InputError(format!(
            "--plan {wanted}: no plan submitted to the store {} starts with it",
            store.root().display()
        ))
        .into()),
        many => Err(InputError(format!(
            "--plan {wanted}: {} plans start with it; give more digits",
            many.len()
        ))
        .into()),
    }
}

fn jobs(plan: &PlanStatus) -> String {
    let ids: Vec<&str> = plan.jobs.iter().map(|j| j.job_id.as_str()).collect();
    if ids.is_empty() { "-".into() } else { ids.join(",") }
}

fn time(t: &chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The samples per model and format, and the open faults per stage.
fn print_samples(settings: &GlobalSettings, root: &std::path::Path) -> anyhow::Result<()> {
    // Without a benchmark there is no `runs` view: only the plans are listed.
    let Some(bench) = super::query::optional_bench(root)? else {
        return Ok(());
    };
    let sql = |name: &str| {
        crate::query::catalog::TABLES
            .iter()
            .find(|q| q.name == name)
            .map(|q| q.sql)
            .expect("a table of the catalog")
    };
    let (samples, faults) = super::runtime()?.block_on(async {
        let session = crate::query::Session { bench: Some(&bench) };
        let ctx = session.open(&settings.store).await?;
        let samples = crate::query::run(&ctx, sql("completeness")).await?;
        let faults = crate::query::run(&ctx, sql("faults")).await?;
        Ok::<_, crate::query::QueryError>((samples, faults))
    })?;
    let mut out = settings.printer.stdout();
    if samples.1.iter().all(|b| b.num_rows() == 0) {
        writeln!(out, "samples: none planned yet")?;
    } else {
        let table = arrow::util::pretty::pretty_format_batches_with_schema(samples.0, &samples.1)?;
        writeln!(
            out,
            "samples (per model and format; missing: by the stage each waits on)\n{table}"
        )?;
    }
    writeln!(out, "open faults: {}", open_faults(&faults.1))?;
    Ok(())
}

/// `none`, or the units per stage (`generate 2, execute 1`) of the `faults` table's rows.
fn open_faults(batches: &[arrow::array::RecordBatch]) -> String {
    use arrow::array::{Array, AsArray};
    let mut per_stage: Vec<(String, i64)> = Vec::new();
    for b in batches {
        let (Some(stage), Some(units)) = (b.column_by_name("stage"), b.column_by_name("units")) else {
            continue;
        };
        let stage = arrow::compute::cast(stage, &arrow::datatypes::DataType::Utf8).unwrap_or(stage.clone());
        let units = arrow::compute::cast(units, &arrow::datatypes::DataType::Int64).unwrap_or(units.clone());
        let (stage, units) = (
            stage.as_string::<i32>(),
            units.as_primitive::<arrow::datatypes::Int64Type>(),
        );
        for i in 0..b.num_rows() {
            if stage.is_null(i) {
                continue;
            }
            let name = stage.value(i).to_string();
            match per_stage.iter_mut().find(|(s, _)| *s == name) {
                Some((_, n)) => *n += units.value(i),
                None => per_stage.push((name, units.value(i))),
            }
        }
    }
    if per_stage.is_empty() {
        return "none".into();
    }
    let parts: Vec<String> = per_stage.iter().map(|(s, n)| format!("{s} {n}")).collect();
    format!("{} (`ml2b query queries/faults.sql` says why)", parts.join(", "))
}

fn print_list(settings: &GlobalSettings, plans: &[PlanStatus]) -> anyhow::Result<()> {
    if plans.is_empty() {
        settings
            .printer
            .info("no plan was submitted to this store (`--engine slurm` submits one)");
        return Ok(());
    }
    let mut out = settings.printer.stdout();
    let header = [
        "plan",
        "stage",
        "created",
        "shards",
        "committed",
        "planned",
        "failed",
        "jobs",
    ];
    let mut lines = vec![header.map(String::from).to_vec()];
    lines.extend(plans.iter().map(plan_line));
    write!(out, "{}", table(&PLANS, &lines))?;
    Ok(())
}

/// The columns of the list of plans (the last, `jobs`, is free).
const PLANS: [Column; 7] = [
    Column::left(12).gap(2),
    Column::left(8).gap(2),
    Column::left(20).gap(2),
    Column::right(6).gap(2),
    Column::right(9).gap(2),
    Column::right(7).gap(2),
    Column::right(6).gap(2),
];

fn plan_line(p: &PlanStatus) -> Vec<String> {
    vec![
        p.plan.short(),
        p.stage.to_string(),
        time(&p.created_at),
        p.shards.to_string(),
        p.committed.to_string(),
        p.planned.to_string(),
        p.failed.len().to_string(),
        jobs(p),
    ]
}

fn print_plan(settings: &GlobalSettings, p: &PlanStatus) -> anyhow::Result<()> {
    let mut out = settings.printer.stdout();
    writeln!(out, "plan {} ({})", p.plan, p.stage)?;
    writeln!(
        out,
        "  made      {} on {}, {} shards",
        time(&p.created_at),
        p.host,
        p.shards
    )?;
    writeln!(
        out,
        "  units     {} of {} committed, {} failed",
        p.committed,
        p.planned,
        p.failed.len()
    )?;
    for j in &p.jobs {
        let last = j.first + j.shards.saturating_sub(1);
        writeln!(
            out,
            "  job       {} (shards {}-{last}), submitted {} on {}",
            j.job_id,
            j.first,
            time(&j.submitted_at),
            j.host
        )?;
    }
    for (label, error) in &p.failed {
        writeln!(out, "  FAILED    {label}: {error}")?;
    }
    if let Some(t) = &p.tasks {
        writeln!(
            out,
            "  tasks     ended; {} left their shard undone (states of {} tasks from {})",
            t.faults.len(),
            t.known,
            t.source
        )?;
        for fault in &t.faults {
            writeln!(out, "  UNDONE    {fault}")?;
        }
    }
    Ok(())
}
