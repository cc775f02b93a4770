//! Stage 0, `translate`: the task texts a competition lacks, made by a model, and made back
//! into English by another: what makes a competition imported in English alone (MLE-bench)
//! cross-lingual, as ML2B's authors made theirs (GPT-4o, back-translation, gates).
//!
//! Two legs, each a run of this stage with its own model:
//! * **forward** — one unit per (competition, language) whose `data/<id>/tasks/<code>.toml`
//!   does not exist: `tasks/en.toml` translated into the language;
//! * **back** — one unit per (competition, language) whose `tasks/<code>.toml` exists and
//!   whose `back/<code>.toml` does not: the text translated back into English. Its upstream
//!   is the forward event that produced the text, when one did (an imported or hand-fixed
//!   text has none).
//!
//! The request is one instruction set for both legs (`assets/translate/instructions.j2`,
//! the source and target languages named in it; its blake3 is the prompt's version) with
//! the text's five fields as JSON; the answer must be that JSON object, translated. The
//! unit key covers the competition, both languages, the source text's blake3, the model
//! and the request's cache key (so the instructions, the model id, the temperature and
//! the token cap), so a re-run translates nothing twice, and the response is cached the
//! moment it arrives, so a crash before the commit asks nothing again either.
//!
//! A produced text is stored as an object: the TOML file the pipeline writes
//! (`Pipeline::translate`), byte for byte, with a comment naming the model. A forward text
//! is checked for what must stay verbatim (`manifest::verbatim`); what it lost is recorded
//! (and translate-validate fails it with the same list). An answer with no JSON object of
//! five non-empty texts is the model's answer too: recorded, with the reason, and no text.
//! A request the provider never answered fails its unit only (uncommitted: a re-run asks
//! again).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use super::requests::Requests;
use super::{Planned, Stage, StageError};
use crate::competition::{Benchmark, Competition};
use crate::events::TranslatedText;
use crate::log::{Event, EventBody, LogError, StageLog, unit_key};
use crate::manifest::models::Model;
use crate::manifest::{Languages, TaskText, verbatim};
use crate::providers::{self as provider, Sample, cost_usd};
use crate::store::{Hash, Store};

/// The instructions of both legs; their blake3 is the prompt's version.
pub const INSTRUCTIONS: &str = include_str!("../../assets/translate/instructions.j2");

/// The blake3 of [`INSTRUCTIONS`].
pub static INSTRUCTIONS_BLAKE3: LazyLock<Hash> =
    LazyLock::new(|| blake3::hash(INSTRUCTIONS.as_bytes()).into());

/// Sampling temperature of a translation: the most likely text.
const TEMPERATURE: f64 = 0.0;

/// The most tokens an answer may have unless the model's manifest says (a long data card
/// in a language whose words take many tokens).
const MAX_TOKENS: u32 = 8192;

/// Which way a run translates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leg {
    /// English into the pair's language.
    Forward,
    /// The pair's text back into English.
    Back,
}

/// The stage: one leg, with its model.
pub struct Translate {
    pub bench: Arc<Benchmark>,
    /// Only these competitions (empty: all).
    pub competitions: Vec<String>,
    /// Only these languages (empty: every language of `manifests/languages.toml` but
    /// English).
    pub languages: Vec<String>,
    pub leg: Leg,
    /// The model of this leg, the store and the responder.
    pub requests: Requests,
}

/// Everything one unit needs, decided at planning time.
pub struct Unit {
    body: TranslatedText,
    request: provider::ChatRequest,
    prompt: Vec<u8>,
    /// Forward: the English text and the metric's name, for the verbatim check.
    english: Option<(TaskText, String)>,
}

impl Translate {
    /// The languages this run translates into or back from.
    fn targets<'a>(&'a self, languages: &'a Languages) -> Vec<&'a str> {
        languages
            .all()
            .iter()
            .map(|l| l.code.as_str())
            .filter(|code| {
                *code != "en" && (self.languages.is_empty() || self.languages.iter().any(|l| l == code))
            })
            .collect()
    }

