//! `/matrix`: the task × language matrix of r (the `rp_matrix` table) for one series
//! (model, format), chosen by `?model=M&format=F` (default: the first). Each cell shows the
//! cell's r, shaded from red (0) to green (1 and above), and links to its runs:
//! `/?model=M&format=F&competition=C&language=L`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use axum::extract::{Query, State};
use axum::response::Html;

use super::error::not_found;
use super::html::{Nav, escape, href, page as shell};
use super::list::runs_link;
use super::{ViewError, Viewer, tables};
use crate::report::{Table, float_column, text_column};

/// One cell of the matrix.
struct Cell {
    r: Option<f64>,
    runs: Option<f64>,
    passed: Option<f64>,
}

/// One series' cells by competition, then language.
type Matrix<'a> = BTreeMap<&'a str, BTreeMap<&'a str, Cell>>;

/// `GET /matrix`.
pub(super) async fn page(
    State(viewer): State<Viewer>,
    Query(params): Query<Vec<(String, String)>>,
) -> Result<Html<String>, ViewError> {
    let (mut model, mut format) = (None, None);
    for (key, value) in &params {
        match key.as_str() {
            "model" => model = Some(value.as_str()),
            "format" => format = Some(value.as_str()),
            _ => {
                return Err(ViewError::BadRequest(format!(
                    "`{key}` is not a parameter of the matrix (model, format)"
                )));
            }
        }
    }
    let table = tables::by_name(&viewer, "rp_matrix").await?;
    let series = series(&table)?;
    let mut body = String::from("<h1>Task × language matrix of r</h1>\n");
    let Some(first) = series.first() else {
        body += "<p>No run has been graded yet.</p>\n";
        return Ok(Html(shell("Matrix", Nav::Matrix, &body)));
    };
    let chosen = (
        model.unwrap_or(&first.0).to_string(),
        format.unwrap_or(&first.1).to_string(),
    );
    if !series.contains(&chosen) {
        return Err(not_found(format!(
            "the matrix has no series {} ({})",
            chosen.0, chosen.1
        )));
    }
    body += &chooser(&series, &chosen);
    let grid = cells(&table, &chosen)?;
    body += &render(&viewer.language_order(), &chosen, &grid);
    Ok(Html(shell("Matrix", Nav::Matrix, &body)))
}

/// The (model, format) pairs, in the table's order.
fn series(t: &Table) -> Result<Vec<(String, String)>, ViewError> {
    let (models, formats) = (text_column(t, "model")?, text_column(t, "format")?);
    let mut out: Vec<(String, String)> = Vec::new();
    for (m, f) in models.iter().zip(&formats) {
        if !out.iter().any(|(a, b)| a == m && b == f) {
            out.push((m.to_string(), f.to_string()));
        }
    }
    Ok(out)
}

fn cells<'a>(t: &'a Table, (model, format): &(String, String)) -> Result<Matrix<'a>, ViewError> {
    let (models, formats) = (text_column(t, "model")?, text_column(t, "format")?);
    let (comps, langs) = (text_column(t, "competition")?, text_column(t, "language")?);
    let (r, runs, passed) = (
        float_column(t, "r")?,
        float_column(t, "runs")?,
        float_column(t, "passed")?,
    );
    let mut grid = Matrix::new();
    for i in 0..models.len() {
        if models[i] == model && formats[i] == format {
            let cell = Cell {
                r: r[i],
                runs: runs[i],
                passed: passed[i],
            };
            grid.entry(comps[i]).or_default().insert(langs[i], cell);
        }
    }
    Ok(grid)
}

fn chooser(series: &[(String, String)], chosen: &(String, String)) -> String {
    let mut out = String::from("<p class=\"series\">Series: ");
    for (m, f) in series {
        let name = escape(&format!("{m} ({f})"));
        if (m, f) == (&chosen.0, &chosen.1) {
            let _ = write!(out, "<strong>{name}</strong> ");
        } else {
            let link = href("/matrix", &[("model", m.as_str()), ("format", f.as_str())]);
            let _ = write!(out, "<a href=\"{link}\">{name}</a> ");
        }
    }
    out + "</p>\n"
}

fn render(order: &[String], (model, format): &(String, String), grid: &Matrix) -> String {
    let languages: Vec<&String> = order
        .iter()
        .filter(|l| grid.values().any(|row| row.contains_key(l.as_str())))
        .collect();
    let mut out = String::from("<table class=\"data matrix\">\n<thead><tr><th>competition</th>");
    for l in &languages {
        let _ = write!(out, "<th>{}</th>", escape(l));
    }
    out += "</tr></thead>\n<tbody>\n";
    for (competition, row) in grid {
        let _ = write!(out, "<tr><th>{}</th>", escape(competition));
        for language in &languages {
            out += &match row.get(language.as_str()) {
                None => "<td class=\"null\">—</td>".to_string(),
                Some(cell) => {
                    let filters = [
                        ("model", model.as_str()),
                        ("format", format.as_str()),
                        ("competition", *competition),
                        ("language", language.as_str()),
                    ];
                    td(cell, &runs_link(&filters))
                }
            };
        }
        out += "</tr>\n";
    }
    out + "</tbody>\n</table>\n"
}

fn td(cell: &Cell, link: &str) -> String {
    let count = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v}"));
    let title = format!("{} runs, {} passed", count(cell.runs), count(cell.passed));
    let (text, style) = match cell.r {
        Some(r) if r.is_finite() => {
            // Red at 0 through yellow to green at 1 and above.
            let hue = (r.clamp(0.0, 1.0) * 120.0).round();
            (
                format!("{r:.3}"),
                format!(" style=\"background:hsl({hue},65%,82%)\""),
            )
        }
        _ => ("—".to_string(), String::new()),
    };
    format!("<td class=\"cell num\"{style} title=\"{title}\"><a href=\"{link}\">{text}</a></td>")
}
