//! Stage 2, `generate`: code for each (competition, language, model, format, seed).
//!
//! Providers (`manifests/models.toml`):
//! * `reference` — the competition's reference solution (`data/<id>/solution/*.py`), the
//!   baseline and the offline demo; it reads no prompt, so its events record none.
//! * `openai`, `anthropic` — HTTP chat APIs ([`provider`]): the prompt of [`prompt`] in the
//!   pair's language, retries and every attempt recorded, tokens and cost.
//! * `replay` — the responses recorded in another store's generate events (`store` in the
//!   manifest), matched by (competition, language, format, seed, model) and required to
//!   answer the very same prompt.
//! * `template` — a fixed MODULAR_PREDICT solution rendered from a template with the
//!   competition's manifest ([`template`]): the AutoGluon algorithmic baseline. Its
//!   "prompt" object is the rendering's JSON context; mono formats are skipped.
//! * `local` — an embedded llama.cpp model on the CPU ([`local`]): a GGUF the manifest
//!   names, or the demo SmolLM2-135M-Instruct fetched once from PyPI; seeded sampling, so
//!   the same request gives the same answer.
//!
//! Only pairs whose translation passed translate-validate are planned, unless forced.
//! Every planned unit is recorded in the `planned` log before any runs
//! ([`record_plan`]), and a unit that fails (the provider unreachable or refusing after
//! every retry) in the `fault` log: the tables count the sample as missing, never drop it.
//!
//! Agents of the LLM providers: `one-shot`, one request per unit; `aide` ([`aide`]), a tree
//! search over attempts scored on a validation split, each attempt an event of the
//! `journal` log, the best attempt the unit's code; `react` ([`react`]), a tool-using model
//! that explores, runs and validates until it submits, each step an event of the
//! `trajectory` log. A search unit's key covers the agent's settings, its first request,
//! the split and the sandbox.
//!
//! Request cache: an LLM unit's key covers the request's blake3 (provider, endpoint, model
//! id, the full request and the sample index). The response is stored as an object the
//! moment it arrives and `store/cache/requests/<request blake3>` names it, so a re-run —
//! after a crash before the unit's event was committed, too — reuses the response and makes
//! no call. A model id without a dated snapshot is a floating alias: the stage warns, and
//! the event records it.
//!
//! The code ([`extract`] from the response, the raw response kept) is stored as an object
//! and the event names it by blake3, so execute runs identical code once however many
//! languages or seeds produced it.

pub mod aide;
pub mod cache;
pub mod external;
pub mod extract;
pub mod prompt;
pub mod react;

use serde::Serialize;

use super::translate_validate::TranslateValidate;
use super::{Planned, Stage, StageError};
use crate::competition::Competition;
use crate::competition::spec::{Kind, Spec};
use crate::events::Format;
use crate::events::Provider;
use crate::events::{Agent, GENERATE_KEY_VERSION, Generation};
use crate::log::{EventBody, LogError, unit_key};
use crate::manifest::agents::SubmissionKind;
use crate::manifest::models::Model;
use crate::providers::{self as provider, template};
use crate::store::Store;

pub use crate::stages::requests::{MAX_TOKENS, Requests, TEMPERATURE};
pub use cache::provider_name;

/// One unit.
#[derive(Clone, Debug)]
pub enum Unit {
    /// A fixed solution, known at planning time: the reference solution, or a template's
    /// rendering (with the JSON context it was rendered from, the event's "prompt").
    Fixed {
        body: Generation,
        code: Vec<u8>,
        context: Option<Vec<u8>>,
    },
    /// An LLM request.
    Request {
        body: Generation,
        request: provider::ChatRequest,
        prompt: Vec<u8>,
        required: &'static [&'static str],
    },
    /// An AIDE search: many requests, each attempt run on a validation split.
    Search { body: Generation, search: aide::Search },
    /// A react search: model turns and the tool calls they make, until a submit.
    React { body: Generation, search: react::Search },
    /// An external agent's run, its requests through the gateway.
    External { body: Generation, run: external::Unit },
}

/// A (competition, language) this invocation covers.
struct Pair<'a> {
    competition: &'a Competition,
    language: String,
    /// Whether its translation passed translate-validate (English always does).
    passed: bool,
    /// The blake3 of its task text file, and the model whose `translate` event produced
    /// that file (none: English, or imported).
    text: Option<(crate::store::Hash, Option<String>)>,
}

