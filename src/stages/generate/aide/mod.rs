//! The `aide` agent: AIDE's tree search over attempts (WecoAI/aideml), one generate unit.
//!
//! A search makes up to `steps` attempts. Each step asks the model, in the pair's language,
//! for a new draft, the fix of a buggy attempt or one improvement of the best one
//! ([`policy`]; the prompt is the task's with `assets/generate/aide.j2` appended), extracts
//! the plan and the code, runs the code on the validation split of the public training
//! data through the execute stage's sandbox and scores it with the competition's metric
//! ([`trial`]). An attempt is buggy when its run is not `ok` or its predictions cannot be
//! scored. The best good attempt (ties: the earliest) becomes the unit's submission; with
//! none good, the last attempt does, and fails honestly in execute.
//!
//! Budgets: `steps`, and `time_budget_s` over the *recorded* time of the attempts (the
//! model's answer time, retries included, plus the validation runs'), so a re-run that
//! replays everything from the caches stops where the first run stopped. The first attempt
//! is always made; the one that crosses the budget is the last.
//!
//! Where AIDE asks a second model to review each run (`submit_review`: is_bug, summary,
//! metric), the metric here is measured by ml2b's own grader on the split and the review is
//! the run's facts, so no score is ever taken from the model's word.
//!
//! Every attempt is an event of the `journal` log ([`Attempt`]: AIDE's journal fields), keyed
//! by (the generate unit's key, step) and committed when the search ends, before the unit's
//! generate event. Nothing is lost to a crash: the requests and the runs are cached
//! (`cache/requests/`, `cache/trials/`), so a re-run replays the finished steps without a
//! call or a run and commits the same events; the log drops keys it already holds.

mod config;
pub mod policy;
pub mod trial;

use super::extract;
use super::prompt::{self, AideStep, PromptInputs, Remembered};
use crate::competition::Competition;
use crate::competition::validation::Validation;
use crate::events::Format;
use crate::events::{Attempt, Generation};
use crate::log::LogError;
use crate::metrics::grading::Direction;
use crate::providers::{ChatRequest, Message, Response, cost_usd};
use crate::stages::StageError;
use crate::stages::requests::Requests;
use crate::store::Hash;
pub use config::Config;
use policy::{Action, Node};
use trial::{Trial, Trials};

/// The agent's name in events and on the command line.
pub const AGENT: &str = "aide";

/// The longest plan kept (characters).
const PLAN_CHARS: usize = 2000;

/// The agent: its settings and where its attempts run.
pub struct Aide {
    pub config: Config,
    pub trials: Trials,
}

/// What a search unit carries from planning.
#[derive(Clone, Debug)]
pub struct Search {
    /// The generate unit's key.
    pub key: Hash,
    pub inputs: PromptInputs,
    pub format: Format,
    pub required: &'static [&'static str],
}

/// An attempt made: its journal event, and what the later prompts and the unit's event
/// need besides.
struct Made {
    attempt: Attempt,
    code: String,
    how: extract::How,
    finish_reason: Option<String>,
}

impl Aide {
    /// What the unit key covers besides the pair, model, format and seed: the agent, its
    /// settings, the first request, the split and the sandbox.
    pub fn key_params(&self, first_request: &Hash, validation_blake3: &str) -> serde_json::Value {
        serde_json::json!({
            "agent": AGENT, "config": self.config, "first_request": first_request.to_hex(),
            "validation": validation_blake3, "sandbox": self.trials.identity(),
        })
    }
}

/// The first step's request (a draft with an empty journal), for the unit key.
pub fn first_request(
    g: &Requests,
    c: &Competition,
    body: &Generation,
    inputs: &PromptInputs,
) -> Result<ChatRequest, StageError> {
    request(g, body, inputs, &draft_step(&[], maximizes(c)), 0)
}

fn maximizes(c: &Competition) -> bool {
    c.manifest.metric.direction == Direction::Maximize
}

