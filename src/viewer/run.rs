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

use axum::extract::{Path, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use minijinja::{Value, context};

use super::event::{header, links, load};
use super::html::{Nav, number, page as shell, pre, pre_cut};
use super::listing::listing;
use super::templates::{render as template, safe};
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
    Ok(Html(shell(&title, Nav::Runs, &render(&viewer, &record, run)?)?).into_response())
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

/// The run page's body (`templates/run.html`).
fn render(viewer: &Viewer, record: &Record, run: &Run) -> Result<String, ViewError> {
    let g = &run.generation.body;
    let code = match &run.code {
        Some(code) => Some(safe(listing(code, &run.findings, &g.code_blake3)?)),
        None => None,
    };
    let response = match &run.response {
        Some(text) => Some(safe(pre_cut(text, g.response_blake3.as_ref(), "")?)),
        None => None,
    };
    Ok(template(
        "run.html",
        context! {
            generation => run.generation.event_id.to_hex(),
            entrant => run.entrant,
            competition => g.competition,
            language => g.language,
            language_name => viewer.language_name(&g.language).unwrap_or_default(),
            format => g.format.to_string(),
            seed => g.seed,
            provider => serde_name(&g.provider),
            agent => serde_name(&g.agent),
            tokens => format!(
                "{} in, {} out, ${:.4}, {} HTTP attempts",
                g.input_tokens, g.output_tokens, g.cost_usd, g.attempts
            ),
            text => g.text_origin(),
            translation => run.translation.as_ref().map(|t| context! {
                verdict => if t.body.passed { "passed" } else { "failed" },
                bleu => safe(number(t.body.bleu)),
                ac1 => safe(number(t.body.ac1)),
                tier => t.body.tier,
                id => t.event_id.to_hex(),
            }),
            execution => run.execution.as_ref().map(execution),
            grade => run.grade.as_ref().map(grade),
            prompt => prompt(run)?,
            english => run.english_task.as_deref().map(pre).transpose()?.map(safe),
            findings => run.findings.len(),
            code,
            response,
            sandbox => sandbox(run.execution.as_ref())?,
            attempts => attempts(run),
            external => external(run)?,
            tree => tree(&record.event),
            header => safe(header(&record.event)?),
            links => safe(links(&record.links)?),
        },
    )?)
}

fn execution(x: &Ided<Execution>) -> Value {
    let b = &x.body;
    let outcome = b.outcome.to_string();
    context! {
        class => if outcome == "ok" { "ok" } else { "bad" },
        outcome,
        detail => b.detail,
        seconds => format!("{:.1}", b.wall_seconds),
        backend => b.backend,
        id => x.event_id.to_hex(),
        leakage => b.leakage,
        network => b.network_summary().map(|(line, refused)| context! { line, refused }),
        model_cache => b.model_cache_blake3.map(|h| h.to_hex()),
        gpus => b.gpu_summary(),
    }
}

fn grade(g: &Ided<Grade>) -> Value {
    let b = &g.body;
    context! {
        score => safe(number(b.score)),
        metric => b.metric,
        direction => b.direction,
        valid => b.valid,
        reason => b.reason.as_deref().unwrap_or("—"),
        note => b.reason.as_deref().filter(|_| b.valid),
        r_p => safe(number(b.r_p)),
        baseline => safe(number(b.baseline_score)),
        r_p_automl => safe(number(b.r_p_automl)),
        automl => safe(number(b.automl_score)),
        medal => b.medal_summary(),
        id => g.event_id.to_hex(),
    }
}

/// The prompt's messages, each in a `<pre>` (no system message when it is empty).
fn prompt(run: &Run) -> Result<Option<Value>, ViewError> {
    let Some(p) = &run.prompt else {
        return Ok(None);
    };
    let system = if p.system.is_empty() {
        None
    } else {
        Some(safe(pre(&p.system)?))
    };
    Ok(Some(context! { system, user => safe(pre(&p.user)?) }))
}

/// The sandbox's stdout and stderr tails, each in a `<pre>`.
fn sandbox(x: Option<&Ided<Execution>>) -> Result<Option<Value>, ViewError> {
    let Some(x) = x else {
        return Ok(None);
    };
    Ok(Some(context! {
        stdout => safe(pre(&x.body.stdout_tail)?),
        stderr => safe(pre(&x.body.stderr_tail)?),
    }))
}

/// An external agent's run: how it ended, its gateway calls, what it kept and printed.
fn external(run: &Run) -> Result<Option<Value>, ViewError> {
    let Some(x) = &run.external else {
        return Ok(None);
    };
    let r = &x.run.body;
    let calls: Vec<Value> = x
        .calls
        .iter()
        .map(|c| {
            context! {
                call => c.call,
                protocol => c.protocol,
                status => c.status,
                refused => c.refused,
                cached => c.cached,
                tokens => format!("{} in, {} out", c.input_tokens, c.output_tokens),
                seconds => format!("{:.2}", c.answer_seconds),
            }
        })
        .collect();
    Ok(Some(context! {
        agent => r.agent,
        ended => r.ended,
        bad => r.ended != "submitted",
        exit => r.exit_code.map_or("killed".to_string(), |c| format!("exit {c}")),
        seconds => format!("{:.1}", r.wall_seconds),
        summary => format!(
            "{} request(s), {} refused; {} in, {} out, ${:.4}",
            r.calls, r.refused_calls, r.input_tokens, r.output_tokens, r.cost_usd
        ),
        calls,
        logs => x.logs.iter().map(|(path, bytes, blake3)| context! { path, bytes, blake3 }).collect::<Vec<_>>(),
        stdout => safe(pre(x.stdout.as_deref().unwrap_or_default())?),
        stderr => safe(pre(x.stderr.as_deref().unwrap_or_default())?),
        id => x.run.event_id.to_hex(),
    }))
}

/// The aide search the run came from, as a list of its attempts.
fn attempts(run: &Run) -> Vec<Value> {
    run.attempts
        .iter()
        .map(|a| {
            context! {
                step => a.step,
                stage => a.stage,
                buggy => a.is_buggy,
                metric => safe(number(a.metric)),
                best => a.is_best_so_far,
                id => a.event_id.to_hex(),
            }
        })
        .collect()
}

/// The key of the search as a tree: the generate event's unit key, and a run page is
/// always the generate event's record.
fn tree(event: &EventRow) -> Option<String> {
    (event.log == Generation::STAGE).then(|| event.unit_key.to_hex())
}
