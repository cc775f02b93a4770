//! `/trajectory` and `/trajectory/<key>`: the react agent's searches (the `trajectory`
//! log), one step at a time.
//!
//! A search is named by its key (the generate unit key of the sample it became) or a
//! unique prefix of at least 8 hex digits. Its page shows every step in order: the model's
//! thought, the tool it called with its arguments, and the observation as the model was
//! shown it (an error marked), with the step's tokens, cost and times; a validation's score
//! and the submitting step are marked, and the key links to the run it became. Where the
//! log holds a step twice (a search re-derived after its generate event was lost), the
//! later event wins, as in `ml2b trajectory`.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::response::Html;
use datafusion::prelude::{col, lit, starts_with};
use minijinja::{Value, context};
use serde::Serialize;

use super::error::not_found;
use super::grid::Grid;
use super::html::{Nav, page as shell, pre_cut};
use super::journal::{search_list, search_prefix};
use super::templates::{render, safe};
use super::{ViewError, Viewer};
use crate::events::TrajectoryStep;
use crate::log::event::from_batch;
use crate::log::{Event, EventBody};

/// `GET /trajectory`.
pub(super) async fn searches(State(viewer): State<Viewer>) -> Result<Html<String>, ViewError> {
    let sql = "SELECT search, competition, language, model, format, seed, \
               count(DISTINCT step) AS steps, \
               sum(CASE WHEN is_error THEN 1 ELSE 0 END) AS errors, \
               sum(CASE WHEN tool = 'validate' THEN 1 ELSE 0 END) AS validations, \
               max(CASE WHEN submitted THEN 1 ELSE 0 END) AS submitted \
               FROM trajectory GROUP BY search, competition, language, model, format, seed \
               ORDER BY competition, language, model, format, seed, search";
    let (schema, batches) = crate::query::run(viewer.ctx(), sql).await?;
    let rows = Grid::new(&schema, &batches, 4)?;
    let grid = search_list(&rows, "/trajectory", Some("trajectory"))?;
    let body = render(
        "trajectories.html",
        context! { count => rows.len(), grid => safe(grid) },
    )?;
    Ok(Html(shell("Trajectories", Nav::Trajectories, &body)?))
}

/// `GET /trajectory/<key>`.
pub(super) async fn page(
    State(viewer): State<Viewer>,
    Path(key): Path<String>,
) -> Result<Html<String>, ViewError> {
    let key = search_prefix(&key)?;
    let steps = steps(&viewer, &key).await?;
    let Some(first) = steps.first() else {
        return Err(not_found(format!(
            "no search of the trajectory log has a key starting with {key}"
        )));
    };
    if steps.iter().any(|s| s.body.search != first.body.search) {
        return Err(not_found(format!(
            "several searches have keys starting with {key}"
        )));
    }
    let s = &first.body;
    let search = s.search.to_hex();
    let short = &search[..12];
    let shown = steps
        .iter()
        .map(|e| step(&viewer, e))
        .collect::<Result<Vec<_>, _>>()?;
    let body = render(
        "trajectory.html",
        context! {
            short,
            search,
            model => s.model,
            competition => s.competition,
            language => s.language,
            format => s.format.to_string(),
            seed => s.seed,
            protocol => s.protocol,
            count => steps.len(),
            ended => if steps.iter().any(|e| e.body.submitted) { "submitted" } else { "budget" },
            input_tokens => steps.iter().map(|e| e.body.input_tokens).sum::<u64>(),
            output_tokens => steps.iter().map(|e| e.body.output_tokens).sum::<u64>(),
            cost => format!("{:.4}", steps.iter().map(|e| e.body.cost_usd).sum::<f64>()),
            steps => shown,
        },
    )?;
    Ok(Html(shell(
        &format!("Trajectory {short}"),
        Nav::Trajectories,
        &body,
    )?))
}

/// The steps of the searches whose key starts with `key`, in step order; the later event
/// of a step wins.
async fn steps(viewer: &Viewer, key: &str) -> Result<Vec<Event<TrajectoryStep>>, ViewError> {
    let df = viewer.ctx().table(TrajectoryStep::STAGE).await.and_then(|df| {
        df.filter(starts_with(col("search"), lit(key)))?.sort(vec![
            col("created_at").sort(true, false),
            col("event_id").sort(true, false),
        ])
    });
    let (_, batches) = crate::query::run_frame(df).await?;
    let mut by_step: BTreeMap<(String, u32), Event<TrajectoryStep>> = BTreeMap::new();
    for b in &batches {
        for e in from_batch::<TrajectoryStep>(b)? {
            by_step.insert((e.body.search.to_hex(), e.body.step), e);
        }
    }
    Ok(by_step.into_values().collect())
}

/// One step as the page shows it.
#[derive(Serialize)]
struct Step {
    step: u32,
    class: &'static str,
    id: String,
    thought: Value,
    tool: Option<String>,
    arguments: Option<String>,
    observation: Value,
    is_error: bool,
    extra_calls: u32,
    validation_score: Option<String>,
    submitted: bool,
    tokens: String,
    cost: String,
    seconds: String,
}

fn step(viewer: &Viewer, e: &Event<TrajectoryStep>) -> Result<Step, ViewError> {
    let s = &e.body;
    let observation: serde_json::Value =
        serde_json::from_slice(&viewer.store().objects().get(&s.observation_blake3)?).unwrap_or_default();
    let shown = observation["shown"]
        .as_str()
        .map_or_else(|| observation.to_string(), str::to_string);
    let id = e.id.to_hex();
    let command = format!("ml2b trajectory {}", &s.search.to_hex()[..12]);
    let class = match (s.submitted, s.is_error) {
        (true, _) => "step submitted",
        (false, true) => "step error",
        _ => "step",
    };
    Ok(Step {
        step: s.step,
        class,
        thought: safe(pre_cut(&s.thought, Some(&s.message_blake3), &command)?),
        tool: s.tool.clone(),
        arguments: s.arguments.clone(),
        observation: safe(pre_cut(&shown, Some(&s.observation_blake3), &command)?),
        is_error: s.is_error,
        extra_calls: s.extra_calls,
        validation_score: s.validation_score.map(|v| format!("{v:.4}")),
        submitted: s.submitted,
        tokens: format!("{} in / {} out", s.input_tokens, s.output_tokens),
        cost: format!("{:.4}", s.cost_usd),
        seconds: format!(
            "model {:.1} s, tool {:.1} s, {:.1} s in all",
            s.answer_seconds, s.tool_seconds, s.elapsed_seconds
        ),
        id,
    })
}
