//! `/search` and `/search/<key>`: the aide agent's searches (the `journal` log).
//!
//! A search is named by its key (the generate unit key of the sample it became) or a
//! unique prefix of at least 8 hex digits. Its attempts are drawn as the tree they grew:
//! each node under its parent, with its step, stage (draft, debug, improve), metric,
//! whether it was buggy, its plan, code and output; the attempt whose code the search
//! submitted (the code of the generate event of the search's key) is marked, and the key
//! links to that run.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::response::Html;
use datafusion::prelude::{col, lit, starts_with};

use minijinja::{Value, context};
use serde::Serialize;

use super::error::not_found;
use super::grid::{Grid, Head, HtmlGrid, Td};
use super::html::{Nav, cut, href, number, page as shell, pre_cut};
use super::listing::listing;
use super::templates::{render, safe};
use super::{ViewError, Viewer, is_hex_id};
use crate::events::{Attempt, Generation};
use crate::log::event::from_batch;
use crate::log::{Event, EventBody};

/// `GET /search`.
pub(super) async fn searches(State(viewer): State<Viewer>) -> Result<Html<String>, ViewError> {
    let sql = "SELECT search, competition, language, model, format, seed, count(*) AS attempts, \
               sum(CASE WHEN is_buggy THEN 1 ELSE 0 END) AS buggy, max(step) AS last_step \
               FROM journal GROUP BY search, competition, language, model, format, seed \
               ORDER BY competition, language, model, format, seed, search";
    let (schema, batches) = crate::query::run(viewer.ctx(), sql).await?;
    let rows = Grid::new(&schema, &batches, 4)?;
    let grid = search_list(&rows, "/search", None)?;
    let body = render(
        "searches.html",
        context! { count => rows.len(), grid => safe(grid) },
    )?;
    Ok(Html(shell("Searches", Nav::Searches, &body)?))
}

/// A list of searches (`rows`, one per search key): each key cut to 12 digits and linking
/// to `<path>/<key>`; every row of class `row_class`. The aide searches' and the react
/// searches' lists.
pub(super) fn search_list(
    rows: &Grid,
    path: &str,
    row_class: Option<&'static str>,
) -> Result<String, ViewError> {
    let links: Vec<String> = (0..rows.len())
        .map(|i| {
            href(
                &format!("{path}/{}", rows.get(i, "search").unwrap_or_default()),
                &[],
            )
        })
        .collect();
    let body = (0..rows.len())
        .map(|i| {
            rows.row(i)
                .map(|(name, text, numeric)| match name {
                    "search" => Td::new(
                        name,
                        text.map(|t| &t[..t.len().min(12)]),
                        numeric,
                        Some(&links[i]),
                    ),
                    _ => Td::new(name, text, numeric, None),
                })
                .collect()
        })
        .collect();
    HtmlGrid {
        class: "data",
        row_class,
        headers: rows
            .headers()
            .map(|(name, numeric)| Head::new(name, numeric))
            .collect(),
        rows: body,
        empty: None,
    }
    .render()
}

/// `key` in lowercase, if it is a search key or a prefix of at least 8 hex digits of one.
pub(super) fn search_prefix(key: &str) -> Result<String, ViewError> {
    let key = key.to_ascii_lowercase();
    if key.len() < 8 || !is_hex_id(&key) {
        return Err(not_found(format!(
            "`{key}` is not a search key or a prefix of at least 8 hex digits of one"
        )));
    }
    Ok(key)
}

/// `GET /search/<key>`.
pub(super) async fn tree(
    State(viewer): State<Viewer>,
    Path(key): Path<String>,
) -> Result<Html<String>, ViewError> {
    let key = search_prefix(&key)?;
    let attempts = attempts(&viewer, &key).await?;
    let Some(first) = attempts.first() else {
        return Err(not_found(format!(
            "no search of the journal has a key starting with {key}"
        )));
    };
    let search = first.body.search.to_hex();
    if attempts.iter().any(|a| a.body.search != first.body.search) {
        return Err(not_found(format!(
            "several searches have keys starting with {key}"
        )));
    }
    let submitted = submitted_code(&viewer, &search).await?;
    let a = &first.body;
    let short = &search[..12];
    let body = render(
        "search.html",
        context! {
            short,
            model => a.model,
            competition => a.competition,
            language => a.language,
            format => a.format.to_string(),
            seed => a.seed,
            count => attempts.len(),
            search,
            nodes => Tree::new(&attempts).nodes(&viewer, submitted.as_deref())?,
        },
    )?;
    Ok(Html(shell(&format!("Search {short}"), Nav::Searches, &body)?))
}

