//! `ml2b stage <name>`: run one stage over the store and report what it found.
//!
//! `translate-validate` prints one line per (competition, language) with BLEU (0–1), chrF,
//! AC1 (or `-` without ratings) and the verdict, then every failing pair with its reasons;
//! with `--json`, `{"summary": RunSummary, "checks": [TranslationCheck…]}`. Exit 1 when a
//! pair fails its gate (a gate failing is the work failing: exit codes in `commands`).
//! `generate`, `execute`, `grade` and `analyze` print their run summary (`--json`: the
//! `RunSummary`) and, for execute and grade, a count per outcome, for analyze the rows of
//! each table (and, on stderr, the planned samples still without a verdict); they exit 1
//! when a unit could not run.

use std::io::Write;

use super::{ExitStatus, ProgressBars};
use crate::cli::{StageArgs, StageCommand};
use crate::cluster::ClusterRun;
use crate::config::{
    AnalyzeSettings, ExecuteSettings, GenerateSettings, GradeSettings, TranslateValidateSettings,
};
use crate::events::{Execution, Grade, TranslationCheck};
use crate::log::{EventBody, StageLog};
use crate::pipeline::{Pipeline, Ran};
use crate::settings::GlobalSettings;
use crate::stages::RunSummary;
use crate::terminal::{Column, table};

/// Runs `ml2b stage`.
pub(super) fn stage(settings: &GlobalSettings, args: &StageArgs) -> anyhow::Result<ExitStatus> {
    let progress = ProgressBars::new(&settings.printer);
    let pipeline = Pipeline::new(&settings.store, &progress);
    match &args.stage {
        StageCommand::TranslateValidate(a) => {
            let (summary, checks) = pipeline.translate_validate(&TranslateValidateSettings::resolve(a))?;
            report(settings, &summary, &checks)
        }
        StageCommand::Generate(a) => {
            let summary = match pipeline.generate_on_engine(&GenerateSettings::resolve(a)?)? {
                Ran::Slurm(run) => return cluster_report(settings, &run),
                Ran::Here(summary) => summary,
            };
            summarize(settings, &summary, None)
        }
        StageCommand::Execute(a) => {
            let summary = match pipeline.execute_on_engine(&ExecuteSettings::resolve(a)?)? {
                Ran::Slurm(run) => return cluster_report(settings, &run),
                Ran::Here(summary) => summary,
            };
            let outcomes = count_latest::<Execution>(settings, |x| x.outcome.to_string())?;
            summarize(settings, &summary, Some(outcomes))
        }
        StageCommand::Analyze(a) => {
            let summary = pipeline.analyze(&AnalyzeSettings::resolve(a)?)?;
            let rows = crate::stages::analyze::latest(&settings.store)?
                .into_iter()
                .map(|e| (e.body.name, e.body.rows))
                .collect();
            // The tables record what is missing; say it here too, without failing the stage.
            let completeness = super::report::stored_completeness(settings)?;
            super::judge_completeness(&settings.printer, completeness.as_ref(), true);
            summarize(settings, &summary, Some(rows))
        }
        StageCommand::Grade(a) => {
            let summary = pipeline.grade(&GradeSettings::resolve(a)?)?;
            let verdicts =
                count_latest::<Grade>(
                    settings,
                    |g| if g.valid { "valid".into() } else { "invalid".into() },
                )?;
            summarize(settings, &summary, Some(verdicts))
        }
    }
}

/// Counts the log's events by a key.
fn count_latest<B: EventBody>(
    settings: &GlobalSettings,
    key: impl Fn(&B) -> String,
) -> anyhow::Result<std::collections::BTreeMap<String, u64>> {
    let log = StageLog::new(&settings.store, B::STAGE)?;
    let state = log.state::<B>(0)?;
    let mut counts = std::collections::BTreeMap::new();
    for e in state.events() {
        *counts.entry(key(&e.body)).or_insert(0) += 1;
    }
    Ok(counts)
}