    /// The source of a pair's unit: (text, its file's blake3), or none when this leg has
    /// nothing to do for it.
    fn source(&self, c: &Competition, code: &str) -> Result<Option<(TaskText, Hash)>, StageError> {
        let (from, wanted) = match self.leg {
            Leg::Forward => (c.task_path("en"), c.task_path(code)),
            Leg::Back => (c.task_path(code), c.back_path(code)),
        };
        if wanted.exists() || !from.exists() {
            return Ok(None);
        }
        let text = TaskText::load(&from).map_err(StageError::Manifest)?;
        Ok(Some((text, super::file_blake3(&from)?)))
    }

    fn unit(
        &self,
        c: &Competition,
        code: &str,
        source: (TaskText, Hash),
        produced_by: &HashMap<Hash, Event<TranslatedText>>,
    ) -> Result<Planned<Unit>, StageError> {
        let (from, to) = match self.leg {
            Leg::Forward => ("en", code),
            Leg::Back => (code, "en"),
        };
        let (text, source_blake3) = source;
        let (request, prompt) = self.request(from, to, &text)?;
        // The forward event that produced a back leg's source, if one did.
        let upstream = produced_by.get(&source_blake3);
        let request_blake3 = self.requests.key(&request, 0)?;
        let mut body = self.body(c.id(), code, (from, to), source_blake3, (&prompt, request_blake3));
        body.source_model = upstream.map(|e| e.body.model.clone());
        let upstream: Vec<Hash> = upstream.map(|e| e.id).into_iter().collect();
        let params = (
            &body.competition,
            from,
            to,
            &body.source_blake3,
            &body.model,
            &body.instructions_blake3,
            &body.request_blake3,
        );
        let key = unit_key(
            TranslatedText::STAGE,
            TranslatedText::SCHEMA_VERSION,
            &upstream,
            &params,
        )?;
        let english = (self.leg == Leg::Forward).then(|| (text, c.manifest.metric.name.clone()));
        Ok(Planned {
            key,
            upstream,
            label: format!("{}/{from}→{to}", c.id()),
            unit: Unit {
                body,
                request,
                prompt,
                english,
            },
        })
    }

    /// The request translating `text` from the language `from` into `to`, and its prompt
    /// object.
    fn request(
        &self,
        from: &str,
        to: &str,
        text: &TaskText,
    ) -> Result<(provider::ChatRequest, Vec<u8>), StageError> {
        let name = |code: &str| {
            self.bench
                .languages
                .resolve(code)
                .map_or(code.to_string(), |l| l.name.clone())
        };
        let rendered = render(&name(from), &name(to), text)?;
        let prompt = serde_json::to_vec(&serde_json::json!({"system": "", "user": rendered}))
            .map_err(LogError::Json)?;
        let model = &self.requests.model;
        let request = provider::ChatRequest {
            model: model.model.clone(),
            messages: vec![provider::Message::text("user", rendered)],
            temperature: TEMPERATURE,
            seed: Some(0),
            max_tokens: model.max_tokens.unwrap_or(MAX_TOKENS),
            tools: Vec::new(),
        };
        Ok((request, prompt))
    }

    /// A leg's event as planned: what it translates, with what prompt and request; the
    /// answer's fields empty.
    fn body(
        &self,
        competition: &str,
        language: &str,
        (from, to): (&str, &str),
        source_blake3: Hash,
        (prompt, request_blake3): (&[u8], Hash),
    ) -> TranslatedText {
        let model = &self.requests.model;
        TranslatedText {
            competition: competition.to_string(),
            language: language.to_string(),
            from: from.to_string(),
            to: to.to_string(),
            model: model.name.clone(),
            provider: model.provider,
            model_id: model.model.clone(),
            source_model: None,
            source_blake3,
            instructions_blake3: *INSTRUCTIONS_BLAKE3,
            prompt_blake3: blake3::hash(prompt).into(),
            request_blake3,
            response_blake3: None,
            output_blake3: None,
            reason: None,
            lost: Vec::new(),
            attempts: 0,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: 0.0,
            floating_alias: model.provider.is_http() && provider::http::is_floating_alias(&model.model),
        }
    }
}