/// The attempts of the searches whose key starts with `key` (hex digits only), by step.
async fn attempts(viewer: &Viewer, key: &str) -> Result<Vec<Event<Attempt>>, ViewError> {
    let df = viewer.ctx().table(Attempt::STAGE).await.and_then(|df| {
        df.filter(starts_with(col("search"), lit(key)))?.sort(vec![
            col("step").sort(true, false),
            col("event_id").sort(true, false),
        ])
    });
    let (_, batches) = crate::query::run_frame(df).await?;
    let mut out = Vec::new();
    for b in &batches {
        out.extend(from_batch::<Attempt>(b)?);
    }
    Ok(out)
}

/// The code the search submitted: its generate event's (the latest, if several).
async fn submitted_code(viewer: &Viewer, search: &str) -> Result<Option<String>, ViewError> {
    let df = viewer.ctx().table(Generation::STAGE).await.and_then(|df| {
        df.filter(col("unit_key").eq(lit(search)))?
            .sort(vec![
                col("created_at").sort(false, true),
                col("event_id").sort(false, true),
            ])?
            .limit(0, Some(1))?
            .select_columns(&["code_blake3"])
    });
    let (schema, batches) = crate::query::run_frame(df).await?;
    let rows = Grid::new(&schema, &batches, 0)?;
    Ok((!rows.is_empty()).then(|| rows.get(0, "code_blake3").unwrap_or_default().to_string()))
}

/// The attempts as a tree: each node's children, roots under `None`.
struct Tree<'a> {
    attempts: &'a [Event<Attempt>],
    children: BTreeMap<Option<&'a str>, Vec<usize>>,
}

impl<'a> Tree<'a> {
    fn new(attempts: &'a [Event<Attempt>]) -> Self {
        let known = |node: &str| attempts.iter().any(|a| a.body.node == node);
        let mut children: BTreeMap<Option<&str>, Vec<usize>> = BTreeMap::new();
        for (i, a) in attempts.iter().enumerate() {
            // A parent that is not in the log (it should always be) shows its child as a root.
            let parent = a.body.parent.as_deref().filter(|p| known(p));
            children.entry(parent).or_default().push(i);
        }
        Self { attempts, children }
    }

    /// The roots, each with its subtree (`templates/search.html`).
    fn nodes(&self, viewer: &Viewer, submitted: Option<&str>) -> Result<Vec<Node>, ViewError> {
        self.list(None, viewer, submitted, 0)
    }

    fn list(
        &self,
        parent: Option<&str>,
        viewer: &Viewer,
        submitted: Option<&str>,
        depth: usize,
    ) -> Result<Vec<Node>, ViewError> {
        let Some(kids) = self.children.get(&parent) else {
            return Ok(Vec::new());
        };
        // A node is never its own ancestor in a real log; the depth bound keeps a damaged
        // one from recursing forever.
        if depth > self.attempts.len() {
            return Ok(Vec::new());
        }
        kids.iter()
            .map(|&i| {
                let a = &self.attempts[i];
                let children = self.list(Some(&a.body.node), viewer, submitted, depth + 1)?;
                node(viewer, a, submitted, children)
            })
            .collect()
    }
}

/// One attempt as the tree shows it: its summary line, plan, code and output, then its
/// children.
#[derive(Serialize)]
struct Node {
    class: &'static str,
    step: u32,
    stage: String,
    metric: Value,
    buggy: bool,
    chosen: bool,
    id: String,
    plan: String,
    plan_note: Value,
    code_lines: usize,
    listing: Value,
    term_out: Value,
    analysis: Value,
    children: Vec<Node>,
}

fn node(
    viewer: &Viewer,
    e: &Event<Attempt>,
    submitted: Option<&str>,
    children: Vec<Node>,
) -> Result<Node, ViewError> {
    let a = &e.body;
    let chosen = submitted == Some(a.code_blake3.to_hex().as_str());
    let class = match (a.is_buggy, chosen) {
        (_, true) => "node best",
        (true, false) => "node buggy",
        _ => "node",
    };
    let code = String::from_utf8_lossy(&viewer.store().objects().get(&a.code_blake3)?).into_owned();
    let plan = cut(&a.plan);
    let term_out = format!("ml2b show {} --raw term-out", e.id.to_hex());
    Ok(Node {
        class,
        step: a.step,
        stage: a.stage.clone(),
        metric: safe(number(a.metric)),
        buggy: a.is_buggy,
        chosen,
        id: e.id.to_hex(),
        plan: plan.shown.to_string(),
        plan_note: safe(plan.note(Some(&a.response_blake3), "")?),
        code_lines: code.lines().count(),
        listing: safe(listing(&code, &[], &a.code_blake3)?),
        term_out: safe(pre_cut(&a.term_out, None, &term_out)?),
        analysis: safe(pre_cut(&a.analysis, Some(&a.response_blake3), "")?),
        children,
    })
}
