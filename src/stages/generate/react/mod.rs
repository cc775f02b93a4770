//! The `react` agent: a tool-using model that explores, runs and validates before it
//! submits (the ML2B repository's ReAct agent), one generate unit.
//!
//! The model gets the task's prompt in the pair's language with the agent's instructions
//! in the same language ([`instructions`]: `assets/generate/react/<code>.toml`) and the
//! tools of [`tools`], offered as the model's manifest entry says ([`protocol`]: OpenAI
//! tool calling, Anthropic tool use, or a text protocol). Each step is one model turn and
//! the one tool call it makes: ml2b runs the call and answers with the observation. The file tools read the
//! competition's public files and the agent's workspace; `run_python` runs in execute's
//! sandbox ([`python`]); `validate` is an AIDE trial (`aide::trial`): the static checks,
//! then a run on the validation split of the public training rows scored by ml2b's grader.
//!
//! The search ends at `submit` (the file is the unit's code), or when a budget ends:
//! `steps` turns, or `time_budget_s` recorded seconds (the answers' times and the runs',
//! so a replay stops where the first run stopped; the step that crosses it is the last).
//! Without a submit the code is the last file whose validation scored, else nothing (an
//! empty file, which fails honestly in execute).
//!
//! Every step is an event of the `trajectory` log ([`TrajectoryStep`]), keyed by (the
//! generate unit's key, step) and committed when the search ends, before the unit's
//! generate event. The requests are cached (`cache/requests/`), the runs too
//! (`cache/trials/`, `cache/runs/`) and the workspace is re-derived from the calls, so a
//! search killed at step N replays steps < N without a call or a run and commits the same
//! events.
//!
//! Long histories are condensed deterministically ([`condense`]): past [`HISTORY_CHARS`]
//! characters, the oldest observations are replaced by a notice, so a replay sends the same
//! context.
//!

pub mod instructions;
pub mod protocol;
pub mod python;
pub mod tools;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::aide::trial::Trials;
use super::prompt::{self, PromptInputs};
use crate::competition::Competition;
use crate::competition::validation::Validation;
use crate::events::Format;
use crate::events::{Generation, TrajectoryStep};
use crate::log::LogError;
use crate::manifest::models::ToolProtocol;
use crate::providers::{ChatRequest, Message, Response, cost_usd};
use crate::stages::StageError;
use crate::stages::requests::Requests;
use crate::store::Hash;
use instructions::Instructions;
use protocol::{Made, Turn};
use python::Python;
use tools::{Call, Observation, Workspace};

/// The agent's name in events and on the command line.
pub const AGENT: &str = "react";

/// The most characters of history a request carries before the oldest observations are
/// replaced by a notice.
pub const HISTORY_CHARS: usize = 200_000;

/// The longest thought kept in an event (characters).
const THOUGHT_CHARS: usize = 2000;

/// The search's settings; all of them change results, so all are in the unit key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Model turns at most.
    pub steps: u32,
    /// Recorded seconds at most; the step that crosses it is the last.
    pub time_budget_s: u64,
    /// The wall-clock limit of one `run_python` call.
    pub tool_timeout_s: u64,
    /// Share of the public training rows held out for `validate`.
    pub validation_fraction: f64,
}

impl Config {
    /// The ML2B repository's ReAct agent: 100 steps, 3 hours, an hour per tool call; a
    /// fifth of the rows held out, as the aide agent's.
    pub const REACT: Self = Self {
        steps: 100,
        time_budget_s: 10_800,
        tool_timeout_s: 3600,
        validation_fraction: 0.2,
    };
}

impl Default for Config {
    fn default() -> Self {
        Self::REACT
    }
}

/// The agent: its settings and where its runs go.
pub struct React {
    pub config: Config,
    /// `validate`'s runs (AIDE's trials).
    pub trials: Trials,
    /// `run_python`'s runs.
    pub python: Python,
}

impl React {
    /// What the unit key covers besides the pair, model, format and seed.
    pub fn key_params(&self, first_request: &Hash, validation_blake3: &str, p: ToolProtocol) -> Value {
        json!({
            "agent": AGENT, "config": self.config, "first_request": first_request.to_hex(),
            "validation": validation_blake3, "sandbox": self.trials.identity(),
            "protocol": protocol::name(p),
        })
    }
}

/// What a search unit carries from planning.
#[derive(Clone, Debug)]
pub struct Search {
    /// The generate unit's key.
    pub key: Hash,
    pub inputs: PromptInputs,
    pub format: Format,
    pub protocol: ToolProtocol,
}

