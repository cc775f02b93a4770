//! `/event/<id>`: any event, by id, unit key or unique hex prefix of either, in any log
//! ([`crate::record`]). The events of a run (generate, execute, grade) redirect to its run
//! page; an aide attempt, an analyze table or a translation check is shown with what it
//! names; any other event with its fields. Every page ends with the related events, each a
//! link.

use std::fmt::Write as _;

use axum::extract::{Path, State};
use axum::response::{Html, IntoResponse, Redirect, Response};

use super::error::not_found;
use super::html::{Nav, escape, fields, number, page as shell, pre, pre_cut};
use super::listing::listing;
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
    let mut body = format!(
        "<h1>{} event {}</h1>\n",
        escape(&e.log),
        &e.event_id.to_hex()[..12]
    );
    body += &header(e);
    body += &match &record.detail {
        Detail::Attempt(step) => attempt(step),
        Detail::Analysis(table) => analysis(table),
        Detail::Translation(texts) => translation(texts),
        Detail::Run(_) | Detail::Event => body_fields(e),
    };
    body += &links(&record.links);
    let title = format!("{} {}", e.log, &e.event_id.to_hex()[..12]);
    Ok(Html(shell(&title, Nav::None, &body)).into_response())
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

/// The common columns of an event.
pub(crate) fn header(e: &EventRow) -> String {
    let upstream: Vec<String> = e.upstream.iter().map(|h| event_link(&h.to_hex())).collect();
    fields([
        ("log", escape(&e.log)),
        ("event id", format!("<code>{}</code>", e.event_id.to_hex())),
        ("unit key", format!("<code>{}</code>", e.unit_key.to_hex())),
        (
            "upstream",
            if upstream.is_empty() {
                "—".into()
            } else {
                upstream.join(" ")
            },
        ),
        (
            "created",
            format!(
                "{} on {} ({} ms)",
                escape(&e.created_at),
                escape(&e.host),
                e.duration_ms
            ),
        ),
    ])
}

/// A link to an event, showing its first 12 digits.
pub(crate) fn event_link(hex: &str) -> String {
    let hex = escape(hex);
    format!(
        "<a href=\"/event/{hex}\"><code>{}</code></a>",
        &hex[..hex.len().min(12)]
    )
}

/// The related events, as a table of links.
pub(crate) fn links(links: &[Link]) -> String {
    if links.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<h2>Related events</h2>\n<table class=\"data links\">\n<thead><tr><th>relation</th><th>log</th><th>event</th><th>what</th></tr></thead>\n<tbody>\n",
    );
    for l in links {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&l.relation),
            escape(&l.log),
            event_link(&l.event_id.to_hex()),
            escape(&l.label)
        );
    }
    out + "</tbody>\n</table>\n"
}

fn body_fields(e: &EventRow) -> String {
    let pairs = e.body.iter().map(|(name, value)| {
        let text = match value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        (name.as_str(), escape(&text))
    });
    format!("<h2>Fields</h2>\n{}", fields(pairs))
}

