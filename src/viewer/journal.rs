//! `/search` and `/search/<key>`: the aide agent's searches (the `journal` log).
//!
//! A search is named by its key (the generate unit key of the sample it became) or a
//! unique prefix of at least 8 hex digits. Its attempts are drawn as the tree they grew:
//! each node under its parent, with its step, stage (draft, debug, improve), metric,
//! whether it was buggy, its plan, code and output; the attempt whose code the search
//! submitted (the code of the generate event of the search's key) is marked, and the key
//! links to that run.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use axum::extract::{Path, State};
use axum::response::Html;
use datafusion::prelude::{col, lit, starts_with};

use super::error::not_found;
use super::grid::{self, Grid};
use super::html::{Nav, cut, escape, number, page as shell, pre_cut};
use super::listing::listing;
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
    let mut body = format!(
        "<h1>Searches</h1>\n<p>{} aide searches in the journal.</p>\n",
        rows.len()
    );
    body += "<table class=\"data\">\n<thead><tr>";
    for (name, numeric) in rows.headers() {
        body += &grid::header(&escape(name), numeric);
    }
    body += "</tr></thead>\n<tbody>\n";
    for i in 0..rows.len() {
        body += "<tr>";
        for (name, text, numeric) in rows.row(i) {
            let link = (name == "search").then(|| format!("/search/{}", escape(text.unwrap_or_default())));
            let shown = if name == "search" {
                text.map(|t| &t[..t.len().min(12)])
            } else {
                text
            };
            body += &grid::cell(name, shown, numeric, link.as_deref());
        }
        body += "</tr>\n";
    }
    body += "</tbody>\n</table>\n";
    Ok(Html(shell("Searches", Nav::Searches, &body)))
}

/// `GET /search/<key>`.
pub(super) async fn tree(
    State(viewer): State<Viewer>,
    Path(key): Path<String>,
) -> Result<Html<String>, ViewError> {
    let key = key.to_ascii_lowercase();
    if key.len() < 8 || !is_hex_id(&key) {
        return Err(not_found(format!(
            "`{key}` is not a search key or a prefix of at least 8 hex digits of one"
        )));
    }
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
    let mut body = format!(
        "<h1>Search {}</h1>\n<p>{} · {} · {} · {} · seed {} — {} attempts. The run it became: \
         <a href=\"/event/{search}\">{}</a></p>\n",
        &search[..12],
        escape(&a.model),
        escape(&a.competition),
        escape(&a.language),
        a.format,
        a.seed,
        attempts.len(),
        &search[..12],
    );
    body += &Tree::new(&attempts).render(&viewer, submitted.as_deref())?;
    Ok(Html(shell(
        &format!("Search {}", &search[..12]),
        Nav::Searches,
        &body,
    )))
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

    fn render(&self, viewer: &Viewer, submitted: Option<&str>) -> Result<String, ViewError> {
        self.list(None, viewer, submitted, 0)
    }

    fn list(
        &self,
        parent: Option<&str>,
        viewer: &Viewer,
        submitted: Option<&str>,
        depth: usize,
    ) -> Result<String, ViewError> {
        let Some(kids) = self.children.get(&parent) else {
            return Ok(String::new());
        };
        // A node is never its own ancestor in a real log; the depth bound keeps a damaged
        // one from recursing forever.
        if depth > self.attempts.len() {
            return Ok(String::new());
        }
        let mut out = String::from("<ul class=\"tree\">\n");
        for &i in kids {
            let a = &self.attempts[i];
            out += "<li>";
            out += &node(viewer, a, submitted)?;
            out += &self.list(Some(&a.body.node), viewer, submitted, depth + 1)?;
            out += "</li>\n";
        }
        Ok(out + "</ul>\n")
    }
}

/// One attempt: its summary line, plan, code and output.
fn node(viewer: &Viewer, e: &Event<Attempt>, submitted: Option<&str>) -> Result<String, ViewError> {
    let a = &e.body;
    let chosen = submitted == Some(a.code_blake3.to_hex().as_str());
    let class = match (a.is_buggy, chosen) {
        (_, true) => "node best",
        (true, false) => "node buggy",
        _ => "node",
    };
    let code = String::from_utf8_lossy(&viewer.store().objects().get(&a.code_blake3)?).into_owned();
    let mut out = format!(
        "<div class=\"{class}\" id=\"step-{step}\" data-step=\"{step}\"><strong>step {step}</strong> · {stage} · metric {metric}{buggy}{chosen} · <a href=\"/event/{id}\">event</a>\n",
        step = a.step,
        stage = escape(&a.stage),
        metric = number(a.metric),
        buggy = if a.is_buggy {
            " · <span class=\"bad\">buggy</span>"
        } else {
            ""
        },
        chosen = if chosen {
            " · <span class=\"ok\">submitted</span>"
        } else {
            ""
        },
        id = e.id.to_hex(),
    );
    let plan = cut(&a.plan);
    let _ = write!(
        out,
        "<p class=\"plan\">{}</p>{}",
        escape(plan.shown),
        plan.note(Some(&a.response_blake3), "")
    );
    let _ = write!(
        out,
        "<details><summary>code ({} lines)</summary>{}</details>",
        code.lines().count(),
        listing(&code, &[], &a.code_blake3)
    );
    let term_out = format!("ml2b show {} --raw term-out", e.id.to_hex());
    let _ = write!(
        out,
        "<details><summary>output</summary>{}{}</details>",
        pre_cut(&a.term_out, None, &term_out),
        pre_cut(&a.analysis, Some(&a.response_blake3), "")
    );
    Ok(out + "</div>")
}