/// The forward events of `store` by the blake3 of the text each produced.
fn produced(store: &Store) -> Result<HashMap<Hash, Event<TranslatedText>>, StageError> {
    let log = StageLog::new(store, TranslatedText::STAGE)?;
    Ok(log
        .read_events::<TranslatedText>(0)?
        .into_iter()
        .filter(|e| e.body.from == "en")
        .filter_map(|e| e.body.output_blake3.map(|h| (h, e)))
        .collect())
}

/// The instructions for translating `text` from the language named `source` into
/// `target`.
fn render(source: &str, target: &str, text: &TaskText) -> Result<String, StageError> {
    let json = serde_json::to_string_pretty(text).map_err(LogError::Json)?;
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.add_template("instructions", INSTRUCTIONS)
        .map_err(|e| StageError::failed("reading the translation instructions", e))?;
    let template = env
        .get_template("instructions")
        .map_err(|e| StageError::failed("reading the translation instructions", e))?;
    template
        .render(minijinja::context! { source, target, text => json })
        .map_err(|e| StageError::failed("rendering the translation instructions", e))
}

/// The text an answer holds: a JSON object with the five fields, every one but the data
/// card non-empty; else why not.
pub fn parse_answer(answer: &str) -> Result<TaskText, String> {
    let (Some(start), Some(end)) = (answer.find('{'), answer.rfind('}')) else {
        return Err("the answer holds no JSON object".into());
    };
    if end < start {
        return Err("the answer holds no JSON object".into());
    }
    let value: serde_json::Value = serde_json::from_str(&answer[start..=end])
        .map_err(|e| format!("the answer's JSON object does not parse: {e}"))?;
    let field = |name: &str| -> Result<String, String> {
        match value.get(name).and_then(|v| v.as_str()) {
            Some(text) if name == "data_card" || !text.trim().is_empty() => Ok(text.to_string()),
            Some(_) => Err(format!("the answer's `{name}` is empty")),
            None => Err(format!("the answer has no text for `{name}`")),
        }
    };
    Ok(TaskText {
        title: field("title")?,
        domain: field("domain")?,
        metric: field("metric")?,
        description: field("description")?,
        data_card: field("data_card")?,
    })
}

/// The file of a produced text: a comment naming the model, then the text as TOML.
pub fn text_file(text: &TaskText, body: &TranslatedText) -> Result<Vec<u8>, StageError> {
    let toml =
        toml::to_string(text).map_err(|e| StageError::failed("writing the translated text as TOML", e))?;
    Ok(format!(
        "# Translated from `{}` into `{}` by `ml2b translate` with the model `{}` ({}); the store's\n# `translate` log holds the request and the answer.\n{toml}",
        body.from, body.to, body.model, body.model_id
    )
    .into_bytes())
}

impl Stage for Translate {
    type Body = TranslatedText;
    type Unit = Unit;

    fn plan(&self, store: &Store) -> Result<Vec<Planned<Unit>>, StageError> {
        let produced_by = match self.leg {
            Leg::Forward => HashMap::new(),
            Leg::Back => produced(store)?,
        };
        let mut planned = Vec::new();
        for c in self
            .bench
            .select(&self.competitions)
            .map_err(StageError::Benchmark)?
        {
            for code in self.targets(&self.bench.languages) {
                if let Some(source) = self.source(c, code)? {
                    planned.push(self.unit(c, code, source, &produced_by)?);
                }
            }
        }
        Ok(planned)
    }