/// The opening messages: the task's prompt with the agent's instructions.
pub fn opening(
    inputs: &PromptInputs,
    c: &Competition,
    config: &Config,
    p: ToolProtocol,
) -> Result<Vec<Message>, StageError> {
    let rendered = prompt::render(inputs).map_err(|e| StageError::failed("rendering the react prompt", e))?;
    let i = Instructions::of(&inputs.language)
        .map_err(|e| StageError::failed("reading the react instructions", e))?;
    let instructions = i.render(
        c.manifest.metric.direction,
        config.steps,
        tools::SHOWN_CHARS,
        &protocol::instructions(p, &i),
    );
    Ok(vec![
        Message::text("system", rendered.system),
        Message::text(
            "user",
            format!("{}\n\n{}", rendered.user.trim_end(), instructions),
        ),
    ])
}

/// The request of step `step` with the history `messages`. Its seed is (sample seed, step).
pub fn request(
    g: &Requests,
    body: &Generation,
    messages: Vec<Message>,
    p: ToolProtocol,
    step: u32,
) -> ChatRequest {
    ChatRequest {
        model: g.model.model.clone(),
        messages: condense(messages, HISTORY_CHARS),
        temperature: crate::stages::requests::TEMPERATURE,
        seed: Some((u64::from(body.seed) << 32) | u64::from(step)),
        max_tokens: g.model.max_tokens.unwrap_or(crate::stages::requests::MAX_TOKENS),
        tools: protocol::tools(p),
    }
}

/// `messages` within `max` characters: the oldest observations (tool messages, and user
/// messages after the opening two) are replaced, one by one, by a notice until the history
/// fits or none is left. The opening and the model's own messages are kept.
pub fn condense(mut messages: Vec<Message>, max: usize) -> Vec<Message> {
    let mut total: usize = messages.iter().map(|m| m.content.chars().count()).sum();
    for m in messages.iter_mut().skip(2) {
        if total <= max {
            break;
        }
        if m.role == "assistant" {
            continue;
        }
        let notice = "[an earlier observation, left out to keep the history short]";
        total = total - m.content.chars().count() + notice.len();
        m.content = notice.to_string();
    }
    messages
}

/// What the search knows between steps.
struct State {
    messages: Vec<Message>,
    workspace: Workspace,
    /// The code of the last `validate` that scored.
    validated: Option<String>,
    /// The code submitted.
    submitted: Option<String>,
    elapsed: f64,
    steps: Vec<TrajectoryStep>,
}

/// What one tool call did.
struct Done {
    observation: Observation,
    seconds: f64,
    score: Option<f64>,
    submitted: bool,
}

impl Done {
    fn quick(observation: Observation) -> Self {
        Self {
            observation,
            seconds: 0.0,
            score: None,
            submitted: false,
        }
    }
}

/// The search's fixed context.
struct Ctx<'a> {
    g: &'a Requests,
    react: &'a React,
    c: &'a Competition,
    body: &'a Generation,
    unit: &'a Search,
    split: &'a Validation,
}

/// Runs the search of one unit: commits its steps to the trajectory and returns the
/// generate event's body, which names the submitted code.
pub async fn search(
    g: &Requests,
    react: &React,
    c: &Competition,
    mut body: Generation,
    unit: Search,
) -> Result<Generation, StageError> {
    let split = react.trials.split(c, react.config.validation_fraction)?;
    let opening = opening(&unit.inputs, c, &react.config, unit.protocol)?;
    let prompt = serde_json::to_vec(&json!({"system": opening[0].content, "user": opening[1].content}))
        .map_err(LogError::Json)?;
    body.prompt_blake3 = Some(g.store.objects().put(&prompt).map_err(LogError::from)?);
    let ctx = Ctx {
        g,
        react,
        c,
        body: &body,
        unit: &unit,
        split: &split,
    };
    let mut state = State {
        messages: opening,
        workspace: Workspace::default(),
        validated: None,
        submitted: None,
        elapsed: 0.0,
        steps: Vec::new(),
    };
    for step in 0..react.config.steps {
        if step > 0 && state.elapsed >= react.config.time_budget_s as f64 {
            break;
        }
        if ctx.step(&mut state, step).await? {
            break;
        }
    }
    let (code, how) = match (&state.submitted, &state.validated) {
        (Some(code), _) => (code.clone(), "submitted"),
        (None, Some(code)) => (code.clone(), "last_validated"),
        (None, None) => (String::new(), "none"),
    };
    finish(g, &mut body, &state.steps, &code, how)?;
    let steps = state.steps.into_iter().map(|s| (s.step, s.tool_seconds, s));
    crate::stages::requests::commit_steps(g, &unit.key, steps)?;
    Ok(body)
}

