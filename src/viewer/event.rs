//! `/event/<id>`: any event, by id, unit key or unique hex prefix of either, in any log
//! ([`crate::record`]). The events of a run (generate, execute, grade) redirect to its run
//! page; an aide attempt, an analyze table or a translation check is shown with what it
//! names; any other event with its fields. Every page ends with the related events, each a
//! link.

use axum::extract::{Path, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use minijinja::{Value, context};

use super::error::not_found;
use super::html::{Nav, fields, number, page as shell, pre, pre_cut};
use super::listing::listing;
use super::templates::{render, safe};
use super::{ViewError, Viewer, is_hex_id};
use crate::record::{Detail, EventRow, Link, Record, Step, Table, Texts};

/// `GET /event/<id>`.
pub(super) async fn page(
    State(viewer): State<Viewer>,
    Path(id): Path<String>,
) -> Result<Response, ViewError> {
    let record = load(&viewer, &id).await?;
    if let Detail::Run(run) = &record.detail {
        return Ok(Redirect::to(&format!("/run/{}", run.generation.event_id.to_hex())).into_response());
    }
    let e = &record.event;
    let detail = match &record.detail {
        Detail::Attempt(step) => attempt(step)?,
        Detail::Analysis(table) => analysis(table)?,
        Detail::Translation(texts) => translation(texts)?,
        Detail::Run(_) | Detail::Event => body_fields(e)?,
    };
    let hex = e.event_id.to_hex();
    let body = render(
        "event.html",
        context! {
            log => e.log,
            short => &hex[..12],
            header => safe(header(e)?),
            detail => safe(detail),
            links => safe(links(&record.links)?),
        },
    )?;
    let title = format!("{} {}", e.log, &hex[..12]);
    Ok(Html(shell(&title, Nav::None, &body)?).into_response())
}

/// The record `id` names; 404 when it is not hex or names no event (or several).
pub(crate) async fn load(viewer: &Viewer, id: &str) -> Result<Record, ViewError> {
    if !is_hex_id(id) {
        return Err(not_found(format!(
            "`{id}` is not an event id, unit key or hex prefix of one"
        )));
    }
    let found = viewer.records().resolve(id).await?;
    Ok(viewer.records().load(&found).await?)
}

/// The common columns of an event (`templates/header.html`).
pub(crate) fn header(e: &EventRow) -> Result<String, ViewError> {
    let upstream: Vec<String> = e.upstream.iter().map(|h| h.to_hex()).collect();
    Ok(render(
        "header.html",
        context! {
            log => e.log,
            id => e.event_id.to_hex(),
            key => e.unit_key.to_hex(),
            upstream,
            created => e.created_at,
            host => e.host,
            ms => e.duration_ms,
        },
    )?)
}

/// The related events, as a table of links (`templates/links.html`).
pub(crate) fn links(links: &[Link]) -> Result<String, ViewError> {
    let links: Vec<_> = links
        .iter()
        .map(|l| {
            context! {
                relation => l.relation,
                log => l.log,
                id => l.event_id.to_hex(),
                label => l.label,
            }
        })
        .collect();
    Ok(render("links.html", context! { links })?)
}

fn body_fields(e: &EventRow) -> Result<String, ViewError> {
    let pairs = e.body.iter().map(|(name, value)| {
        let text = match value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        (name.as_str(), Value::from(text))
    });
    Ok(fields(Some("Fields"), pairs)?)
}

fn attempt(step: &Step) -> Result<String, ViewError> {
    let a = &step.attempt.body;
    let response = Some(&a.response_blake3);
    let term_out = format!("ml2b show {} --raw term-out", step.attempt.event_id.to_hex());
    let code = match &step.code {
        Some(code) => Some(safe(listing(code, &[], &a.code_blake3)?)),
        None => None,
    };
    let text = match &step.response {
        Some(text) => Some(safe(pre_cut(text, response, "")?)),
        None => None,
    };
    Ok(render(
        "attempt.html",
        context! {
            step => a.step,
            search => a.search.to_hex(),
            model => a.model,
            competition => a.competition,
            language => a.language,
            format => a.format.to_string(),
            seed => a.seed,
            node => a.node,
            stage => a.stage,
            debug_depth => a.debug_depth,
            parent => a.parent.as_deref().unwrap_or("—"),
            outcome => format!("{} ({:.1} s)", a.outcome, a.exec_seconds),
            metric => safe(number(a.metric)),
            direction => if a.maximize { "maximize" } else { "minimize" },
            buggy => a.is_buggy,
            tokens => format!("{} in, {} out, ${:.4}", a.input_tokens, a.output_tokens, a.cost_usd),
            run => step.run.as_ref().map(|h| h.to_hex()),
            plan => safe(pre_cut(&a.plan, response, "")?),
            analysis => safe(pre_cut(&a.analysis, response, "")?),
            code,
            term_out => safe(pre_cut(&a.term_out, None, &term_out)?),
            response => text,
        },
    )?)
}

fn analysis(table: &Table) -> Result<String, ViewError> {
    let a = &table.analysis.body;
    let sql = match &table.query {
        Some(sql) => Some(safe(pre(sql)?)),
        None => None,
    };
    Ok(render(
        "analysis.html",
        context! {
            name => a.name,
            rows => a.rows,
            result => a.result_blake3.to_hex(),
            query => a.query_blake3.to_hex(),
            inputs => a.inputs.join(" "),
            columns => a.columns,
            cells => table.rows,
            more => a.rows.saturating_sub(table.rows.len() as u64),
            sql,
        },
    )?)
}

fn translation(texts: &Texts) -> Result<String, ViewError> {
    let t = &texts.check.body;
    let missing = "(not shown: the benchmark root does not hold the text this check read)";
    let text = |t: &Option<String>| pre(t.as_deref().unwrap_or(missing)).map(safe);
    let back = match t.back_blake3 {
        Some(_) => Some(text(&texts.back)?),
        None => None,
    };
    Ok(render(
        "translation.html",
        context! {
            competition => t.competition,
            language => t.language,
            tier => t.tier,
            translation => t.translation,
            bleu => safe(number(t.bleu)),
            min_bleu => t.min_bleu.to_string(),
            bleu_signature => t.bleu_signature,
            chrf => safe(number(t.chrf)),
            chrf_signature => t.chrf_signature,
            ac1 => safe(number(t.ac1)),
            min_ac1 => t.min_ac1.to_string(),
            ac1_low => safe(number(t.ac1_ci_low)),
            ac1_high => safe(number(t.ac1_ci_high)),
            passed => t.passed.to_string(),
            reasons => t.reasons.join("; "),
            text => text(&texts.text)?,
            english => text(&texts.english)?,
            back,
        },
    )?)
}