    async fn run(&self, unit: Unit) -> Result<TranslatedText, StageError> {
        let Unit {
            mut body,
            request,
            prompt,
            english,
        } = unit;
        self.requests.put(prompt).await?;
        let sample = Sample {
            competition: &body.competition,
            language: &body.language,
            format: None,
            seed: 0,
            prompt_blake3: Some(body.prompt_blake3),
        };
        let label = format!("{}/{}→{}", body.competition, body.from, body.to);
        let response = self
            .requests
            .ask(&body.request_blake3, &sample, &label, &request)
            .await?;
        account(&mut body, &response, &self.requests.model);
        let completion = &response.completion;
        match parse_answer(&completion.text) {
            Ok(text) => {
                if let Some((english, metric)) = &english {
                    body.lost = verbatim::lost(english, &text, metric)
                        .iter()
                        .map(ToString::to_string)
                        .collect();
                }
                let file = text_file(&text, &body)?;
                body.output_blake3 = Some(self.requests.put(file).await?);
            }
            Err(reason) => body.reason = Some(why_no_text(reason, completion.finish_reason.as_deref())),
        }
        Ok(body)
    }

    fn config_hash(&self) -> Option<Hash> {
        Some(*INSTRUCTIONS_BLAKE3)
    }
}

/// Records in `body` what answering cost: the response, its attempts, tokens and dollars.
fn account(body: &mut TranslatedText, response: &provider::Response, model: &Model) {
    let completion = &response.completion;
    body.response_blake3 = Some(response.object);
    body.attempts = completion.attempts.len() as u32;
    body.input_tokens = completion.input_tokens;
    body.output_tokens = completion.output_tokens;
    body.cost_usd = cost_usd(
        completion.input_tokens,
        completion.output_tokens,
        model.usd_per_mtok_input,
        model.usd_per_mtok_output,
    );
}

/// Why an answer has no text, saying when it was cut at the token cap (OpenAI's `length`,
/// Anthropic's `max_tokens`).
fn why_no_text(reason: String, finish_reason: Option<&str>) -> String {
    match finish_reason {
        Some("length" | "max_tokens") => format!("{reason} (the answer was cut at the token cap)"),
        _ => reason,
    }
}

/// What a leg wrote: the files of the texts it produced, where none existed.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Written {
    /// Files written, relative to the benchmark root.
    pub files: Vec<String>,
    /// Pairs with no text (the answer held none), each with why.
    pub without_text: Vec<String>,
    /// Forward texts that lost what must stay verbatim, each with the list.
    pub lost: Vec<String>,
}

impl Translate {
    /// Writes the text of every committed event of this leg's plan whose file does not
    /// exist yet (`tasks/<code>.toml` forward, `back/<code>.toml` back), atomically; a file
    /// that exists is never touched.
    pub fn write_texts(&self, store: &Store) -> Result<Written, StageError> {
        let state = StageLog::new(store, TranslatedText::STAGE)?.state::<TranslatedText>(0)?;
        let mut written = Written::default();
        for p in self.plan(store)? {
            let Some(e) = state.get(&p.key) else { continue };
            let b = &e.body;
            let label = format!("{}/{}→{}", b.competition, b.from, b.to);
            if !b.lost.is_empty() {
                written.lost.push(format!("{label}: lost {}", b.lost.join(", ")));
            }
            let Some(text) = b.output_blake3 else {
                written
                    .without_text
                    .push(format!("{label}: {}", b.reason.as_deref().unwrap_or("no text")));
                continue;
            };
            let c = self
                .bench
                .select(std::slice::from_ref(&b.competition))
                .map_err(StageError::Benchmark)?[0];
            let path = match self.leg {
                Leg::Forward => c.task_path(&b.language),
                Leg::Back => c.back_path(&b.language),
            };
            if path.exists() {
                continue;
            }
            let bytes = store.objects().get(&text).map_err(LogError::from)?;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| LogError::io(dir, e))?;
            }
            crate::store::write_atomic(&path, &bytes).map_err(|e| LogError::io(&path, e))?;
            let shown = path.strip_prefix(&self.bench.root).unwrap_or(&path);
            written.files.push(shown.display().to_string());
        }
        Ok(written)
    }
}