/// The stage.
pub struct Generate {
    /// The model asked, the store and the responder.
    pub requests: Requests,
    pub formats: Vec<Format>,
    /// Samples per (competition, language, format): seeds `0..seeds`.
    pub seeds: u32,
    /// The translation checks that decide which pairs run; their benchmark root and
    /// selection (competitions, languages) are this stage's too.
    pub translations: TranslateValidate,
    /// Run pairs whose translation failed or was not checked.
    pub force: bool,
    /// Limits the prompt states (they should match execute's).
    pub limits: prompt::Limits,
    /// The AIDE agent, for LLM models (`None`: one-shot, or react).
    pub aide: Option<std::sync::Arc<aide::Aide>>,
    /// The react agent, for LLM models (`None`: one-shot, or aide).
    pub react: Option<std::sync::Arc<react::React>>,
    /// An external agent, for LLM models (`None`: one of ml2b's).
    pub external: Option<std::sync::Arc<external::External>>,
}

impl Generate {
    /// The pairs this invocation covers.
    fn pairs(&self, store: &Store) -> Result<Vec<Pair<'_>>, StageError> {
        let verdicts = self.translations.verdicts(store)?;
        let produced = super::translate::producers(store)?;
        let bench = &self.translations.bench;
        let mut pairs = Vec::new();
        for c in bench
            .select(&self.translations.competitions)
            .map_err(StageError::Benchmark)?
        {
            for code in c.languages(&bench.languages) {
                if !self.translations.languages.is_empty()
                    && !self.translations.languages.iter().any(|l| l == code)
                {
                    continue;
                }
                let passed = code == "en"
                    || verdicts.get(&(c.id().to_string(), code.to_string())) == Some(&Some(true));
                if passed || self.force {
                    let text = super::stage::file_blake3(&c.task_path(code))
                        .ok()
                        .map(|hash| (hash, produced.get(&hash).cloned()));
                    pairs.push(Pair {
                        competition: c,
                        language: code.to_string(),
                        passed,
                        text,
                    });
                }
            }
        }
        Ok(pairs)
    }

    fn body(&self, pair: &Pair, format: Format, seed: u32) -> Generation {
        let Pair {
            competition: c,
            language,
            passed,
            text,
        } = pair;
        let http = matches!(
            self.requests.model.provider,
            Provider::Openai | Provider::Anthropic
        );
        let reads_text = !matches!(
            self.requests.model.provider,
            Provider::Reference | Provider::Template
        );
        let (text_blake3, text_translated_by) = match text {
            Some((hash, by)) if reads_text => (Some(*hash), by.clone()),
            _ => (None, None),
        };
        Generation {
            competition: c.id().to_string(),
            language: language.clone(),
            model: self.requests.model.name.clone(),
            provider: self.requests.model.provider,
            agent: match self.requests.model.provider {
                Provider::Reference => Agent::Reference,
                Provider::Template => Agent::Template,
                _ if self.aide.is_some() => Agent::Aide,
                _ if self.react.is_some() => Agent::React,
                _ if self.external.is_some() => Agent::External,
                _ => Agent::OneShot,
            },
            format,
            seed,
            // A draft: the code exists (and this is set) only once the unit ran.
            code_blake3: crate::store::Hash([0; 32]),
            code_bytes: 0,
            prompt_blake3: None,
            request_blake3: None,
            response_blake3: None,
            attempts: 0,
            extraction: None,
            finish_reason: None,
            floating_alias: http && provider::http::is_floating_alias(&self.requests.model.model),
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: 0.0,
            translation_passed: *passed,
            text_blake3,
            text_translated_by,
            agent_name: match self.requests.model.provider {
                Provider::Reference | Provider::Template => None,
                _ => self.external.as_ref().map(|e| e.name.clone()),
            },
        }
    }

    fn reference_unit(
        &self,
        mut body: Generation,
        c: &Competition,
        format: Format,
    ) -> Result<Planned<Unit>, StageError> {
        let path = c.solution(format.harness_mode());
        let code = std::fs::read(&path).map_err(|source| StageError::Read {
            path: path.clone(),
            source,
        })?;
        body.code_blake3 = crate::store::Hash::of(&code);
        body.code_bytes = code.len() as u64;
        planned(body.code_blake3, body, |body, _| Unit::Fixed {
            body,
            code,
            context: None,
        })
    }

    /// A template model's solution (MODULAR_PREDICT only), rendered at planning time; the
    /// key is the code's hash, like the reference's, so identical renderings (every
    /// language of a competition) share one execution.
    fn template_unit(&self, mut body: Generation, c: &Competition) -> Result<Planned<Unit>, StageError> {
        let r = template::render(&self.requests.model, c, body.seed).map_err(|e| {
            StageError::failed(
                format!("rendering model `{}`'s template", self.requests.model.name),
                e,
            )
        })?;
        let code = r.code.into_bytes();
        body.code_blake3 = crate::store::Hash::of(&code);
        body.code_bytes = code.len() as u64;
        body.prompt_blake3 = Some(blake3::hash(&r.context).into());
        planned(body.code_blake3, body, |body, _| Unit::Fixed {
            body,
            code,
            context: Some(r.context),
        })
    }

    /// What the prompt of (`c`, `language`, `format`) is made from.
    fn prompt_inputs(
        &self,
        c: &Competition,
        language: &str,
        format: Format,
    ) -> Result<prompt::PromptInputs, StageError> {
        let task = c.task(language).map_err(StageError::Manifest)?;
        Ok(prompt::PromptInputs {
            language: language.to_string(),
            mode: mode_of(format),
            task,
            output: output_of(&Spec::of(&c.manifest)),
            limits: self.limits,
            libraries: prompt::LIBRARIES.iter().map(|s| s.to_string()).collect(),
        })
    }

    /// An AIDE search unit, keyed by its first request, settings, split and sandbox.
    fn search_unit(
        &self,
        aide: &aide::Aide,
        body: Generation,
        c: &Competition,
        format: Format,
    ) -> Result<Planned<Unit>, StageError> {
        refuse_replay(&self.requests.model, "aide", "journal")?;
        let inputs = self.prompt_inputs(c, &body.language, format)?;
        let first = aide::first_request(&self.requests, c, &body, &inputs)?;
        let first = self.requests.key(&first, body.seed)?;
        let split = aide.trials.split(c, aide.config.validation_fraction)?;
        let what = aide.key_params(&first, &split.blake3);
        planned(what, body, |body, key| Unit::Search {
            body,
            search: aide::Search {
                key,
                inputs,
                format,
                required: mode_of(format).functions(),
            },
        })
    }

    /// A react search unit, keyed by its first request, settings, split, sandbox and
    /// protocol.
    fn react_unit(
        &self,
        react: &react::React,
        body: Generation,
        c: &Competition,
        format: Format,
    ) -> Result<Planned<Unit>, StageError> {
        refuse_replay(&self.requests.model, "react", "trajectory")?;
        let inputs = self.prompt_inputs(c, &body.language, format)?;
        let protocol = self.requests.model.tool_protocol();
        let opening = react::opening(&inputs, c, &react.config, protocol)?;
        let first = react::request(&self.requests, &body, opening, protocol, 0);
        let first = self.requests.key(&first, body.seed)?;
        let split = react.trials.split(c, react.config.validation_fraction)?;
        let what = react.key_params(&first, &split.blake3, protocol);
        planned(what, body, |body, key| Unit::React {
            body,
            search: react::Search {
                key,
                inputs,
                format,
                protocol,
            },
        })
    }

    /// An external agent's unit, keyed by the agent's identity, its prompt, limits and
    /// budget.
    fn external_unit(
        &self,
        ext: &external::External,
        mut body: Generation,
        c: &Competition,
        format: Format,
    ) -> Result<Planned<Unit>, StageError> {
        let inputs = self.prompt_inputs(c, &body.language, format)?;
        let instructions = match ext.agent.submission {
            SubmissionKind::Python => {
                let rendered =
                    prompt::render(&inputs).map_err(|e| StageError::failed("rendering the prompt", e))?;
                format!("{}\n\n{}\n", rendered.system.trim_end(), rendered.user.trim_end())
            }
            SubmissionKind::Csv => external::csv_instructions(c, &inputs.task, &body.language),
        }
        .into_bytes();
        let hash = crate::store::Hash::of(&instructions);
        body.prompt_blake3 = Some(hash);
        planned(ext.key_params(&hash), body, |body, key| Unit::External {
            body,
            run: external::Unit { key, instructions },
        })
    }

    fn request_unit(
        &self,
        mut body: Generation,
        c: &Competition,
        format: Format,
    ) -> Result<Planned<Unit>, StageError> {
        let inputs = self.prompt_inputs(c, &body.language, format)?;
        let mode = inputs.mode;
        let rendered = prompt::render(&inputs).map_err(|e| StageError::failed("rendering the prompt", e))?;
        let prompt =
            serde_json::to_vec(&serde_json::json!({"system": rendered.system, "user": rendered.user}))
                .map_err(LogError::Json)?;
        let request = provider::ChatRequest {
            model: self.requests.model.model.clone(),
            messages: vec![
                provider::Message::text("system", rendered.system),
                provider::Message::text("user", rendered.user),
            ],
            temperature: TEMPERATURE,
            seed: Some(u64::from(body.seed)),
            max_tokens: self.requests.model.max_tokens.unwrap_or(MAX_TOKENS),
            tools: Vec::new(),
        };
        let key = self.requests.key(&request, body.seed)?;
        body.prompt_blake3 = Some(blake3::hash(&prompt).into());
        body.request_blake3 = Some(key);
        planned(key, body, |body, _| Unit::Request {
            body,
            request,
            prompt,
            required: mode.functions(),
        })
    }

    /// The competition `id` of this stage's benchmark.
    fn competition(&self, id: &str) -> Result<&Competition, StageError> {
        let found = self
            .translations
            .bench
            .select(&[id.to_string()])
            .map_err(StageError::Benchmark)?;
        Ok(found[0])
    }
}

