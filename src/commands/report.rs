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
//! Files are written atomically; a report is a pure function of the analyze events, so two
//! reports of the same store are byte-identical. When the `completeness` table counts
//! planned samples without a verdict, the index and SOURCES.txt open with a notice, the
//! missing samples are listed on stderr, and the exit status is 1 unless
//! `--accept-incomplete` (the files are written either way). stdout lists the files written
//! (`--json`: `{"out", "files", "tables"}`).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use anyhow::Context;
use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

use super::ExitStatus;
use crate::competition::Benchmark;
use crate::events::Analysis;
use crate::log::Event;
use crate::query::catalog;
use crate::report::{self, Section, Style, Table};
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
    let files = render(&bench, &tables, &events, completeness.as_ref())?;
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

type Files = BTreeMap<String, Vec<u8>>;

fn render(
    bench: &Benchmark,
    tables: &[Table],
    events: &[Event<Analysis>],
    completeness: Option<&report::Completeness>,
) -> anyhow::Result<Files> {
    let style = Style::default();
    let mut files = Files::new();
    let mut all: Vec<Table> = Vec::new();
    if let Some(aup) = tables.iter().find(|t| t.name == "aup") {
        all.push(aup_pr(aup)?);
    }
    all.extend(tables.iter().cloned());
    let mut sections = plots(bench, &all, &mut files)?;
    for t in &all {
        files.insert(t.file_name("md"), report::markdown(t, style)?.into_bytes());
        files.insert(t.file_name("csv"), report::csv(t)?.into_bytes());
        files.insert(t.file_name("tex"), report::latex(t, style)?.into_bytes());
        sections.push(Section::for_table(t, None, style)?);
    }
    let notice = completeness.and_then(report::Completeness::banner);
    let html = report::index_html_with_notice("ML2B results", notice.as_deref(), &sections)?;
    files.insert("index.html".into(), html.into_bytes());
    let mut sources_txt = notice.map(|n| format!("{n}\n\n")).unwrap_or_default();
    sources_txt.push_str(&sources(events));
    files.insert("SOURCES.txt".into(), sources_txt.into_bytes());
    Ok(files)
}

/// One section per plot, each under its own heading (a plot is not the table it is drawn
/// from): the summaries over all models first, then one heat map per model.
fn plots(bench: &Benchmark, tables: &[Table], files: &mut Files) -> anyhow::Result<Vec<Section>> {
    let by_name = |n: &str| tables.iter().find(|t| t.name == n);
    let mut out = Vec::new();
    if let Some(t) = by_name("rp_matrix") {
        let svg = profiles(t, files)?;
        out.push(plot("Performance profiles", PROFILES, svg));
    }
    if let Some(t) = by_name("pass_rate_by_tier") {
        let svg = tier_bars(t, files)?;
        out.push(plot("Pass rate by resource tier", TIER_BARS, svg));
    }
    if let Some(t) = by_name("rp_matrix") {
        for (heading, svg) in heatmaps(bench, t, files)? {
            out.push(plot(&heading, HEATMAP, svg));
        }
    }
    Ok(out)
}

const PROFILES: &str = "For each model, the share of cells (competition × language) with \
    r ≥ τ: a curve that stays high longer reaches higher scores on more cells (rp_matrix).";
const TIER_BARS: &str = "Pass rate per model and resource tier (pass_rate_by_tier).";
const HEATMAP: &str = "r per competition and language: the cell's mean r_p over seeds, \
    missing seeds counting 0 (rp_matrix).";

fn plot(heading: &str, description: &str, svg: String) -> Section {
    Section {
        heading: heading.into(),
        description: description.into(),
        svg: Some(svg),
        ..Section::default()
    }
}

/// One line per table: the analyze event it came from and what that event read.
fn sources(events: &[Event<Analysis>]) -> String {
    let mut s = String::new();
    for e in events {
        s.push_str(&format!(
            "{}\tevent {}\tquery {}\tresult {}\t{}\n",
            e.body.name,
            e.id,
            e.body.query_blake3,
            e.body.result_blake3,
            e.body.inputs.join(" ")
        ));
    }
    s
}

/// The paper's layout of `aup`: one row per model, one column per language, "AUP / PR".
fn aup_pr(aup: &Table) -> anyhow::Result<Table> {
    let names = report::series_names(aup)?;
    let languages = report::text_column(aup, "language")?;
    let (a, pr) = (
        report::float_column(aup, "aup")?,
        report::float_column(aup, "pass_rate")?,
    );
    let mut columns: Vec<&str> = Vec::new();
    let mut rows: Vec<(String, BTreeMap<&str, String>)> = Vec::new();
    for i in 0..names.len() {
        if !columns.contains(&languages[i]) {
            columns.push(languages[i]);
        }
        if rows.last().is_none_or(|(n, _)| *n != names[i]) {
            rows.push((names[i].clone(), BTreeMap::new()));
        }
        let cell = match (a[i], pr[i]) {
            (Some(a), Some(p)) => format!("{a:.3} / {p:.1}"),
            _ => "—".into(),
        };
        rows.last_mut()
            .expect("pushed above")
            .1
            .insert(languages[i], cell);
    }
    let mut fields = vec![Field::new("model", DataType::Utf8, false)];
    let mut arrays: Vec<ArrayRef> = vec![Arc::new(StringArray::from_iter_values(
        rows.iter().map(|r| r.0.clone()),
    ))];
    for c in &columns {
        fields.push(Field::new(*c, DataType::Utf8, true));
        arrays.push(Arc::new(StringArray::from_iter(
            rows.iter().map(|r| r.1.get(c).cloned()),
        )));
    }
    Ok(Table {
        name: "aup_pr".into(),
        title: "AUP / PR per model and language".into(),
        description: "The paper's layout of aup.sql: each cell is AUP (ml2b convention, mean of min(r, 1) over competitions) / pass rate in percent; Avg. is the plain mean over languages.".into(),
        batch: RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?,
    })
}

/// One heat map per (model, format): competitions × languages in the manifest's order.
fn heatmaps(bench: &Benchmark, t: &Table, files: &mut Files) -> anyhow::Result<Vec<(String, String)>> {
    let order: Vec<String> = bench.languages.all().iter().map(|l| l.code.clone()).collect();
    Ok(report::heatmaps(t, &order)?
        .into_iter()
        .map(|plot| (plot.heading.clone(), insert(files, plot)))
        .collect())
}

/// Attainment profiles of every (model, format) over all its cells.
fn profiles(t: &Table, files: &mut Files) -> anyhow::Result<String> {
    Ok(insert(files, report::profiles(t)?))
}

/// Pass rate per resource tier, one bar per (model, format).
fn tier_bars(t: &Table, files: &mut Files) -> anyhow::Result<String> {
    Ok(insert(files, report::tier_bars(t)?))
}

/// Adds the plot's file; its name.
fn insert(files: &mut Files, plot: report::Plot) -> String {
    files.insert(plot.file.clone(), plot.svg.into_bytes());
    plot.file
}