/// The texts the forward leg produced, by the blake3 of the file it writes (the output
/// object): the model that produced each. A task file whose blake3 is not here was
/// imported or written by hand.
pub fn producers(store: &Store) -> Result<HashMap<Hash, String>, StageError> {
    let events = StageLog::new(store, TranslatedText::STAGE)?.read_events::<TranslatedText>(0)?;
    Ok(events
        .into_iter()
        .filter(|e| e.body.from == "en")
        .filter_map(|e| Some((e.body.output_blake3?, e.body.model)))
        .collect())
}

/// Whether two models are the same model (provider, endpoint and id), whatever their
/// manifest names.
pub fn same_model(a: &Model, b: &Model) -> bool {
    a.provider == b.provider && a.endpoint == b.endpoint && a.model == b.model
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_its_json_object_with_the_five_fields() {
        let answer = "Voici :\n```json\n{\"title\": \"T\", \"domain\": \"D\", \"metric\": \"M\", \"description\": \"`a` {b}\", \"data_card\": \"\"}\n```";
        let text = parse_answer(answer).unwrap();
        assert_eq!(text.description, "`a` {b}");
        assert_eq!(text.data_card, "");
        assert_eq!(
            parse_answer("no json").unwrap_err(),
            "the answer holds no JSON object"
        );
        assert_eq!(
            parse_answer("{\"title\": \"T\", \"domain\": \"D\", \"metric\": \"M\", \"description\": \"x\"}")
                .unwrap_err(),
            "the answer has no text for `data_card`"
        );
        assert_eq!(
            parse_answer("{\"title\": \" \", \"domain\": \"D\", \"metric\": \"M\", \"description\": \"x\", \"data_card\": \"\"}")
                .unwrap_err(),
            "the answer's `title` is empty"
        );
        assert!(
            parse_answer("{\"title\": \"cut")
                .unwrap_err()
                .contains("no JSON object")
        );
    }

    #[test]
    fn the_instructions_name_both_languages_and_hold_the_text() {
        let text = TaskText {
            title: "Toy".into(),
            domain: "d".into(),
            metric: "m".into(),
            description: "Predict `y`.".into(),
            data_card: "".into(),
        };
        let rendered = render("English", "French", &text).unwrap();
        assert!(rendered.starts_with(
            "You translate the task text of a machine-learning competition from English into French."
        ));
        assert!(
            rendered.contains("\"description\": \"Predict `y`.\""),
            "{rendered}"
        );
    }

    #[test]
    fn a_text_file_reads_back_as_its_text() {
        let text = TaskText {
            title: "Titre \"cité\"".into(),
            domain: "d".into(),
            metric: "m".into(),
            description: "## Aperçu\n\nLigne 1\nLigne 2 `x`".into(),
            data_card: "".into(),
        };
        let body_of = |from: &str, to: &str| TranslatedText {
            competition: "c".into(),
            language: "fr".into(),
            from: from.into(),
            to: to.into(),
            model: "m".into(),
            provider: crate::events::Provider::Openai,
            model_id: "m-1".into(),
            source_model: None,
            source_blake3: Hash::of(b"s"),
            instructions_blake3: *INSTRUCTIONS_BLAKE3,
            prompt_blake3: Hash::of(b"p"),
            request_blake3: Hash::of(b"r"),
            response_blake3: None,
            output_blake3: None,
            reason: None,
            lost: Vec::new(),
            attempts: 1,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: 0.0,
            floating_alias: false,
        };
        let file = text_file(&text, &body_of("en", "fr")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fr.toml");
        std::fs::write(&path, &file).unwrap();
        assert_eq!(TaskText::load(&path).unwrap(), text);
    }
}
