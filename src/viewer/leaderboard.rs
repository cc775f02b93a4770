//! `/leaderboard`: every entrant side by side, over all languages, per resource tier and
//! per language: the `leaderboard` table of `queries/` (MLE-bench's aggregation over seeds)
//! pivoted, one row per entrant (model and format), ranked by the chosen metric over all
//! languages.
//!
//! ```text
//! /leaderboard?metric=aup|pass_rate|any_medal     the metric shown (default aup)
//! ```
//! The `seeds` column counts the entrant's complete seeds over all languages (and those
//! dropped for lacking a cell). A cell is the mean over the complete seeds ± 1.96 · SE (its title: the seeds averaged,
//! those dropped for lacking a cell, the cells), and links to the runs behind it. A scope
//! with no complete seed shows `no complete seed`, never a number; a scope the entrant has
//! no run in is empty. Entrants without a value for the metric over all languages rank last.

use std::collections::BTreeMap;

use axum::extract::{Query, State};
use axum::response::Html;
use minijinja::context;
use serde::Serialize;

use super::grid::Grid;
use super::html::{Nav, href, page as shell};
use super::tables::by_name;
use super::templates::{render, safe};
use super::{ViewError, Viewer};

/// The metrics a leaderboard can rank by: the column, its name, its decimals.
const METRICS: [(&str, &str, usize); 3] = [
    ("aup", "AUP", 3),
    ("pass_rate", "Pass rate (%)", 1),
    ("any_medal", "Any medal (%) on MLE-bench competitions", 1),
];

/// `GET /leaderboard`.
pub(super) async fn page(
    State(viewer): State<Viewer>,
    Query(params): Query<Vec<(String, String)>>,
) -> Result<Html<String>, ViewError> {
    let metric = metric(&params)?;
    let table = by_name(&viewer, "leaderboard").await?;
    let rows = Grid::of(&table.batch, 9)?;
    let board = Board::new(&rows, metric, &viewer);
    let metrics: Vec<_> = METRICS
        .iter()
        .map(|(m, name, _)| {
            context! { name, on => *m == metric.0, href => safe(href("/leaderboard", &[("metric", m)])) }
        })
        .collect();
    let body = render(
        "leaderboard.html",
        context! {
            metric => metric.1,
            metrics,
            scopes => board.scopes,
            entrants => board.entrants,
        },
    )?;
    Ok(Html(shell("Leaderboard", Nav::Leaderboard, &body)?))
}

/// The `metric` parameter, checked.
fn metric(params: &[(String, String)]) -> Result<(&'static str, &'static str, usize), ViewError> {
    let mut chosen = METRICS[0];
    for (key, value) in params {
        if key != "metric" {
            return Err(ViewError::BadRequest(format!(
                "`{key}` is not a parameter of the leaderboard (metric)"
            )));
        }
        chosen = *METRICS.iter().find(|(m, ..)| m == value).ok_or_else(|| {
            let names: Vec<_> = METRICS.iter().map(|(m, ..)| *m).collect();
            ViewError::BadRequest(format!("metric: `{value}` is not one of {}", names.join(", ")))
        })?;
    }
    Ok(chosen)
}

/// A scope's column: its name and what a link to its runs filters on.
#[derive(Serialize)]
struct Scope {
    name: String,
    label: String,
    #[serde(skip)]
    filter: Option<&'static str>,
}

#[derive(Serialize)]
struct Cell {
    text: Option<String>,
    title: String,
    href: minijinja::Value,
}

#[derive(Serialize)]
struct Entrant {
    rank: usize,
    model: String,
    format: String,
    /// The complete seeds over all languages (and how many were dropped).
    seeds: String,
    cells: Vec<Cell>,
}

struct Board {
    scopes: Vec<Scope>,
    entrants: Vec<Entrant>,
}