/// A unit keyed by (competition, language, model, format, seed, `what`): the code's hash for
/// the reference provider, the request's cache key for the others.
/// Records `planned` in the `planned` log (each unit under its own key, so a unit planned
/// before is not recorded again): what every table's denominator counts.
pub(crate) fn record_plan(store: &Store, planned: &[Planned<Unit>]) -> Result<(), StageError> {
    use crate::events::{PLANNED_KEY_VERSION, PlannedSample};
    use crate::log::{Event, Provenance, StageLog};
    let log = StageLog::new(store, PlannedSample::STAGE)?;
    let mut view = log.view()?;
    let mut events = Vec::new();
    for p in planned {
        let key = unit_key(PlannedSample::STAGE, PLANNED_KEY_VERSION, &[], &p.key)?;
        if view.contains(&key) {
            continue;
        }
        let g = p.unit.body();
        let body = PlannedSample {
            competition: g.competition.clone(),
            language: g.language.clone(),
            model: g.model.clone(),
            agent: g.agent,
            format: g.format,
            seed: g.seed,
            generate_key: p.key,
            agent_name: g.agent_name.clone(),
        };
        events.push(Event::new(key, Vec::new(), body, Provenance::now(0))?);
    }
    if !events.is_empty() {
        log.commit(&mut view, events, None)?;
    }
    Ok(())
}

