//! `/run/<id>`: one run, everything `ml2b show` prints about it.
//!
//! Its coordinates, the translation check of its (competition, language), the execution
//! (outcome, time, leakage), the grade (score, validity and its reason, r_p against the
//! reference solution and against AutoGluon, with both baselines' scores); the prompt in
//! its language beside the English task; the code, highlighted, each finding in a row under
//! its line ([`super::listing`]); the response; the sandbox's stdout and stderr tails; the
//! aide search it came from; and the related events. The code and the response are cut
//! short past [`super::html::SHOWN_LINES`] lines, with a link to their whole objects.
//!
//! `<id>` is the generate event's id (read without resolving it); any other id, unit key or
//! prefix naming an event of the run redirects to that URL, and one naming another event to
//! `/event/<id>`.

use std::fmt::Write as _;

use axum::extract::{Path, State};
use axum::response::{Html, IntoResponse, Redirect, Response};

use super::event::{event_link, header, links, load};
use super::html::{Nav, escape, fields, number, page as shell, pre, pre_cut};
use super::listing::listing;
use super::{ViewError, Viewer};
use crate::events::serde_name;
use crate::events::{Execution, Generation, Grade};
use crate::log::EventBody;
use crate::record::{Detail, EventRow, Found, Ided, Record, RecordError, Run};
use crate::store::Hash;

/// `GET /run/<id>`.
pub(super) async fn page(
    State(viewer): State<Viewer>,
    Path(id): Path<String>,
) -> Result<Response, ViewError> {
    let record = match generation(&viewer, &id).await? {
        Some(record) => record,
        None => load(&viewer, &id).await?,
    };
    let Detail::Run(run) = &record.detail else {
        return Ok(Redirect::to(&format!("/event/{}", record.event.event_id.to_hex())).into_response());
    };
    let canonical = run.generation.event_id.to_hex();
    if id.to_ascii_lowercase() != canonical {
        return Ok(Redirect::to(&format!("/run/{canonical}")).into_response());
    }
    let title = format!("Run {}", &canonical[..12]);
    Ok(Html(shell(&title, Nav::Runs, &render(&viewer, &record, run))).into_response())
}

