//! A store to look at: real committed events and objects of every pipeline log, written
//! through the library (no model, no sandbox), with fixed times so that what `ml2b show`
//! and `ml2b view` print is the same on every run.
//!
//! ```text
//! runs (generate → execute → grade), seed 0, modular:
//!   model   competition         en              kk              fr
//!   gpt-x   ames-housing        aide search     ok 0.9 (*)      ok 0.8
//!   gpt-x   concrete-strength   ok 1.0          runtime_error   ok 0.7
//!   qwen-y  ames-housing        ok 0.6          timeout         not executed
//!   qwen-y  concrete-strength   ok 0.5          ok, invalid     ok 0.4
//! (*) THE_RUN: prompt in Kazakh, response, code with a leakage finding at
//!     LEAKY_LINE, stdout/stderr, predictions, r_p against both baselines.
//! translate_validate: ames-housing and concrete-strength in kk and fr (the root's texts).
//! journal: the aide search of gpt-x/ames-housing/en: draft (buggy) → debug → improve.
//! analyze: every table of queries/ (the real stage, run by the binary).
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use chrono::{TimeZone, Utc};
use ml2b::events::Provider;
use ml2b::events::{Agent, Attempt, Execution, Generation, Grade, GradeV2, TranslationCheck};
use ml2b::events::{Format, Outcome};
use ml2b::log::{Event, EventBody, Provenance, StageLog, unit_key};
use ml2b::store::{Hash, Store};

use crate::common::Workspace;

/// The bundled benchmark root.
pub(crate) const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The run with everything: gpt-x, ames-housing, Kazakh.
pub(crate) const THE_RUN: (&str, &str, &str) = ("gpt-x", "ames-housing", "kk");

/// THE_RUN's code: a scaler fitted on the validation rows at LEAKY_LINE.
pub(crate) const LEAKY_CODE: &str = r#"import numpy as np
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler


def train(data):
    X = data.drop(columns=["SalePrice"]).select_dtypes("number").fillna(0)
    model = Ridge(alpha=1.0).fit(X, np.log1p(data["SalePrice"]))
    return model, list(X.columns)


def prepare_val(train_output, X_val):
    model, columns = train_output
    X = X_val[columns].fillna(0)
    scaler = StandardScaler()
    scaler.fit(X)
    return model, X


def predict(train_output, prepare_val_output):
    model, X = prepare_val_output
    return np.expm1(model.predict(X))
"#;

/// The line of LEAKY_CODE the static checks flag.
pub(crate) const LEAKY_LINE: usize = 16;

/// What the fixture holds, by name.
pub(crate) struct Fixture {
    pub ws: Workspace,
    /// Generation event ids by (model, competition, language).
    pub runs: BTreeMap<(String, String, String), Hash>,
    /// The aide search's attempts' event ids, in step order.
    pub attempts: Vec<Hash>,
}

impl Fixture {
    pub(crate) fn run(&self, (model, competition, language): (&str, &str, &str)) -> Hash {
        self.runs[&(model.into(), competition.into(), language.into())]
    }
}

/// How a fixture run ended: `Some(r_p)` valid, else the outcome.
#[derive(Clone, Copy)]
enum End {
    Valid(f64),
    Failed(Outcome),
    Invalid,
    NotExecuted,
}

const RUNS: [(&str, &str, [End; 3]); 4] = [
    (
        "gpt-x",
        "ames-housing",
        [End::Valid(0.95), End::Valid(0.9), End::Valid(0.8)],
    ),
    (
        "gpt-x",
        "concrete-strength",
        [
            End::Valid(1.0),
            End::Failed(Outcome::RuntimeError),
            End::Valid(0.7),
        ],
    ),
    (
        "qwen-y",
        "ames-housing",
        [End::Valid(0.6), End::Failed(Outcome::Timeout), End::NotExecuted],
    ),
    (
        "qwen-y",
        "concrete-strength",
        [End::Valid(0.5), End::Invalid, End::Valid(0.4)],
    ),
];

const LANGUAGES: [&str; 3] = ["en", "kk", "fr"];

