//! `/matrix`: the task × language matrix of r (the `rp_matrix` table) for one series
//! (model, format), chosen by `?model=M&format=F` (default: the first). Each cell shows the
//! cell's r, shaded from red (0) to green (1 and above), and links to its runs:
//! `/?model=M&format=F&competition=C&language=L`. A cell whose samples all still miss a
//! stage (`missing`: not generated, executed or graded yet) shows `pending`, unshaded, not
//! the 0 a failure shows; one with some pending shows its r (which counts them 0) marked `*`.

use std::collections::BTreeMap;

use axum::extract::{Query, State};
use axum::response::Html;

use minijinja::context;
use serde::Serialize;

use super::error::not_found;
use super::html::{Nav, href, page as shell};
use super::list::runs_link;
use super::templates::{render as template, safe};
use super::{ViewError, Viewer, tables};
use crate::report::{Table, float_column, text_column};

/// One cell of the matrix.
struct Cell {
    r: Option<f64>,
    runs: Option<f64>,
    passed: Option<f64>,
    /// Samples without a verdict yet (none: a table derived before the column existed).
    missing: Option<f64>,
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
    let Some(first) = series.first() else {
        let body = template("matrix.html", context! { series })?;
        return Ok(Html(shell("Matrix", Nav::Matrix, &body)?));
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
    let grid = cells(&table, &chosen)?;
    let body = render(&viewer.language_order(), &series, &chosen, &grid)?;
    Ok(Html(shell("Matrix", Nav::Matrix, &body)?))
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
    let missing = float_column(t, "missing").ok();
    let mut grid = Matrix::new();
    for i in 0..models.len() {
        if models[i] == model && formats[i] == format {
            let cell = Cell {
                r: r[i],
                runs: runs[i],
                passed: passed[i],
                missing: missing.as_ref().and_then(|m| m[i]),
            };
            grid.entry(comps[i]).or_default().insert(langs[i], cell);
        }
    }
    Ok(grid)
}

/// A series to choose: its name, and a link unless it is the one shown.
#[derive(Serialize)]
struct Choice {
    name: String,
    href: Option<minijinja::Value>,
}

fn chooser(series: &[(String, String)], chosen: &(String, String)) -> Vec<Choice> {
    series
        .iter()
        .map(|(m, f)| Choice {
            name: format!("{m} ({f})"),
            href: ((m, f) != (&chosen.0, &chosen.1))
                .then(|| safe(href("/matrix", &[("model", m.as_str()), ("format", f.as_str())]))),
        })
        .collect()
}

/// A cell as shown: its r, its shade (a hue, red at 0 to green at 1), its run counts and
/// the link to its runs.
#[derive(Serialize)]
struct Shown {
    text: String,
    hue: Option<String>,
    title: String,
    href: minijinja::Value,
}

/// A row of the matrix: a competition and its cells by language (`None`: no cell).
#[derive(Serialize)]
struct Row<'a> {
    competition: &'a str,
    cells: Vec<Option<Shown>>,
}

fn render(
    order: &[String],
    series: &[(String, String)],
    chosen: &(String, String),
    grid: &Matrix,
) -> Result<String, ViewError> {
    let (model, format) = chosen;
    let languages: Vec<&String> = order
        .iter()
        .filter(|l| grid.values().any(|row| row.contains_key(l.as_str())))
        .collect();
    let rows: Vec<Row<'_>> = grid
        .iter()
        .map(|(competition, row)| Row {
            competition,
            cells: languages
                .iter()
                .map(|language| {
                    row.get(language.as_str()).map(|cell| {
                        let filters = [
                            ("model", model.as_str()),
                            ("format", format.as_str()),
                            ("competition", *competition),
                            ("language", language.as_str()),
                        ];
                        shown(cell, runs_link(&filters))
                    })
                })
                .collect(),
        })
        .collect();
    Ok(template(
        "matrix.html",
        context! { series => chooser(series, chosen), languages, rows },
    )?)
}

fn shown(cell: &Cell, link: String) -> Shown {
    let count = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v}"));
    let pending = cell.missing.filter(|m| *m > 0.0);
    let mut title = format!("{} runs, {} passed", count(cell.runs), count(cell.passed));
    if let Some(m) = pending {
        title.push_str(&format!(", {m} pending (no verdict yet; counted 0 in r)"));
    }
    let (text, hue) = match (cell.r, pending) {
        (_, Some(m)) if Some(m) == cell.runs => ("pending".to_string(), None),
        // Red at 0 through yellow to green at 1 and above.
        (Some(r), _) if r.is_finite() => (
            format!("{r:.3}{}", if pending.is_some() { "*" } else { "" }),
            Some(format!("{}", (r.clamp(0.0, 1.0) * 120.0).round())),
        ),
        _ => ("—".to_string(), None),
    };
    Shown {
        text,
        hue,
        title,
        href: safe(link),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(r: f64, runs: f64, missing: Option<f64>) -> Cell {
        Cell {
            r: Some(r),
            runs: Some(runs),
            passed: Some(0.0),
            missing,
        }
    }

    #[test]
    fn a_cell_waiting_for_its_runs_is_pending_not_a_failure() {
        let all = shown(&cell(0.0, 2.0, Some(2.0)), String::new());
        assert_eq!((all.text.as_str(), all.hue), ("pending", None));
        assert!(all.title.contains("2 pending"), "{}", all.title);
        let some = shown(&cell(0.25, 2.0, Some(1.0)), String::new());
        assert_eq!(some.text, "0.250*");
        assert!(some.hue.is_some());
        let failed = shown(&cell(0.0, 2.0, Some(0.0)), String::new());
        assert_eq!(
            (failed.text.as_str(), failed.hue.as_deref()),
            ("0.000", Some("0"))
        );
        let old = shown(&cell(0.5, 2.0, None), String::new());
        assert_eq!(old.text, "0.500");
    }
}
