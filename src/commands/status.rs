//! `ml2b status [--plan P]`: where cluster plans stand, from the store alone
//! ([`crate::cluster::status`]).
//!
//! With `--plan` (a hash or a unique prefix of a submitted plan's): the plan's stage, when
//! and where it was made, its shards, committed / planned / failed units, every failed unit
//! with its error, and the Slurm jobs it was submitted as. Without: one line per submitted
//! plan, newest first. `--json` gives the [`PlanStatus`] (a list without `--plan`). Exit 0;
//! 2 when `--plan` names no plan or several.

use std::io::Write;

use chrono::SecondsFormat;

use super::{ExitStatus, InputError};
use crate::cluster::status::{self, PlanStatus};
use crate::cluster::{Plan, PlanError};
use crate::settings::{GlobalSettings, StatusSettings};
use crate::store::{Hash, Store};

/// Runs `ml2b status`.
pub(super) fn status(settings: &GlobalSettings, args: &StatusSettings) -> anyhow::Result<ExitStatus> {
    let store = &settings.store;
    let Some(wanted) = &args.plan else {
        let plans = status::all(store)?;
        if settings.printer.json {
            settings.printer.json(&plans)?;
        } else {
            print_list(settings, &plans)?;
        }
        return Ok(ExitStatus::Success);
    };
    let plan = PlanStatus::read(store, &resolve(store, wanted)?)?;
    if settings.printer.json {
        settings.printer.json(&plan)?;
    } else {
        print_plan(settings, &plan)?;
    }
    Ok(ExitStatus::Success)
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

fn print_list(settings: &GlobalSettings, plans: &[PlanStatus]) -> anyhow::Result<()> {
    if plans.is_empty() {
        settings
            .printer
            .info("no plan was submitted to this store (`--engine slurm` submits one)");
        return Ok(());
    }
    let mut out = settings.printer.stdout();
    writeln!(
        out,
        "{:<12}  {:<8}  {:<20}  {:>6}  {:>9}  {:>7}  {:>6}  jobs",
        "plan", "stage", "created", "shards", "committed", "planned", "failed"
    )?;
    for p in plans {
        writeln!(
            out,
            "{:<12}  {:<8}  {:<20}  {:>6}  {:>9}  {:>7}  {:>6}  {}",
            p.plan.short(),
            p.stage,
            time(&p.created_at),
            p.shards,
            p.committed,
            p.planned,
            p.failed.len(),
            jobs(p)
        )?;
    }
    Ok(())
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
    Ok(())
}