/// Builds the fixture store (and runs the analyze stage over it).
pub(crate) fn fixture() -> Fixture {
    let ws = Workspace::new();
    let mut w = Writer {
        store: ws.store(),
        clock: 0,
        gens: Vec::new(),
        execs: Vec::new(),
        grades: Vec::new(),
    };
    let checks = w.checks();
    let mut runs = BTreeMap::new();
    let mut attempts = Vec::new();
    for (model, competition, ends) in RUNS {
        for (language, end) in LANGUAGES.into_iter().zip(ends) {
            let id = if (model, competition, language) == ("gpt-x", "ames-housing", "en") {
                let (id, steps) = w.aide_search(model, competition, language);
                attempts = steps;
                id
            } else {
                w.run(model, competition, language, end)
            };
            runs.insert((model.into(), competition.into(), language.into()), id);
        }
    }
    let store = ws.store();
    commit(&store, checks);
    commit(&store, std::mem::take(&mut w.gens));
    commit(&store, std::mem::take(&mut w.execs));
    commit(&store, std::mem::take(&mut w.grades));
    analyze(&ws);
    Fixture { ws, runs, attempts }
}

/// Commits one more valid one-shot run (`r_p`) to the fixture's store, as a later run
/// would: a new segment of each of generate, execute and grade. Returns its generation id.
pub(crate) fn add_run(fx: &Fixture, (model, competition, language): (&str, &str, &str), r_p: f64) -> Hash {
    let mut w = Writer {
        store: fx.ws.store(),
        clock: 100_000,
        gens: Vec::new(),
        execs: Vec::new(),
        grades: Vec::new(),
    };
    let id = w.run(model, competition, language, End::Valid(r_p));
    commit(&w.store, std::mem::take(&mut w.gens));
    commit(&w.store, std::mem::take(&mut w.execs));
    commit(&w.store, std::mem::take(&mut w.grades));
    id
}

