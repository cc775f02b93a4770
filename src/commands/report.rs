//! `ml2b report [--out DIR] [--root DIR]`: the paper's tables and plots, as files.
//!
//! Brings the analyze stage up to date (a no-op when no log moved), then renders the latest
//! analyze event of every table of `queries/`:
//!
//! ```text
//! DIR/<table>.md .csv .tex      every table (LaTeX: booktabs)
//! DIR/aup_pr.md .csv .tex       the paper's layout: models × languages, "AUP / PR"
//! DIR/heatmap_<model>_<format>.svg   task × language r per model
//! DIR/profiles.svg              attainment profile curves per model
//! DIR/pass_rate_by_tier.svg     pass rate per resource tier and model
//! DIR/index.html                all of it on one page: the plots, then the tables
//! DIR/SOURCES.txt               which analyze event (and so which log heads) each table is
//! ```
//! The index is headed by the run hash (`ml2b log`'s `run`: every log's head, as `ml2b run`
//! prints it), and every cell of a table row that names a model, format, competition,
//! language, tier or outcome links to those runs in the viewer at `--viewer-url` (default
//! `http://127.0.0.1:8700/`, where `ml2b view` listens; `--viewer-url ''`: no links).
//! Files are written atomically; a report is a pure function of the analyze events, so two
//! reports of the same store are byte-identical. When the `completeness` table counts
//! planned samples without a verdict, the index and SOURCES.txt open with a notice, the
//! missing samples are listed on stderr, and the exit status is 1 unless
//! `--accept-incomplete` (the files are written either way). stdout lists the files written
//! (`--json`: `{"out", "files", "tables"}`).

use std::io::Write;

use anyhow::Context;

use super::ExitStatus;
use crate::competition::Benchmark;
use crate::events::Analysis;
use crate::log::Event;
use crate::query::catalog;
use crate::report::{self, Table};
use crate::settings::{GlobalSettings, ReportSettings};
use crate::stages::analyze::{latest, load};

/// Runs `ml2b report`.
pub(super) fn report(settings: &GlobalSettings, args: &ReportSettings) -> anyhow::Result<ExitStatus> {
    let progress = super::ProgressBars::new(&settings.printer);
    let pipeline = crate::pipeline::Pipeline::new(&settings.store, &progress);
    let analyzed = pipeline.analyze(&crate::config::AnalyzeSettings {
        root: args.root.clone(),
        tables: Vec::new(),
    })?;
    if !analyzed.failed.is_empty() {
        anyhow::bail!("analyze failed for {} table(s); see above", analyzed.failed.len());
    }
    let bench = Benchmark::load(&args.root)?;
    let events = latest(&settings.store)?;
    let tables = tables(settings, &events)?;
    let completeness = completeness(&tables)?;
    let languages: Vec<String> = bench.languages.all().iter().map(|l| l.code.clone()).collect();
    let heading = report::Heading {
        run: crate::log::current_run_hash(&settings.store)?.to_hex(),
        viewer: args.viewer_url.clone(),
    };
    let files = report::files(
        &tables,
        &events,
        &languages,
        completeness.as_ref(),
        Some(&heading),
    )?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    for (name, bytes) in &files {
        let path = args.out.join(name);
        crate::store::write_atomic(&path, bytes)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if settings.printer.json {
        let names: Vec<&String> = files.keys().collect();
        settings.printer.json(&serde_json::json!({
            "out": args.out, "files": names, "tables": tables.len(), "completeness": completeness,
        }))?;
    } else {
        for name in files.keys() {
            writeln!(settings.printer.stdout(), "{}", args.out.join(name).display())?;
        }
    }
    Ok(super::judge_completeness(
        &settings.printer,
        completeness.as_ref(),
        args.accept_incomplete,
    ))
}

/// What the latest `completeness` and `faults` tables of the store say (none: the store has
/// not analyzed them).
pub(super) fn stored_completeness(settings: &GlobalSettings) -> anyhow::Result<Option<report::Completeness>> {
    let events: Vec<_> = latest(&settings.store)?
        .into_iter()
        .filter(|e| matches!(e.body.name.as_str(), "completeness" | "faults"))
        .collect();
    completeness(&tables(settings, &events)?)
}

/// What the `completeness` and `faults` tables say (none: the store has no such table).
pub(super) fn completeness(tables: &[Table]) -> anyhow::Result<Option<report::Completeness>> {
    let Some(c) = tables.iter().find(|t| t.name == "completeness") else {
        return Ok(None);
    };
    let faults = tables.iter().find(|t| t.name == "faults");
    Ok(Some(report::Completeness::of(c, faults)?))
}

/// The stored result of every analyze event, as a report table.
fn tables(settings: &GlobalSettings, events: &[Event<Analysis>]) -> anyhow::Result<Vec<Table>> {
    let mut out = Vec::new();
    for e in events {
        let (schema, batches) = load(&settings.store, &e.body)?;
        let batch = arrow::compute::concat_batches(&schema, &batches)?;
        let q = catalog::table(&e.body.name).context("analyze event of an unknown table")?;
        out.push(Table {
            name: q.name.to_string(),
            title: q.title.to_string(),
            description: q.description(),
            batch,
        });
    }
    Ok(out)
}
