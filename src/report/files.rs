//! The files of a report: every table in Markdown, CSV and LaTeX, the paper's `aup_pr`
//! layout, the plots as SVG, one HTML index of all of it and `SOURCES.txt`, as a map from
//! file name to bytes (layout in `commands/report.rs`). A pure function of the tables, the
//! analyze events they came from, the language order and the completeness: two reports of
//! the same store are byte-identical.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

use super::{Completeness, ReportError, Section, Style, Table};
use crate::events::Analysis;
use crate::log::Event;

/// File name → contents.
pub type Files = BTreeMap<String, Vec<u8>>;

/// The report's files: `tables` (with `aup_pr` drawn from `aup`), their plots (heat maps'
/// languages in `languages`' order), the index and the sources of `events`.
pub fn files(
    tables: &[Table],
    events: &[Event<Analysis>],
    languages: &[String],
    completeness: Option<&Completeness>,
    heading: Option<&super::Heading>,
) -> Result<Files, ReportError> {
    let links = heading
        .and_then(|h| h.viewer.clone())
        .map(|base| super::RunLinks {
            base,
            languages: languages.to_vec(),
        });
    let style = Style::default();
    let mut files = Files::new();
    let mut all: Vec<Table> = Vec::new();
    if let Some(aup) = tables.iter().find(|t| t.name == "aup") {
        all.push(aup_pr(aup)?);
    }
    all.extend(tables.iter().cloned());
    let mut sections = plots(languages, &all, &mut files)?;
    for t in &all {
        files.insert(t.file_name("md"), super::markdown(t, style)?.into_bytes());
        files.insert(t.file_name("csv"), super::csv(t)?.into_bytes());
        files.insert(t.file_name("tex"), super::latex(t, style)?.into_bytes());
        sections.push(Section::for_linked_table(t, None, style, links.as_ref())?);
    }
    let notice = completeness.and_then(Completeness::banner);
    let html = super::index_html_headed("ML2B results", notice.as_deref(), heading, &sections)?;
    files.insert("index.html".into(), html.into_bytes());
    let mut sources_txt = notice.map(|n| format!("{n}\n\n")).unwrap_or_default();
    if let Some(h) = heading {
        sources_txt.push_str(&format!("run {}\n\n", h.run));
    }
    sources_txt.push_str(&sources(events));
    files.insert("SOURCES.txt".into(), sources_txt.into_bytes());
    Ok(files)
}

/// One section per plot, each under its own heading (a plot is not the table it is drawn
/// from): the summaries over all models first, then one heat map per model.
fn plots(languages: &[String], tables: &[Table], files: &mut Files) -> Result<Vec<Section>, ReportError> {
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
        for (heading, svg) in heatmaps(languages, t, files)? {
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
fn aup_pr(aup: &Table) -> Result<Table, ReportError> {
    let names = super::series_names(aup)?;
    let languages = super::text_column(aup, "language")?;
    let (a, pr) = (
        super::float_column(aup, "aup")?,
        super::float_column(aup, "pass_rate")?,
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
        batch: RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).map_err(|source| {
            ReportError::Layout {
                table: "aup_pr".into(),
                source,
            }
        })?,
    })
}

/// One heat map per (model, format): competitions × languages in the manifest's order.
fn heatmaps(
    languages: &[String],
    t: &Table,
    files: &mut Files,
) -> Result<Vec<(String, String)>, ReportError> {
    Ok(super::heatmaps(t, languages)?
        .into_iter()
        .map(|plot| (plot.heading.clone(), insert(files, plot)))
        .collect())
}

/// Attainment profiles of every (model, format) over all its cells.
fn profiles(t: &Table, files: &mut Files) -> Result<String, ReportError> {
    Ok(insert(files, super::profiles(t)?))
}

/// Pass rate per resource tier, one bar per (model, format).
fn tier_bars(t: &Table, files: &mut Files) -> Result<String, ReportError> {
    Ok(insert(files, super::tier_bars(t)?))
}

/// Adds the plot's file; its name.
fn insert(files: &mut Files, plot: super::Plot) -> String {
    files.insert(plot.file.clone(), plot.svg.into_bytes());
    plot.file
}