/// The generate event's fields from the search.
fn finish(
    g: &Requests,
    body: &mut Generation,
    steps: &[TrajectoryStep],
    code: &str,
    how: &str,
) -> Result<(), StageError> {
    body.code_blake3 = g.store.objects().put(code.as_bytes()).map_err(LogError::from)?;
    body.code_bytes = code.len() as u64;
    if let Some(last) = steps.last() {
        body.request_blake3 = Some(last.request_blake3);
        body.response_blake3 = Some(last.response_blake3);
    }
    body.extraction = Some(json!({ "react": how }).to_string());
    body.finish_reason = Some(how.to_string());
    body.attempts = steps.iter().map(|s| s.http_attempts).sum();
    body.input_tokens = steps.iter().map(|s| s.input_tokens).sum();
    body.output_tokens = steps.iter().map(|s| s.output_tokens).sum();
    body.cost_usd = steps.iter().map(|s| s.cost_usd).sum();
    Ok(())
}

impl Ctx<'_> {
    /// One step: ask, run the call, record. True when the search ends here (a submit).
    async fn step(&self, state: &mut State, step: u32) -> Result<bool, StageError> {
        let g = self.g;
        let p = self.unit.protocol;
        let request = request(g, self.body, state.messages.clone(), p, step);
        let key = g.key(&request, self.body.seed)?;
        let response = g.respond(&key, self.body, &request).await?;
        let turn = protocol::turn(p, &response.completion);
        let done = match &turn.call {
            Ok(made) => self.call(state, made).await?,
            Err(why) => Done::quick(Observation::error(why.clone())),
        };
        state.messages.push(turn.message.clone());
        state
            .messages
            .extend(protocol::answers(p, &turn, &done.observation));
        let answer = super::aide::answer_seconds(&response);
        state.elapsed += answer + done.seconds;
        let event = self.event(state, step, &key, &response, &turn, &done, answer)?;
        state.steps.push(event);
        Ok(done.submitted)
    }

    /// Runs `made`; a call that cannot be made is an error observation.
    async fn call(&self, state: &mut State, made: &Made) -> Result<Done, StageError> {
        let call = match Call::parse(&made.tool, &made.arguments) {
            Ok(call) => call,
            Err(e) => return Ok(Done::quick(Observation::error(e.to_string()))),
        };
        let public = self.c.dir.join(crate::competition::Side::Public.dir());
        let ws = &mut state.workspace;
        Ok(match call {
            Call::ListFiles { path } => Done::quick(tools::list_files(&public, ws, &path)),
            Call::ReadFile { path, start, end } => {
                Done::quick(tools::read_file(&public, ws, &path, start, end))
            }
            Call::WriteFile { path, content } => Done::quick(ws.write(&path, content)),
            Call::RunPython { script, timeout } => self.run_python(ws, script, timeout).await?,
            Call::Validate { path } => {
                let done = self.validate(ws, &path).await?;
                if done.score.is_some() {
                    state.validated = ws.file(&path).ok().map(|(_, code)| code.to_string());
                }
                done
            }
            Call::Submit { path } => match ws.file(&path) {
                Err(e) => Done::quick(Observation::error(e)),
                Ok((rel, code)) => {
                    state.submitted = Some(code.to_string());
                    Done {
                        submitted: true,
                        ..Done::quick(Observation::ok(Value::String(format!(
                            "Submitted {rel} ({} bytes). The work is over.",
                            code.len()
                        ))))
                    }
                }
            },
        })
    }

    async fn run_python(
        &self,
        ws: &Workspace,
        script: tools::Script,
        timeout: Option<u64>,
    ) -> Result<Done, StageError> {
        let script = match script {
            tools::Script::Path(path) => match ws.file(&path) {
                Ok((rel, _)) => tools::Script::Path(rel),
                Err(e) => return Ok(Done::quick(Observation::error(e))),
            },
            code => code,
        };
        let limit = self.react.config.tool_timeout_s;
        let seconds = timeout.unwrap_or(limit).clamp(1, limit);
        let run = self
            .react
            .python
            .run(
                &self.g.store,
                self.c,
                self.unit.format,
                ws,
                &script,
                Duration::from_secs(seconds),
            )
            .await?;
        Ok(Done {
            observation: Observation {
                is_error: run.failed(),
                value: run.shown(),
            },
            seconds: run.wall_seconds,
            score: None,
            submitted: false,
        })
    }

    /// `validate`: the static checks, then an AIDE trial on the split.
    async fn validate(&self, ws: &Workspace, path: &str) -> Result<Done, StageError> {
        let code = match ws.file(path) {
            Ok((_, code)) => code,
            Err(e) => return Ok(Done::quick(Observation::error(e))),
        };
        if self.c.manifest.is_program_graded() {
            return Ok(Done::quick(Observation::error(format!(
                "validate is not available for `{}`: it is graded by MLE-bench's own program",
                self.c.id()
            ))));
        }
        let findings: Vec<Value> = crate::check::check(code, self.unit.format)
            .into_iter()
            .map(|f| json!({"line": f.line, "kind": f.kind.as_str(), "message": f.message}))
            .collect();
        let hash = self
            .g
            .store
            .objects()
            .put(code.as_bytes())
            .map_err(LogError::from)?;
        let trial = self
            .react
            .trials
            .run(&self.g.store, self.c, self.unit.format, &hash, self.split)
            .await?;
        let value = json!({
            "findings": findings, "outcome": trial.outcome.to_string(),
            "validation_score": trial.score, "reason": trial.reason, "output": trial.term_out,
        });
        Ok(Done {
            observation: Observation {
                is_error: trial.score.is_none(),
                value,
            },
            seconds: trial.wall_seconds,
            score: trial.score,
            submitted: false,
        })
    }

    /// The trajectory event of a step; the message and observation are stored as objects.
    #[allow(clippy::too_many_arguments)]
    fn event(
        &self,
        state: &State,
        step: u32,
        key: &Hash,
        response: &Response,
        turn: &Turn,
        done: &Done,
        answer_seconds: f64,
    ) -> Result<TrajectoryStep, StageError> {
        let objects = self.g.store.objects();
        let put = |v: &Value| -> Result<Hash, StageError> {
            let bytes = serde_json::to_vec(v).map_err(LogError::Json)?;
            Ok(objects.put(&bytes).map_err(LogError::from)?)
        };
        let message = put(&serde_json::to_value(&turn.message).map_err(LogError::Json)?)?;
        let observation = put(&done.observation.record())?;
        let completion = &response.completion;
        let b = self.body;
        let made = turn.call.as_ref().ok();
        Ok(TrajectoryStep {
            competition: b.competition.clone(),
            language: b.language.clone(),
            model: b.model.clone(),
            format: b.format,
            seed: b.seed,
            search: self.unit.key,
            step,
            protocol: protocol::name(self.unit.protocol).into(),
            message_blake3: message,
            thought: turn.message.content.chars().take(THOUGHT_CHARS).collect(),
            tool: made.map(|m| m.tool.clone()),
            arguments: made.map(|m| m.arguments.clone()),
            observation_blake3: observation,
            is_error: done.observation.is_error,
            extra_calls: turn.extra.len() as u32,
            validation_score: done.score,
            submitted: done.submitted,
            request_blake3: *key,
            response_blake3: response.object,
            http_attempts: completion.attempts.len() as u32,
            input_tokens: completion.input_tokens,
            output_tokens: completion.output_tokens,
            cost_usd: cost_usd(
                completion.input_tokens,
                completion.output_tokens,
                self.g.model.usd_per_mtok_input,
                self.g.model.usd_per_mtok_output,
            ),
            answer_seconds,
            tool_seconds: done.seconds,
            elapsed_seconds: state.elapsed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_histories_lose_their_oldest_observations_first() {
        let mut messages = vec![Message::text("system", "s"), Message::text("user", "task")];
        for i in 0..4 {
            messages.push(Message::text("assistant", format!("turn {i}")));
            messages.push(Message::text("user", format!("Observation: {}", "x".repeat(100))));
        }
        let kept = condense(messages.clone(), 10_000);
        assert_eq!(kept, messages, "short histories are sent as they are");
        let condensed = condense(messages.clone(), 400);
        let contents: Vec<&str> = condensed.iter().map(|m| m.content.as_str()).collect();
        assert!(contents[3].starts_with("[an earlier observation"), "{contents:?}");
        assert!(contents[5].starts_with("[an earlier observation"), "{contents:?}");
        assert_eq!(contents[7], messages[7].content, "the later ones are kept");
        assert_eq!(contents[9], messages[9].content);
        assert_eq!(contents[2], "turn 0", "the model's messages are kept");
        assert_eq!(condense(messages, 400), condensed, "deterministic");
    }
}