/// Runs the search of one unit: commits its attempts to the journal and returns the
/// generate event's body, which names the chosen attempt's code.
pub async fn search(
    g: &Requests,
    aide: &Aide,
    c: &Competition,
    mut body: Generation,
    unit: Search,
) -> Result<Generation, StageError> {
    let maximize = maximizes(c);
    let split = aide.trials.split(c, aide.config.validation_fraction)?;
    let mut made: Vec<Made> = Vec::new();
    let mut nodes: Vec<Node> = Vec::new();
    let mut elapsed = 0.0;
    for step in 0..aide.config.steps {
        if step > 0 && elapsed >= aide.config.time_budget_s as f64 {
            break;
        }
        let action = policy::next(&nodes, &aide.config, maximize, body.seed, step);
        let mut m = attempt(g, aide, c, &body, &unit, &split, &made, action, step).await?;
        elapsed += m.attempt.elapsed_seconds;
        nodes.push(Node {
            parent: action.parent(),
            is_buggy: m.attempt.is_buggy,
            metric: m.attempt.metric,
        });
        m.attempt.elapsed_seconds = elapsed;
        m.attempt.debug_depth = policy::debug_depth(&nodes, step as usize);
        m.attempt.is_best_so_far = policy::best(&nodes, maximize) == Some(step as usize);
        made.push(m);
    }
    let chosen = policy::submitted(&nodes, maximize)
        .ok_or(StageError::Invariant("the search made no attempt (steps 0)"))?;
    let best = &made[chosen];
    let all = made.iter().map(|m| &m.attempt);
    body.code_blake3 = best.attempt.code_blake3;
    body.code_bytes = best.code.len() as u64;
    body.prompt_blake3 = Some(best.attempt.prompt_blake3);
    body.request_blake3 = Some(best.attempt.request_blake3);
    body.response_blake3 = Some(best.attempt.response_blake3);
    body.extraction = serde_json::to_string(&best.how).ok();
    body.finish_reason = best.finish_reason.clone();
    body.attempts = all.clone().map(|a| a.http_attempts).sum();
    body.input_tokens = all.clone().map(|a| a.input_tokens).sum();
    body.output_tokens = all.clone().map(|a| a.output_tokens).sum();
    body.cost_usd = all.map(|a| a.cost_usd).sum();
    let attempts = made
        .into_iter()
        .map(|m| (m.attempt.step, m.attempt.exec_seconds, m.attempt));
    crate::stages::requests::commit_steps(g, &unit.key, attempts)?;
    Ok(body)
}

/// One step: ask for `action`, run the answer's code on the split, and record it. The
/// attempt's `elapsed_seconds` is this step's own time; the search makes it cumulative and
/// fills in what depends on the journal (`debug_depth`, `is_best_so_far`).
#[allow(clippy::too_many_arguments)]
async fn attempt(
    g: &Requests,
    aide: &Aide,
    c: &Competition,
    body: &Generation,
    unit: &Search,
    split: &Validation,
    made: &[Made],
    action: Action,
    step: u32,
) -> Result<Made, StageError> {
    let objects = g.store.objects();
    let shown = shown_step(made, action, maximizes(c));
    let request = request(g, body, &unit.inputs, &shown, step)?;
    let prompt = serde_json::to_vec(&serde_json::json!({
        "system": request.messages[0].content, "user": request.messages[1].content,
    }))
    .map_err(LogError::Json)?;
    let prompt_hash = objects.put(&prompt).map_err(LogError::from)?;
    let key = g.key(&request, body.seed)?;
    let response = g.respond(&key, body, &request).await?;
    let completion = &response.completion;
    let found = extract::from_completion(completion, unit.required);
    let code = objects.put(found.code.as_bytes()).map_err(LogError::from)?;
    let run = aide.trials.run(&g.store, c, unit.format, &code, split).await?;
    let attempt = Attempt {
        competition: body.competition.clone(),
        language: body.language.clone(),
        model: body.model.clone(),
        format: body.format,
        seed: body.seed,
        search: unit.key,
        node: node_id(&unit.key, step),
        parent: action.parent().map(|p| node_id(&unit.key, p as u32)),
        step,
        stage: action.stage().into(),
        debug_depth: 0,
        plan: plan_of(&completion.text),
        code_blake3: code,
        prompt_blake3: prompt_hash,
        request_blake3: key,
        response_blake3: response.object,
        http_attempts: completion.attempts.len() as u32,
        input_tokens: completion.input_tokens,
        output_tokens: completion.output_tokens,
        cost_usd: cost_usd(
            completion.input_tokens,
            completion.output_tokens,
            g.model.usd_per_mtok_input,
            g.model.usd_per_mtok_output,
        ),
        analysis: analysis(&run),
        outcome: run.outcome,
        exec_seconds: run.wall_seconds,
        term_out: run.term_out,
        exc_type: run.exc_type,
        metric: run.score,
        maximize: maximizes(c),
        is_buggy: run.score.is_none(),
        is_best_so_far: false,
        elapsed_seconds: answer_seconds(&response) + run.wall_seconds,
        validation_blake3: split.blake3.clone(),
    };
    Ok(Made {
        attempt,
        code: found.code,
        how: found.how,
        finish_reason: completion.finish_reason.clone(),
    })
}