fn analyze(ws: &Workspace) {
    let out = ws
        .ml2b()
        .args(["-q", "stage", "analyze", "--root", ROOT])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn commit<B: EventBody>(store: &Store, events: Vec<Event<B>>) {
    let log = StageLog::new(store, B::STAGE).unwrap();
    let mut view = log.view().unwrap();
    log.commit(&mut view, events, None).unwrap();
}

struct Writer {
    store: Store,
    /// Seconds after the fixture's epoch of the next event.
    clock: i64,
    gens: Vec<Event<Generation>>,
    execs: Vec<Event<Execution>>,
    grades: Vec<Event<Grade>>,
}

impl Writer {
    fn put(&self, bytes: &[u8]) -> Hash {
        self.store.objects().put(bytes).unwrap()
    }

    /// An event at the next tick of the fixture's clock, on host `fixture`.
    fn event<B: EventBody>(
        &mut self,
        params: &impl serde::Serialize,
        upstream: Vec<Hash>,
        body: B,
    ) -> Event<B> {
        self.clock += 1;
        let provenance = Provenance {
            created_at: Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap()
                + chrono::Duration::seconds(self.clock),
            host: "fixture".into(),
            duration_ms: 1500,
        };
        let key = unit_key(B::STAGE, B::SCHEMA_VERSION, &upstream, params).unwrap();
        Event::new(key, upstream, body, provenance).unwrap()
    }

    /// The translation checks of both competitions in kk and fr, over the root's texts.
    fn checks(&mut self) -> Vec<Event<TranslationCheck>> {
        let mut out = Vec::new();
        for competition in ["ames-housing", "concrete-strength"] {
            for language in ["kk", "fr"] {
                let body = check(competition, language);
                out.push(self.event(&(competition, language), vec![], body));
            }
        }
        out
    }

    /// A one-shot run that ends as `end`; returns its generation's id.
    fn run(&mut self, model: &str, competition: &str, language: &str, end: End) -> Hash {
        let special = (model, competition, language) == THE_RUN;
        let code = if special {
            LEAKY_CODE.to_string()
        } else {
            format!(
                "def train(data):\n    return {:?}\n\ndef prepare_val(train_output, X_val):\n    return X_val\n\ndef predict(train_output, prepare_val_output):\n    return [0.0] * len(prepare_val_output)\n",
                format!("{model}/{competition}/{language}")
            )
        };
        let task = task_text(competition, language);
        let prompt = serde_json::json!({"system": "You are an expert data scientist.", "user": task});
        let answer = format!("A ridge regression on the numeric columns.\n\n```python\n{code}```\n");
        let mut g = generation(model, competition, language, Agent::OneShot);
        g.code_blake3 = self.put(code.as_bytes());
        g.code_bytes = code.len() as u64;
        g.prompt_blake3 = Some(self.put(prompt.to_string().as_bytes()));
        g.request_blake3 = Some(Hash::of(
            format!("request {model} {competition} {language}").as_bytes(),
        ));
        g.response_blake3 = Some(self.put(completion(&answer).as_bytes()));
        let ge = self.event(&(model, competition, language, "generate"), vec![], g.clone());
        let id = ge.id;
        self.gens.push(ge);
        if !matches!(end, End::NotExecuted) {
            self.execute_and_grade(&g, id, end, special);
        }
        id
    }

    fn execute_and_grade(&mut self, g: &Generation, gid: Hash, end: End, special: bool) {
        let code = String::from_utf8(self.store.objects().get(&g.code_blake3).unwrap()).unwrap();
        let findings = ml2b::check::check(&code, g.format);
        let mut x = execution(g, end);
        x.findings = serde_json::to_string(&findings).unwrap();
        x.leakage = findings.iter().any(|f| f.kind.is_leakage());
        if special {
            x.stdout_tail = "fitted Ridge on 1168 rows\n".into();
            x.stderr_tail = "UserWarning: X has feature names\n".into();
        }
        if matches!(x.outcome, Outcome::Ok) {
            x.predictions_blake3 = Some(self.put(&predictions()));
        }
        let xe = self.event(&(&g.competition, "modular", g.code_blake3), vec![gid], x.clone());
        let xid = xe.id;
        self.execs.push(xe);
        let gr = grade(&x, end);
        let ge = self.event(&"grade", vec![xid], gr);
        self.grades.push(ge);
    }

    /// The aide search of (model, competition, language): three attempts, the last chosen.
    fn aide_search(&mut self, model: &str, competition: &str, language: &str) -> (Hash, Vec<Hash>) {
        let mut g = generation(model, competition, language, Agent::Aide);
        let search_key = unit_key(
            Generation::STAGE,
            ml2b::events::GENERATE_KEY_VERSION,
            &[],
            &(model, competition, language, "aide"),
        )
        .unwrap();
        let steps = [
            ("draft", None, None, "Start from the mean price."),
            (
                "debug",
                Some(0),
                Some(0.21),
                "The draft raised; fix the column names.",
            ),
            ("improve", Some(1), Some(0.18), "Log-transform the target."),
        ];
        let mut nodes: Vec<String> = Vec::new();
        let mut journal = Vec::new();
        for (step, (stage, parent, metric, plan)) in steps.into_iter().enumerate() {
            let code = format!("# step {step}: {plan}\ndef train(data):\n    return 0\n");
            let node = Hash::of(format!("{search_key} {step}").as_bytes()).to_hex()[..32].to_string();
            let a = Attempt {
                competition: competition.into(),
                language: language.into(),
                model: model.into(),
                format: Format::Modular,
                seed: 0,
                search: search_key,
                node: node.clone(),
                parent: parent.map(|p: usize| nodes[p].clone()),
                step: step as u32,
                stage: stage.into(),
                debug_depth: u32::from(stage == "debug"),
                plan: plan.into(),
                code_blake3: self.put(code.as_bytes()),
                prompt_blake3: self.put(
                    serde_json::json!({"system": "aide", "user": plan})
                        .to_string()
                        .as_bytes(),
                ),
                request_blake3: Hash::of(format!("aide request {step}").as_bytes()),
                response_blake3: self.put(completion(&format!("{plan}\n```python\n{code}```")).as_bytes()),
                http_attempts: 1,
                input_tokens: 800,
                output_tokens: 200,
                cost_usd: 0.002,
                outcome: if metric.is_some() {
                    Outcome::Ok
                } else {
                    Outcome::RuntimeError
                },
                exec_seconds: 2.5,
                term_out: if metric.is_some() {
                    "validation rmsle 0.2\n".into()
                } else {
                    "KeyError: 'SalePrice'\n".into()
                },
                exc_type: metric.is_none().then(|| "KeyError".to_string()),
                metric,
                maximize: false,
                is_buggy: metric.is_none(),
                analysis: format!("step {step} {}", if metric.is_some() { "ran" } else { "failed" }),
                is_best_so_far: metric.is_some(),
                elapsed_seconds: 10.0 * (step as f64 + 1.0),
                validation_blake3: "0".repeat(64),
            };
            nodes.push(node);
            g.code_blake3 = a.code_blake3;
            g.prompt_blake3 = Some(a.prompt_blake3);
            g.response_blake3 = Some(a.response_blake3);
            g.request_blake3 = Some(a.request_blake3);
            g.code_bytes = code.len() as u64;
            journal.push(self.event(&(search_key, step), vec![], a));
        }
        let ids: Vec<Hash> = journal.iter().map(|e| e.id).collect();
        commit(&self.store, journal);
        self.clock += 1;
        let provenance = Provenance {
            created_at: Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap()
                + chrono::Duration::seconds(self.clock),
            host: "fixture".into(),
            duration_ms: 30_000,
        };
        let ge = Event::new(search_key, vec![], g.clone(), provenance).unwrap();
        let gid = ge.id;
        self.gens.push(ge);
        self.execute_and_grade(&g, gid, End::Valid(0.95), false);
        (gid, ids)
    }
}

fn generation(model: &str, competition: &str, language: &str, agent: Agent) -> Generation {
    Generation {
        competition: competition.into(),
        language: language.into(),
        model: model.into(),
        provider: Provider::Openai,
        agent,
        format: Format::Modular,
        seed: 0,
        code_blake3: Hash([0; 32]),
        code_bytes: 0,
        prompt_blake3: None,
        request_blake3: None,
        response_blake3: None,
        attempts: 1,
        extraction: None,
        finish_reason: Some("stop".into()),
        floating_alias: false,
        input_tokens: 1200,
        output_tokens: 300,
        cost_usd: if model == "gpt-x" { 0.0105 } else { 0.0 },
        translation_passed: true,
        text_blake3: None,
        text_translated_by: None,
        agent_name: None,
    }
}

/// A recorded completion (the response object's JSON) answering `text`.
fn completion(text: &str) -> String {
    serde_json::json!({
        "text": text, "input_tokens": 1200, "output_tokens": 300, "finish_reason": "stop",
        "usage_missing": false, "response_json": "{}", "attempts": [],
    })
    .to_string()
}

fn execution(g: &Generation, end: End) -> Execution {
    let outcome = match end {
        End::Failed(o) => o,
        _ => Outcome::Ok,
    };
    Execution {
        competition: g.competition.clone(),
        format: g.format,
        code_blake3: g.code_blake3,
        backend: "local".into(),
        image: None,
        outcome,
        predictions_blake3: None,
        result: "{}".into(),
        detail: matches!(end, End::Failed(_)).then(|| "exit status 1".to_string()),
        wall_seconds: 12.5,
        stdout_tail: String::new(),
        stderr_tail: match end {
            End::Failed(_) => "Traceback (most recent call last):\nValueError: boom\n".into(),
            _ => String::new(),
        },
        findings: "[]".into(),
        leakage: false,
        network: None,
        requests: None,
        requests_total: None,
        requests_denied: None,
        model_cache_blake3: None,
        gpus: None,
    }
}

fn grade(x: &Execution, end: End) -> Grade {
    let (valid, r_p, reason) = match end {
        End::Valid(r) => (true, Some(r), None),
        End::Invalid => (
            false,
            Some(0.0),
            Some("predictions hold NaN in 3 rows".to_string()),
        ),
        _ => (false, Some(0.0), Some(format!("the run ended {}", x.outcome))),
    };
    GradeV2 {
        competition: x.competition.clone(),
        format: x.format,
        code_blake3: x.code_blake3,
        metric: "rmsle".into(),
        direction: "minimize".into(),
        outcome: x.outcome,
        valid,
        score: r_p.filter(|_| valid).map(|r| 0.12 / r),
        reason,
        baseline_score: Some(0.12),
        baseline_run: None,
        r_p,
        automl_score: Some(0.13),
        automl_run: None,
        r_p_automl: r_p.map(|r| r * 0.13 / 0.12),
        role: None,
        in_expected_range: None,
        answers_blake3: Hash::of(b"answers"),
    }
    .into()
}

/// The root's task text of `competition` in `language`.
fn task_text(competition: &str, language: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/data/{competition}/tasks/{language}.toml")).unwrap()
}

fn file_hash(path: &str) -> Hash {
    Hash::of(&std::fs::read(format!("{ROOT}/{path}")).unwrap())
}

fn check(competition: &str, language: &str) -> TranslationCheck {
    TranslationCheck {
        competition: competition.into(),
        language: language.into(),
        tier: if language == "kk" { "low" } else { "high" }.into(),
        translation: "machine".into(),
        english_blake3: file_hash(&format!("data/{competition}/tasks/en.toml")),
        text_blake3: file_hash(&format!("data/{competition}/tasks/{language}.toml")),
        back_blake3: Some(file_hash(&format!("data/{competition}/back/{language}.toml"))),
        bleu: Some(if language == "kk" { 0.41 } else { 0.63 }),
        bleu_signature: "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1".into(),
        chrf: Some(61.5),
        chrf_signature: "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.5.1".into(),
        ratings_blake3: None,
        ac1: None,
        ac1_se: None,
        ac1_ci_low: None,
        ac1_ci_high: None,
        raters: None,
        subjects: None,
        min_bleu: 0.3,
        min_ac1: 0.6,
        passed: true,
        reasons: vec!["no ratings: the AC1 gate was not applied".into()],
    }
}

/// A small predictions table (Parquet), as the harness writes one.
fn predictions() -> Vec<u8> {
    let id: ArrayRef = Arc::new(Int64Array::from(vec![1461, 1462, 1463]));
    let y: ArrayRef = Arc::new(Float64Array::from(vec![169_000.5, 187_724.25, 181_000.0]));
    let batch = RecordBatch::try_from_iter([("Id", id), ("SalePrice", y)]).unwrap();
    let mut buf = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    buf
}

/// What a model and its run wrote, for [`run_with`].
pub(crate) struct Written<'a> {
    pub response: &'a str,
    pub code: &'a str,
    pub stdout: &'a str,
    pub detail: &'a str,
}

/// Commits one run of `gpt-x` on ames-housing in English (a generate event and its execute
/// event, `runtime_error`) whose texts are `w`, into `ws`'s store; returns the generate
/// event's id. What a hostile model or solution can leave in a store.
pub(crate) fn run_with(ws: &Workspace, w: &Written) -> Hash {
    let mut writer = Writer {
        store: ws.store(),
        clock: 0,
        gens: Vec::new(),
        execs: Vec::new(),
        grades: Vec::new(),
    };
    let mut g = generation("gpt-x", "ames-housing", "en", Agent::OneShot);
    g.code_blake3 = writer.put(w.code.as_bytes());
    g.code_bytes = w.code.len() as u64;
    g.response_blake3 = Some(writer.put(completion(w.response).as_bytes()));
    let ge = writer.event(&("written", "generate"), vec![], g.clone());
    let id = ge.id;
    let mut x = execution(&g, End::Failed(Outcome::RuntimeError));
    x.stdout_tail = w.stdout.into();
    x.detail = Some(w.detail.into());
    let xe = writer.event(&("written", "execute"), vec![id], x);
    commit(&writer.store, vec![ge]);
    commit(&writer.store, vec![xe]);
    id
}