/// The record of the generate event `id`, when `id` is a whole id of one: a run page's own
/// URL skips resolving, which scans every log (on 1,000,000 runs, a good part of a page's
/// time).
async fn generation(viewer: &Viewer, id: &str) -> Result<Option<Record>, ViewError> {
    let Ok(event_id) = id.parse::<Hash>() else {
        return Ok(None);
    };
    let found = Found {
        log: Generation::STAGE.to_string(),
        event_id,
        superseded: Vec::new(),
    };
    match viewer.records().load(&found).await {
        Ok(record) => Ok(Some(record)),
        Err(RecordError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn render(viewer: &Viewer, record: &Record, run: &Run) -> String {
    let g = &run.generation.body;
    let language = viewer.language_name(&g.language).unwrap_or_default();
    let mut out = format!(
        "<h1>Run {}</h1>\n<p class=\"coords\">{} · {} · {} ({}) · {} · seed {}</p>\n",
        &run.generation.event_id.to_hex()[..12],
        escape(&run.entrant),
        escape(&g.competition),
        escape(&g.language),
        escape(language),
        g.format,
        g.seed
    );
    out += &summary(run);
    out += &prompt(run);
    let n = run.findings.len();
    let _ = writeln!(
        out,
        "<h2 id=\"code\">Code ({n} finding{})</h2>",
        if n == 1 { "" } else { "s" }
    );
    out += &match &run.code {
        Some(code) => listing(code, &run.findings, &g.code_blake3),
        None => "<p class=\"null\">(no code)</p>\n".into(),
    };
    if let Some(response) = &run.response {
        let _ = writeln!(
            out,
            "<details><summary>Response of the model</summary>{}</details>",
            pre_cut(response, g.response_blake3.as_ref(), "")
        );
    }
    if let Some(x) = &run.execution {
        out += "<h2>Sandbox output</h2>\n";
        let _ = writeln!(
            out,
            "<div class=\"side\"><div><h3>stdout (tail)</h3>{}</div><div><h3>stderr (tail)</h3>{}</div></div>",
            pre(&x.body.stdout_tail),
            pre(&x.body.stderr_tail)
        );
    }
    out += &search(run, &record.event);
    out += &format!("<h2>This event</h2>\n{}", header(&record.event));
    out + &links(&record.links)
}

fn summary(run: &Run) -> String {
    let g = &run.generation.body;
    let mut pairs = vec![
        (
            "model",
            format!(
                "{} ({}, {} agent)",
                escape(&run.entrant),
                escape(&serde_name(&g.provider)),
                escape(&serde_name(&g.agent))
            ),
        ),
        (
            "tokens",
            format!(
                "{} in, {} out, ${:.4}, {} HTTP attempts",
                g.input_tokens, g.output_tokens, g.cost_usd, g.attempts
            ),
        ),
        ("generation", event_link(&run.generation.event_id.to_hex())),
    ];
    if let Some(t) = &run.translation {
        let verdict = if t.body.passed { "passed" } else { "failed" };
        let text = format!(
            "{verdict} (BLEU {}, AC1 {}, tier {}) {}",
            number(t.body.bleu),
            number(t.body.ac1),
            escape(&t.body.tier),
            event_link(&t.event_id.to_hex())
        );
        pairs.push(("translation", text));
    }
    pairs.extend(execution(run.execution.as_ref()));
    pairs.extend(grade(run.grade.as_ref()));
    format!("<h2>Summary</h2>\n{}", fields(pairs))
}

fn execution(x: Option<&Ided<Execution>>) -> Vec<(&'static str, String)> {
    let Some(x) = x else {
        return vec![("outcome", "not executed".into())];
    };
    let b = &x.body;
    let class = if b.outcome.to_string() == "ok" {
        "ok"
    } else {
        "bad"
    };
    let detail = b
        .detail
        .as_deref()
        .map_or(String::new(), |d| format!(": {}", escape(d)));
    let mut out = vec![
        (
            "outcome",
            format!(
                "<span class=\"{class}\">{}</span>{detail} ({:.1} s, {} backend)",
                b.outcome,
                b.wall_seconds,
                escape(&b.backend)
            ),
        ),
        ("execution", event_link(&x.event_id.to_hex())),
    ];
    if b.leakage {
        out.push((
            "leakage",
            "<span class=\"bad\">flagged by the static checks</span>".into(),
        ));
    }
    out
}

fn grade(g: Option<&Ided<Grade>>) -> Vec<(&'static str, String)> {
    let Some(g) = g else {
        return vec![("grade", "not graded".into())];
    };
    let b = &g.body;
    let verdict = if b.valid {
        "<span class=\"ok\">valid</span>".to_string()
    } else {
        format!(
            "<span class=\"bad\">invalid</span>: {}",
            escape(b.reason.as_deref().unwrap_or("—"))
        )
    };
    let mut out = vec![(
        "score",
        format!(
            "{} ({}, {}), {verdict}",
            number(b.score),
            escape(&b.metric),
            escape(&b.direction)
        ),
    )];
    if b.valid
        && let Some(reason) = &b.reason
    {
        out.push(("note", escape(reason)));
    }
    out.push((
        "r_p",
        format!(
            "{} against the reference solution (score {})",
            number(b.r_p),
            number(b.baseline_score)
        ),
    ));
    out.push((
        "r_p automl",
        format!(
            "{} against AutoGluon (score {})",
            number(b.r_p_automl),
            number(b.automl_score)
        ),
    ));
    if let Some(medal) = b.medal_summary() {
        out.push(("medal", escape(&medal)));
    }
    out.push(("grade", event_link(&g.event_id.to_hex())));
    out
}

/// The prompt in its language beside the English task.
fn prompt(run: &Run) -> String {
    let g = &run.generation.body;
    let lang = escape(&g.language);
    let mut out = String::from("<h2>Prompt</h2>\n<div class=\"side\">");
    let _ = write!(
        out,
        "<div class=\"prompt\" lang=\"{lang}\"><h3>Prompt ({lang})</h3>"
    );
    match &run.prompt {
        Some(p) => {
            if !p.system.is_empty() {
                let _ = write!(out, "<h4>system</h4>{}", pre(&p.system));
            }
            let _ = write!(out, "<h4>user</h4>{}", pre(&p.user));
        }
        None => out += "<p class=\"null\">(no prompt recorded)</p>",
    }
    out += "</div><div class=\"english\" lang=\"en\"><h3>English task</h3>";
    out += &match &run.english_task {
        Some(task) => pre(task),
        None => {
            "<p class=\"null\">(not shown: the benchmark root does not hold the text this run was asked)</p>"
                .into()
        }
    };
    out + "</div></div>\n"
}

/// The aide search the run came from, as a list of its attempts. The search's key is the
/// generate event's unit key, and a run page is always the generate event's record.
fn search(run: &Run, event: &EventRow) -> String {
    if run.attempts.is_empty() {
        return String::new();
    }
    let mut out = format!("<h2>aide search ({} attempts)</h2>\n", run.attempts.len());
    if event.log == Generation::STAGE {
        let _ = writeln!(
            out,
            "<p><a href=\"/search/{}\">The search as a tree</a></p>",
            event.unit_key.to_hex()
        );
    }
    out += "<ul>\n";
    for a in &run.attempts {
        let best = if a.is_best_so_far { " (best so far)" } else { "" };
        let metric = if a.is_buggy {
            "buggy".to_string()
        } else {
            format!("metric {}", number(a.metric))
        };
        let _ = writeln!(
            out,
            "<li>step {} {}: {metric}{best} {}</li>",
            a.step,
            escape(&a.stage),
            event_link(&a.event_id.to_hex())
        );
    }
    out + "</ul>\n"
}