impl Board {
    fn new(rows: &Grid, metric: (&str, &str, usize), viewer: &Viewer) -> Self {
        let scopes = scopes(rows, viewer);
        let mut by_entrant: BTreeMap<(String, String), BTreeMap<String, usize>> = BTreeMap::new();
        for i in 0..rows.len() {
            let key = (
                rows.get(i, "model").unwrap_or_default().to_string(),
                rows.get(i, "format").unwrap_or_default().to_string(),
            );
            let scope = rows.get(i, "scope").unwrap_or_default().to_string();
            by_entrant.entry(key).or_default().insert(scope, i);
        }
        let value = |i: usize| rows.get(i, metric.0).and_then(|v| v.parse::<f64>().ok());
        let mut entrants: Vec<_> = by_entrant
            .into_iter()
            .map(|((model, format), at)| {
                let overall = at.get("All").and_then(|&i| value(i));
                let seeds = at.get("All").map_or_else(String::new, |&i| {
                    let n = |c: &str| rows.get(i, c).unwrap_or("0").to_string();
                    match n("seeds_dropped").as_str() {
                        "0" => n("seeds"),
                        dropped => format!("{} (+{dropped} incomplete)", n("seeds")),
                    }
                });
                let cells = scopes
                    .iter()
                    .map(|s| cell(rows, at.get(&s.name).copied(), metric, s, &model, &format))
                    .collect();
                (
                    overall,
                    Entrant {
                        rank: 0,
                        model,
                        format,
                        seeds,
                        cells,
                    },
                )
            })
            .collect();
        // Best first; no value last; ties by name (the map's order, kept by a stable sort).
        entrants.sort_by(|(a, _), (b, _)| match (a, b) {
            (Some(a), Some(b)) => b.total_cmp(a),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        let entrants = entrants
            .into_iter()
            .enumerate()
            .map(|(i, (_, e))| Entrant { rank: i + 1, ..e })
            .collect();
        Self { scopes, entrants }
    }
}

/// The scopes in the table's order: All, the tiers, the languages.
fn scopes(rows: &Grid, viewer: &Viewer) -> Vec<Scope> {
    let mut seen: Vec<String> = Vec::new();
    for i in 0..rows.len() {
        let scope = rows.get(i, "scope").unwrap_or_default();
        if !seen.iter().any(|s| s == scope) {
            seen.push(scope.to_string());
        }
    }
    let tier = |s: &str| ["high", "medium", "low"].iter().position(|t| *t == s);
    let language = |s: &str| viewer.language_order().iter().position(|l| l == s);
    let rank = |s: &str| match (s, tier(s), language(s)) {
        ("All", ..) => (0, 0),
        (_, Some(t), _) => (1, t),
        (_, _, Some(l)) => (2, l),
        _ => (3, 0),
    };
    seen.sort_by_key(|s| (rank(s), s.clone()));
    seen.into_iter()
        .map(|name| {
            let (filter, label) = match rank(&name).0 {
                0 => (None, "All".to_string()),
                1 => (Some("tier"), format!("{name} tier")),
                _ => (Some("language"), name.clone()),
            };
            Scope { name, label, filter }
        })
        .collect()
}

fn cell(
    rows: &Grid,
    row: Option<usize>,
    metric: (&str, &str, usize),
    scope: &Scope,
    model: &str,
    format: &str,
) -> Cell {
    let mut filters = vec![("model", model), ("format", format)];
    if let Some(f) = scope.filter {
        filters.push((f, scope.name.as_str()));
    }
    let link = safe(href("/", &filters));
    let Some(i) = row else {
        return Cell {
            text: None,
            title: "no run in this scope".into(),
            href: link,
        };
    };
    let n = |c: &str| rows.get(i, c).unwrap_or("0").to_string();
    let title = format!(
        "{} complete seeds ({} dropped for lacking a cell), {} cells, {} without a verdict",
        n("seeds"),
        n("seeds_dropped"),
        n("cells"),
        n("missing")
    );
    let parse = |c: &str| rows.get(i, c).and_then(|v| v.parse::<f64>().ok());
    let text = match (parse(metric.0), parse(&format!("{}_se", metric.0))) {
        (Some(mean), Some(se)) => format!("{mean:.d$} ± {:.d$}", 1.96 * se, d = metric.2),
        _ if n("seeds") == "0" => "no complete seed".to_string(),
        _ => "n/a".to_string(),
    };
    Cell {
        text: Some(text),
        title,
        href: link,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metric_is_checked() {
        let p = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert_eq!(metric(&[]).unwrap().0, "aup");
        assert_eq!(metric(&p("metric", "pass_rate")).unwrap().0, "pass_rate");
        for bad in [p("metric", "r_p; DROP"), p("sort", "aup")] {
            assert!(matches!(metric(&bad), Err(ViewError::BadRequest(_))));
        }
    }
}