fn summarize(
    settings: &GlobalSettings,
    summary: &RunSummary,
    counts: Option<std::collections::BTreeMap<String, u64>>,
) -> anyhow::Result<ExitStatus> {
    if settings.printer.json {
        settings
            .printer
            .json(&serde_json::json!({ "summary": summary, "counts": counts }))?;
    } else {
        write!(settings.printer.stdout(), "{}", summary_lines(summary))?;
        for (k, n) in counts.iter().flatten() {
            writeln!(settings.printer.stdout(), "  {k}: {n}")?;
        }
        for (label, error) in &summary.failed {
            writeln!(settings.printer.stdout(), "  FAILED {label}: {error}")?;
        }
    }
    Ok(if summary.failed.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

/// A run summary's first lines: what was planned, skipped and appended, then what the
/// model's request budget did, when a model was asked.
pub(crate) fn summary_lines(summary: &RunSummary) -> String {
    let mut text = format!(
        "{}: {} planned, {} already in the log, {} new events\n",
        summary.stage,
        summary.planned,
        summary.skipped,
        summary.appended()
    );
    if let Some(r) = &summary.requests {
        text += &format!("  {}\n", requests_line(r));
    }
    text
}

/// What a model's request budget did, in a line: requests and 429s, the in-flight limit
/// and how it moved, the time requests waited for it.
pub(crate) fn requests_line(r: &crate::providers::budget::Report) -> String {
    let mut line = format!(
        "requests to `{}`: {} sent, {} answered 429; in flight at most {} (peak {}",
        r.model, r.requests, r.throttled, r.max_in_flight, r.peak_in_flight
    );
    if r.lowest_limit < r.max_in_flight {
        line += &format!(", lowered to {}, ending at {}", r.lowest_limit, r.final_limit);
    }
    line += &format!("); waited {:.1} s in all", r.waited_ms as f64 / 1000.0);
    for (what, limit) in [
        ("requests", r.requests_per_minute.map(u64::from)),
        ("tokens", r.tokens_per_minute),
    ] {
        if let Some(n) = limit {
            line += &format!("; {n} {what} a minute");
        }
    }
    line
}

/// A cluster run: the plan and job, committed / planned units, failed units. Exit 1 when a
/// waited-for array left units uncommitted.
fn cluster_report(settings: &GlobalSettings, run: &ClusterRun) -> anyhow::Result<ExitStatus> {
    if settings.printer.json {
        settings.printer.json(run)?;
    } else {
        let mut out = settings.printer.stdout();
        let job = run.submission.as_ref().map_or_else(
            || "nothing to submit".into(),
            |s| {
                let ids: Vec<&str> = s.arrays.iter().map(|a| a.job_id.as_str()).collect();
                format!("Slurm job {}", ids.join(", "))
            },
        );
        writeln!(
            out,
            "{}: plan {} ({} shards), {job}: {} of {} planned units committed",
            run.stage, run.plan, run.shards, run.committed, run.planned
        )?;
        for (label, error) in &run.failed {
            writeln!(out, "  FAILED {label}: {error}")?;
        }
    }
    let incomplete = run.waited && run.submission.is_some() && run.committed < run.planned;
    Ok(if incomplete {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}

/// The columns of the translation checks (the last, the verdict, is free).
const CHECKS: [Column; 5] = [
    Column::left(28),
    Column::left(4),
    Column::right(6),
    Column::right(6),
    Column::right(6).gap(2),
];

fn check_line(c: &TranslationCheck) -> Vec<String> {
    let verdict = if c.passed { "pass" } else { "FAIL" };
    vec![
        c.competition.clone(),
        c.language.clone(),
        fmt(c.bleu, 3),
        fmt(c.chrf, 1),
        fmt(c.ac1, 3),
        verdict.to_string(),
    ]
}

fn fmt(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.digits$}"))
}

pub(crate) fn report(
    settings: &GlobalSettings,
    summary: &RunSummary,
    checks: &[TranslationCheck],
) -> anyhow::Result<ExitStatus> {
    let failing: Vec<&TranslationCheck> = checks.iter().filter(|c| !c.passed).collect();
    if settings.printer.json {
        settings
            .printer
            .json(&serde_json::json!({ "summary": summary, "checks": checks }))?;
    } else {
        let header = ["competition", "lang", "BLEU", "chrF", "AC1", "verdict"];
        let mut lines = vec![header.map(String::from).to_vec()];
        lines.extend(checks.iter().map(check_line));
        write!(settings.printer.stdout(), "{}", table(&CHECKS, &lines))?;
        writeln!(
            settings.printer.stdout(),
            "{} checks ({} new, {} already in the log); {} fail their gate",
            checks.len(),
            summary.appended(),
            summary.skipped,
            failing.len()
        )?;
        if checks.iter().all(|c| c.ac1.is_none()) && !checks.is_empty() {
            settings
                .printer
                .info("no human ratings (`ml2b annotate import`, or manifests/annotations/): the AC1 gate was not applied");
        }
        for c in &failing {
            writeln!(
                settings.printer.stdout(),
                "FAIL {}/{}: {}",
                c.competition,
                c.language,
                c.reasons.join("; ")
            )?;
        }
    }
    Ok(if failing.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