fn attempt(step: &Step) -> String {
    let a = &step.attempt.body;
    let search = a.search.to_hex();
    let direction = if a.maximize { "maximize" } else { "minimize" };
    let mut out = format!(
        "<h2>aide attempt {} of search <a href=\"/search/{search}\">{}</a></h2>\n",
        a.step,
        &search[..12]
    );
    out += &fields([
        ("model", escape(&a.model)),
        ("competition", escape(&a.competition)),
        ("language", escape(&a.language)),
        ("format", a.format.to_string()),
        ("seed", a.seed.to_string()),
        (
            "node",
            format!(
                "{} ({}, debug depth {})",
                escape(&a.node),
                escape(&a.stage),
                a.debug_depth
            ),
        ),
        ("parent", escape(a.parent.as_deref().unwrap_or("—"))),
        ("outcome", format!("{} ({:.1} s)", a.outcome, a.exec_seconds)),
        (
            "metric",
            format!(
                "{} ({direction}){}",
                number(a.metric),
                if a.is_buggy { ", buggy" } else { "" }
            ),
        ),
        (
            "tokens",
            format!(
                "{} in, {} out, ${:.4}",
                a.input_tokens, a.output_tokens, a.cost_usd
            ),
        ),
        (
            "run",
            step.run.as_ref().map_or("—".into(), |h| event_link(&h.to_hex())),
        ),
    ]);
    let response = Some(&a.response_blake3);
    out += &format!(
        "<h2>Plan</h2>\n{}<h2>Analysis</h2>\n{}",
        pre_cut(&a.plan, response, ""),
        pre_cut(&a.analysis, response, "")
    );
    if let Some(code) = &step.code {
        out += &format!("<h2>Code</h2>\n{}", listing(code, &[], &a.code_blake3));
    }
    let term_out = format!("ml2b show {} --raw term-out", step.attempt.event_id.to_hex());
    out += &format!("<h2>Run output</h2>\n{}", pre_cut(&a.term_out, None, &term_out));
    if let Some(text) = &step.response {
        out += &format!(
            "<details><summary>Response</summary>{}</details>\n",
            pre_cut(text, response, "")
        );
    }
    out
}

fn analysis(table: &Table) -> String {
    let a = &table.analysis.body;
    let mut out = format!(
        "<h2>Table <a href=\"/tables/{name}\">{name}</a></h2>\n",
        name = escape(&a.name)
    );
    out += &fields([
        ("rows", a.rows.to_string()),
        ("result", format!("<code>{}</code>", a.result_blake3.to_hex())),
        ("query", format!("<code>{}</code>", a.query_blake3.to_hex())),
        ("inputs", escape(&a.inputs.join(" "))),
    ]);
    out += "<table class=\"data\">\n<thead><tr>";
    for c in &a.columns {
        let _ = write!(out, "<th>{}</th>", escape(c));
    }
    out += "</tr></thead>\n<tbody>\n";
    for row in &table.rows {
        out += "<tr>";
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out += "</tr>\n";
    }
    out += "</tbody>\n</table>\n";
    if (table.rows.len() as u64) < a.rows {
        let _ = writeln!(
            out,
            "<p>… {} more rows: the whole table is at <a href=\"/tables/{}\">/tables/{}</a>.</p>",
            a.rows - table.rows.len() as u64,
            escape(&a.name),
            escape(&a.name)
        );
    }
    if let Some(sql) = &table.query {
        out += &format!("<h2>SQL</h2>\n{}", pre(sql));
    }
    out
}

fn translation(texts: &Texts) -> String {
    let t = &texts.check.body;
    let mut out = format!(
        "<h2>Translation check {}/{}</h2>\n",
        escape(&t.competition),
        escape(&t.language)
    );
    out += &fields([
        ("tier", escape(&t.tier)),
        ("translation", escape(&t.translation)),
        (
            "BLEU",
            format!(
                "{} (gate {}, {})",
                number(t.bleu),
                t.min_bleu,
                escape(&t.bleu_signature)
            ),
        ),
        (
            "chrF",
            format!("{} ({})", number(t.chrf), escape(&t.chrf_signature)),
        ),
        (
            "AC1",
            format!(
                "{} (gate {}, 95% CI {} – {})",
                number(t.ac1),
                t.min_ac1,
                number(t.ac1_ci_low),
                number(t.ac1_ci_high)
            ),
        ),
        ("passed", t.passed.to_string()),
        ("reasons", escape(&t.reasons.join("; "))),
    ]);
    let missing = "(not shown: the benchmark root does not hold the text this check read)";
    let text = |t: &Option<String>| pre(t.as_deref().unwrap_or(missing));
    let _ = writeln!(
        out,
        "<div class=\"side\"><div lang=\"{lang}\"><h3>Text ({lang})</h3>{}</div><div lang=\"en\"><h3>English</h3>{}</div></div>",
        text(&texts.text),
        text(&texts.english),
        lang = escape(&t.language)
    );
    if t.back_blake3.is_some() {
        out += &format!("<h3>Back-translation</h3>\n{}", text(&texts.back));
    }
    out
}