impl Unit {
    /// The sample's event body as planned.
    fn body(&self) -> &Generation {
        match self {
            Self::Fixed { body, .. }
            | Self::Request { body, .. }
            | Self::Search { body, .. }
            | Self::React { body, .. }
            | Self::External { body, .. } => body,
        }
    }
}

/// A model that replays another store cannot drive `agent`'s search.
fn refuse_replay(model: &Model, agent: &str, log: &str) -> Result<(), StageError> {
    if model.provider != Provider::Replay {
        return Ok(());
    }
    Err(StageError::Unsupported(format!(
        "model `{}`: the {agent} agent cannot replay another store (its {log} is not matched); replay its store's generate events with the one-shot agent, or copy the store",
        model.name
    )))
}

fn planned(
    what: impl Serialize,
    body: Generation,
    unit: impl FnOnce(Generation, crate::store::Hash) -> Unit,
) -> Result<Planned<Unit>, StageError> {
    let params = (
        &body.competition,
        &body.language,
        &body.model,
        &body.format,
        body.seed,
        what,
    );
    let key = unit_key(Generation::STAGE, GENERATE_KEY_VERSION, &[], &params)?;
    Ok(Planned {
        key,
        upstream: Vec::new(),
        label: body.label(),
        unit: unit(body, key),
    })
}