/// What the prompt shows for `action`.
fn shown_step(made: &[Made], action: Action, maximize: bool) -> AideStep {
    match action {
        Action::Draft => draft_step(made, maximize),
        Action::Debug(i) => AideStep {
            stage: "debug".into(),
            code: Some(made[i].code.clone()),
            output: Some(made[i].attempt.term_out.clone()),
            score: None,
            maximize,
            memory: Vec::new(),
        },
        Action::Improve(i) => AideStep {
            stage: "improve".into(),
            code: Some(made[i].code.clone()),
            output: None,
            score: made[i].attempt.metric.map(shown_score),
            maximize,
            memory: memory(made),
        },
    }
}

fn draft_step(made: &[Made], maximize: bool) -> AideStep {
    AideStep {
        stage: "draft".into(),
        code: None,
        output: None,
        score: None,
        maximize,
        memory: memory(made),
    }
}

/// AIDE's memory: the good attempts' plans and scores, in journal order.
fn memory(made: &[Made]) -> Vec<Remembered> {
    made.iter()
        .map(|m| &m.attempt)
        .filter_map(|a| {
            let score = a.metric.filter(|_| !a.is_buggy)?;
            Some(Remembered {
                plan: if a.plan.is_empty() {
                    "-".into()
                } else {
                    a.plan.replace('\n', " ")
                },
                score: shown_score(score),
            })
        })
        .collect()
}

fn shown_score(score: f64) -> String {
    format!("{score:.6}")
}

/// The chat request of one step. Its `seed` is (sample seed, step), so two steps with the
/// same prompt (two drafts before any attempt is good) are two samples, not one.
fn request(
    g: &Requests,
    body: &Generation,
    inputs: &PromptInputs,
    step: &AideStep,
    index: u32,
) -> Result<ChatRequest, StageError> {
    let rendered =
        prompt::render_aide(inputs, step).map_err(|e| StageError::failed("rendering the aide prompt", e))?;
    Ok(ChatRequest {
        model: g.model.model.clone(),
        messages: vec![
            Message::text("system", rendered.system),
            Message::text("user", rendered.user),
        ],
        temperature: crate::stages::requests::TEMPERATURE,
        seed: Some((u64::from(body.seed) << 32) | u64::from(index)),
        max_tokens: g.model.max_tokens.unwrap_or(crate::stages::requests::MAX_TOKENS),
        tools: Vec::new(),
    })
}

/// The recorded time of an answer: every HTTP attempt and the waits between them.
pub fn answer_seconds(r: &Response) -> f64 {
    let ms: u64 = r
        .completion
        .attempts
        .iter()
        .map(|a| a.duration_ms + a.backoff_ms.unwrap_or(0))
        .sum();
    ms as f64 / 1000.0
}

/// The plan: the answer's text before its first fence (AIDE's `extract_text_up_to_code`).
pub fn plan_of(text: &str) -> String {
    let before = text.split("```").next().unwrap_or_default().trim();
    before.chars().take(PLAN_CHARS).collect()
}

/// The review of a run, in one sentence.
fn analysis(run: &Trial) -> String {
    match (run.score, &run.reason) {
        (Some(score), _) => format!("The run ended ok; validation score {score}."),
        (None, Some(reason)) => match &run.exc_type {
            Some(exc) => format!("Buggy: {reason} ({exc})."),
            None => format!("Buggy: {reason}."),
        },
        (None, None) => format!("Buggy: the run ended {}.", run.outcome),
    }
}

/// An attempt's id: blake3 of (search key, step), 32 hex digits.
fn node_id(search: &Hash, step: u32) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"ml2b aide node v1");
    h.update(&search.0);
    h.update(&step.to_le_bytes());
    h.finalize().to_hex()[..32].to_string()
}