fn mode_of(format: Format) -> prompt::Mode {
    match format {
        Format::Modular => prompt::Mode::Modular,
        Format::Mono => prompt::Mode::Mono,
    }
}

/// The prediction shape the prompt describes, from the harness contract.
fn output_of(spec: &Spec) -> prompt::Output {
    let kind = match spec.kind {
        Kind::Values => prompt::OutputKind::Values,
        Kind::Labels => prompt::OutputKind::Labels,
        Kind::Probabilities => prompt::OutputKind::Probabilities,
        Kind::Ranked => prompt::OutputKind::Ranked {
            k: spec.k.unwrap_or(1),
        },
    };
    prompt::Output {
        kind,
        targets: spec.targets.clone(),
    }
}

impl Stage for Generate {
    type Body = Generation;
    type Unit = Unit;

    const RECORDS_FAULTS: bool = true;

    fn record_plan(&self, store: &Store, planned: &[Planned<Unit>]) -> Result<(), StageError> {
        record_plan(store, planned)
    }

    fn plan(&self, store: &Store) -> Result<Vec<Planned<Unit>>, StageError> {
        let mut planned = Vec::new();
        for pair in self.pairs(store)? {
            let c = pair.competition;
            for &format in &self.formats {
                if self.requests.model.provider == Provider::Template && format != Format::Modular {
                    continue;
                }
                for seed in 0..self.seeds.max(1) {
                    let body = self.body(&pair, format, seed);
                    planned.push(match self.requests.model.provider {
                        Provider::Reference => self.reference_unit(body, c, format)?,
                        Provider::Template => self.template_unit(body, c)?,
                        _ => match (&self.aide, &self.react, &self.external) {
                            (Some(aide), _, _) => self.search_unit(aide, body, c, format)?,
                            (None, Some(react), _) => self.react_unit(react, body, c, format)?,
                            (None, None, Some(ext)) => self.external_unit(ext, body, c, format)?,
                            (None, None, None) => self.request_unit(body, c, format)?,
                        },
                    });
                }
            }
        }
        Ok(planned)
    }

    async fn run(&self, unit: Unit) -> Result<Generation, StageError> {
        match unit {
            Unit::Fixed { body, code, context } => {
                if let Some(context) = context {
                    self.requests.put(context).await?;
                }
                self.requests.put(code).await?;
                Ok(body)
            }
            Unit::Request {
                mut body,
                request,
                prompt,
                required,
            } => {
                self.requests.put(prompt).await?;
                let key = body
                    .request_blake3
                    .ok_or(StageError::Invariant("a request unit without its key"))?;
                let response = self.requests.respond(&key, &body, &request).await?;
                let found = extract::from_completion(&response.completion, required);
                body.code_bytes = found.code.len() as u64;
                body.code_blake3 = self.requests.put(found.code.into_bytes()).await?;
                body.response_blake3 = Some(response.object);
                body.attempts = response.completion.attempts.len() as u32;
                body.extraction = serde_json::to_string(&found.how).ok();
                body.finish_reason = response.completion.finish_reason.clone();
                body.input_tokens = response.completion.input_tokens;
                body.output_tokens = response.completion.output_tokens;
                body.cost_usd = provider::cost_usd(
                    body.input_tokens,
                    body.output_tokens,
                    self.requests.model.usd_per_mtok_input,
                    self.requests.model.usd_per_mtok_output,
                );
                Ok(body)
            }
            Unit::Search { body, search } => {
                let aide = self
                    .aide
                    .as_ref()
                    .ok_or(StageError::Invariant("a search unit without its agent"))?;
                let c = self
                    .translations
                    .bench
                    .select(std::slice::from_ref(&body.competition))
                    .map_err(StageError::Benchmark)?[0];
                aide::search(&self.requests, aide, c, body, search).await
            }
            Unit::React { body, search } => {
                let react = self
                    .react
                    .as_ref()
                    .ok_or(StageError::Invariant("a react unit without its agent"))?;
                let c = self.competition(&body.competition)?;
                react::search(&self.requests, react, c, body, search).await
            }
            Unit::External { body, run } => {
                let ext = self
                    .external
                    .as_ref()
                    .ok_or(StageError::Invariant("an external unit without its agent"))?;
                let c = self.competition(&body.competition)?;
                external::run(&self.requests, ext, c, body, run).await
            }
        }
    }
}
