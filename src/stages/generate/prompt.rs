//! The prompt of one generation request: a system and a user message in one of the 14
//! languages, rendered from two minijinja templates and the language's instruction table.
//!
//! ```text
//! assets/generate/system.j2                  role, rules, environment and limits, answer format
//! assets/generate/user.j2                    task text, submission contract, run(), request
//! assets/generate/aide.j2                    the AIDE agent's step, appended to the user message
//! assets/generate/instructions/<code>.toml   flat table: key -> sentence, one per language
//! ```
//!
//! Everything is embedded with `include_str!`, so rendering reads no file. Invariants,
//! checked before anything is rendered:
//! - `en.toml` is the reference: every table has exactly its keys, no value is blank, and
//!   each value has the same `{placeholders}` as the English one.
//! - Every `t.<key>` the templates mention (found statically) is in the language's table,
//!   and so is `list_separator`, which Rust uses to join lists of code spans.
//!
//! So a missing or stray key is an error that names the language and the key. Rendering is
//! strict besides: an undefined variable is an error, never an empty string.
//!
//! A sentence's `{name}` placeholders are filled by the templates' `fill(name=value)`
//! filter, which fails when a placeholder has no value or a value has no placeholder. Only
//! the sentence is scanned, never the values put into it, so braces in a task's text are
//! kept as they are. The Python shown to the model (the signatures and `run()`) is in this
//! module, identical in every language.

use std::collections::{BTreeMap, BTreeSet};

use minijinja::value::{Kwargs, Value};
use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior};
use serde::{Deserialize, Serialize};

/// The 14 language codes, in the order of `manifests/languages.toml`.
pub const LANGUAGES: [&str; 14] = [
    "en", "fr", "es", "it", "zh", "ja", "ru", "pl", "tr", "ar", "uk", "ro", "kk", "be",
];

/// The packages of `assets/execute/requirements.txt` that a solution may import.
pub const LIBRARIES: [&str; 7] = [
    "numpy",
    "pandas",
    "scikit-learn",
    "scipy",
    "lightgbm",
    "xgboost",
    "catboost",
];

macro_rules! instruction_files {
    ($($code:literal),* $(,)?) => {
        [$(($code, include_str!(concat!("../../../assets/generate/instructions/", $code, ".toml")))),*]
    };
}

/// (code, TOML source) of each language's instruction table.
const INSTRUCTIONS: [(&str, &str); 14] = instruction_files!(
    "en", "fr", "es", "it", "zh", "ja", "ru", "pl", "tr", "ar", "uk", "ro", "kk", "be"
);

/// The language whose table defines the key set and the placeholders.
const REFERENCE: &str = "en";

/// The one key read by Rust rather than by the templates: how the language joins a list of
/// code spans (function names, target columns).
const LIST_SEPARATOR: &str = "list_separator";

const SYSTEM: &str = "system.j2";
const USER: &str = "user.j2";
const AIDE: &str = "aide.j2";
const TEMPLATES: [(&str, &str); 3] = [
    (SYSTEM, include_str!("../../../assets/generate/system.j2")),
    (USER, include_str!("../../../assets/generate/user.j2")),
    (AIDE, include_str!("../../../assets/generate/aide.j2")),
];

const MONO_SIGNATURES: &str = "\
import numpy as np
import pandas as pd


def train_and_predict(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    ...";

const MONO_RUN: &str = "\
def run(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    return train_and_predict(data, X_val)";

const MODULAR_SIGNATURES: &str = "\
import numpy as np
import pandas as pd
from typing import Any


def train(data: pd.DataFrame) -> Any:
    ...


def prepare_val(train_output: Any, X_val: pd.DataFrame) -> Any:
    ...


def predict(train_output: Any, prepare_val_output: Any) -> np.ndarray:
    ...";

const MODULAR_RUN: &str = "\
def run(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    train_output = train(data)
    return predict(train_output, prepare_val(train_output, X_val))";

/// The submission contract: ML2B's `MONO_PREDICT` or `MODULAR_PREDICT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Mono,
    Modular,
}

impl Mode {
    /// The functions the harness calls, in call order.
    pub fn functions(self) -> &'static [&'static str] {
        match self {
            Self::Mono => &["train_and_predict"],
            Self::Modular => &["train", "prepare_val", "predict"],
        }
    }

    /// The imports and stubs of the functions to write, as shown in the prompt.
    pub fn signatures(self) -> &'static str {
        match self {
            Self::Mono => MONO_SIGNATURES,
            Self::Modular => MODULAR_SIGNATURES,
        }
    }

    /// The fixed `run()`, shown verbatim and to be copied unchanged.
    pub fn run_source(self) -> &'static str {
        match self {
            Self::Mono => MONO_RUN,
            Self::Modular => MODULAR_RUN,
        }
    }
}

pub use crate::manifest::task::TaskText;

/// What the code returns (the harness's `spec.json` `kind`, with `k` for ranked lists).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum OutputKind {
    Values,
    Labels,
    Probabilities,
    Ranked { k: usize },
}

/// The shape of the predictions and the target columns they are for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Output {
    pub kind: OutputKind,
    /// The target columns of `train.csv`, in the order the task lists them.
    pub targets: Vec<String>,
}

/// The resources of one run, as the model is told them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub timeout_s: u64,
    pub memory_gib: f64,
    pub cpus: u32,
}

impl Limits {
    /// The limits the sandbox applies to one run, as the prompt states them: a model is
    /// never told a limit other than the one it runs under.
    pub fn of(sandbox: &crate::sandbox::Limits) -> Self {
        Self {
            timeout_s: sandbox.wall.as_secs(),
            memory_gib: sandbox.memory_bytes as f64 / f64::from(1u32 << 30),
            cpus: crate::sandbox::CPUS,
        }
    }
}

/// Everything a prompt is made from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptInputs {
    /// One of [`LANGUAGES`].
    pub language: String,
    pub mode: Mode,
    pub task: TaskText,
    pub output: Output,
    pub limits: Limits,
    /// Importable packages, as listed to the model (usually [`LIBRARIES`]).
    pub libraries: Vec<String>,
}

/// One step of the AIDE agent, as its prompt shows it (`aide.j2`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AideStep {
    /// `draft`, `debug` or `improve`.
    pub stage: String,
    /// The attempt being fixed or improved.
    pub code: Option<String>,
    /// Its run's output (debug).
    pub output: Option<String>,
    /// Its validation score (improve), as shown.
    pub score: Option<String>,
    /// Whether a higher score is better.
    pub maximize: bool,
    /// The earlier good attempts' plans and scores (draft and improve).
    pub memory: Vec<Remembered>,
}

/// An earlier good attempt in the AIDE prompt's memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Remembered {
    pub plan: String,
    pub score: String,
}

/// A rendered prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    pub system: String,
    pub user: String,
}

#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("unknown prompt language `{language}`; expected one of {}", LANGUAGES.join(", "))]
    UnknownLanguage { language: String },
    #[error("instructions/{language}.toml is not a flat table of strings")]
    Parse {
        language: String,
        #[source]
        source: toml::de::Error,
    },
    #[error("instructions/{language}.toml: missing key `{key}`")]
    MissingKey { language: String, key: String },
    #[error("instructions/{language}.toml: unknown key `{key}` (not in {REFERENCE}.toml)")]
    UnknownKey { language: String, key: String },
    #[error("instructions/{language}.toml: `{key}` is empty")]
    EmptyValue { language: String, key: String },
    #[error(
        "instructions/{language}.toml: `{key}` has placeholders {got:?}, \
         expected {expected:?} as in {REFERENCE}.toml"
    )]
    Placeholders {
        language: String,
        key: String,
        expected: Vec<String>,
        got: Vec<String>,
    },
    #[error("the prompt needs at least one target column")]
    NoTarget,
    #[error("template {template} does not compile")]
    Template {
        template: &'static str,
        #[source]
        source: minijinja::Error,
    },
    #[error("template {template} failed to render in `{language}`")]
    Render {
        template: &'static str,
        language: String,
        #[source]
        source: minijinja::Error,
    },
}

/// Renders the prompt of `inputs` from the embedded templates and instruction tables.
pub fn render(inputs: &PromptInputs) -> Result<Prompt, PromptError> {
    render_from(&INSTRUCTIONS, inputs, None)
}

/// The prompt of one AIDE step: [`render`]'s, with the step (`aide.j2`) appended to the
/// user message.
pub fn render_aide(inputs: &PromptInputs, step: &AideStep) -> Result<Prompt, PromptError> {
    render_from(&INSTRUCTIONS, inputs, Some(step))
}

/// Checks every embedded instruction table against the reference and the templates.
pub fn check() -> Result<(), PromptError> {
    let env = environment()?;
    LANGUAGES.iter().try_for_each(|&language| {
        let table = checked_table(&INSTRUCTIONS, language)?;
        check_references(&env, language, &table)
    })
}

type Table = BTreeMap<String, String>;

fn render_from(
    files: &[(&str, &str)],
    inputs: &PromptInputs,
    aide: Option<&AideStep>,
) -> Result<Prompt, PromptError> {
    let language = inputs.language.as_str();
    let table = checked_table(files, language)?;
    let env = environment()?;
    check_references(&env, language, &table)?;
    let context = Value::from_serialize(Context::new(inputs, &table, aide)?);
    let render = |template: &'static str| {
        env.get_template(template)
            .and_then(|t| t.render(&context))
            .map_err(|source| PromptError::Render {
                template,
                language: language.to_string(),
                source,
            })
    };
    let mut user = render(USER)?;
    if aide.is_some() {
        user = format!("{}\n\n{}", user.trim_end(), render(AIDE)?);
    }
    Ok(Prompt {
        system: render(SYSTEM)?,
        user,
    })
}

fn environment() -> Result<Environment<'static>, PromptError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_filter("fill", fill);
    for (template, source) in TEMPLATES {
        env.add_template(template, source)
            .map_err(|source| PromptError::Template { template, source })?;
    }
    Ok(env)
}

/// The language's table, checked against the reference table.
fn checked_table(files: &[(&str, &str)], language: &str) -> Result<Table, PromptError> {
    let table = parse_table(files, language)?;
    let reference = match language {
        REFERENCE => table.clone(),
        _ => parse_table(files, REFERENCE)?,
    };
    check_against(language, &table, &reference)?;
    Ok(table)
}

fn parse_table(files: &[(&str, &str)], language: &str) -> Result<Table, PromptError> {
    let (_, source) =
        files
            .iter()
            .find(|(code, _)| *code == language)
            .ok_or_else(|| PromptError::UnknownLanguage {
                language: language.to_string(),
            })?;
    toml::from_str(source).map_err(|source| PromptError::Parse {
        language: language.to_string(),
        source,
    })
}

fn check_against(language: &str, table: &Table, reference: &Table) -> Result<(), PromptError> {
    let error = |key: &str| (language.to_string(), key.to_string());
    if let Some(key) = reference.keys().find(|k| !table.contains_key(*k)) {
        let (language, key) = error(key);
        return Err(PromptError::MissingKey { language, key });
    }
    if let Some(key) = table.keys().find(|k| !reference.contains_key(*k)) {
        let (language, key) = error(key);
        return Err(PromptError::UnknownKey { language, key });
    }
    for (key, value) in table {
        if value.trim().is_empty() {
            let (language, key) = error(key);
            return Err(PromptError::EmptyValue { language, key });
        }
        let (expected, got) = (placeholders(&reference[key]), placeholders(value));
        if expected != got {
            let (language, key) = error(key);
            let owned = |s: BTreeSet<&str>| s.into_iter().map(String::from).collect();
            return Err(PromptError::Placeholders {
                language,
                key,
                expected: owned(expected),
                got: owned(got),
            });
        }
    }
    Ok(())
}

/// Every `t.<key>` the templates mention must be in the table.
fn check_references(env: &Environment, language: &str, table: &Table) -> Result<(), PromptError> {
    for (template, _) in TEMPLATES {
        let compiled = env
            .get_template(template)
            .map_err(|source| PromptError::Template { template, source })?;
        let used: BTreeSet<String> = compiled.undeclared_variables(true).into_iter().collect();
        let missing = used
            .iter()
            .filter_map(|name| name.strip_prefix("t."))
            .chain([LIST_SEPARATOR])
            .find(|key| !table.contains_key(*key));
        if let Some(key) = missing {
            return Err(PromptError::MissingKey {
                language: language.to_string(),
                key: key.to_string(),
            });
        }
    }
    Ok(())
}

/// The `fill` filter: replaces each `{name}` of a sentence with the keyword argument `name`.
fn fill(text: &str, kwargs: Kwargs) -> Result<String, minijinja::Error> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, name, after)) = next_placeholder(rest) {
        let value: Option<Value> = kwargs.get(name)?;
        let value = value.ok_or_else(|| {
            minijinja::Error::new(
                ErrorKind::UndefinedError,
                format!("placeholder {{{name}}} has no value in `fill`"),
            )
        })?;
        out.push_str(before);
        out.push_str(&value.to_string());
        rest = after;
    }
    out.push_str(rest);
    kwargs.assert_all_used()?;
    Ok(out)
}

/// Splits `text` around its first `{name}` (a name is lowercase ASCII, digits and `_`).
fn next_placeholder(text: &str) -> Option<(&str, &str, &str)> {
    let mut from = 0;
    while let Some(open) = text[from..].find('{').map(|i| from + i) {
        let inner = &text[open + 1..];
        if let Some(len) = inner.find('}') {
            let name = &inner[..len];
            let is_name = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if is_name {
                return Some((&text[..open], name, &inner[len + 1..]));
            }
        }
        from = open + 1;
    }
    None
}

pub(super) fn placeholders(mut text: &str) -> BTreeSet<&str> {
    let mut names = BTreeSet::new();
    while let Some((_, name, after)) = next_placeholder(text) {
        names.insert(name);
        text = after;
    }
    names
}

/// What the templates see.
#[derive(Serialize)]
struct Context<'a> {
    t: &'a Table,
    mode: Mode,
    task: TaskContext<'a>,
    output: OutputContext,
    limits: LimitsContext,
    libraries: &'a [String],
    /// The functions to write, as code spans joined by the language's `list_separator`.
    functions: String,
    signatures: &'static str,
    run_source: &'static str,
    /// The AIDE step (only `aide.j2` reads it).
    aide: Option<&'a AideStep>,
}

#[derive(Serialize)]
struct TaskContext<'a> {
    title: &'a str,
    domain: &'a str,
    metric: &'a str,
    description: &'a str,
    data_card: &'a str,
}

#[derive(Serialize)]
struct OutputContext {
    kind: &'static str,
    /// Several target columns (values only).
    multi: bool,
    /// The first target, as a code span.
    target: String,
    /// All targets, as code spans joined by the language's `list_separator`.
    targets: String,
    k: Option<usize>,
}

/// Numbers as the model reads them (`8`, not `8.0`).
#[derive(Serialize)]
struct LimitsContext {
    timeout_s: String,
    memory_gib: String,
    cpus: String,
}

impl<'a> Context<'a> {
    fn new(
        inputs: &'a PromptInputs,
        table: &'a Table,
        aide: Option<&'a AideStep>,
    ) -> Result<Self, PromptError> {
        let task = &inputs.task;
        let mode = inputs.mode;
        let separator = table.get(LIST_SEPARATOR).ok_or_else(|| PromptError::MissingKey {
            language: inputs.language.clone(),
            key: LIST_SEPARATOR.to_string(),
        })?;
        Ok(Self {
            t: table,
            mode,
            task: TaskContext {
                title: task.title.trim(),
                domain: task.domain.trim(),
                metric: task.metric.trim(),
                description: task.description.trim(),
                data_card: task.data_card.trim(),
            },
            output: OutputContext::new(&inputs.output, separator)?,
            limits: LimitsContext {
                timeout_s: inputs.limits.timeout_s.to_string(),
                memory_gib: inputs.limits.memory_gib.to_string(),
                cpus: inputs.limits.cpus.to_string(),
            },
            libraries: &inputs.libraries,
            functions: code_spans(mode.functions().iter().copied(), separator),
            signatures: mode.signatures(),
            run_source: mode.run_source(),
            aide,
        })
    }
}

impl OutputContext {
    fn new(output: &Output, separator: &str) -> Result<Self, PromptError> {
        let first = output.targets.first().ok_or(PromptError::NoTarget)?;
        let (kind, k) = match output.kind {
            OutputKind::Values => ("values", None),
            OutputKind::Labels => ("labels", None),
            OutputKind::Probabilities => ("probabilities", None),
            OutputKind::Ranked { k } => ("ranked", Some(k)),
        };
        Ok(Self {
            kind,
            multi: output.targets.len() > 1,
            target: code_spans([first.as_str()], separator),
            targets: code_spans(output.targets.iter().map(String::as_str), separator),
            k,
        })
    }
}

fn code_spans<'s>(names: impl IntoIterator<Item = &'s str>, separator: &str) -> String {
    names
        .into_iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(separator)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn inputs(language: &str, mode: Mode, kind: OutputKind, targets: &[&str]) -> PromptInputs {
        PromptInputs {
            language: language.into(),
            mode,
            task: TaskText {
                title: "Ames Housing Price Prediction".into(),
                domain: "Real estate valuation.".into(),
                metric: "Root Mean Squared Logarithmic Error".into(),
                description: "## Overview\n\nPredict the sale price.\n".into(),
                data_card: "## Files\n\n- `train.csv`\n- `test.csv`\n".into(),
            },
            output: Output {
                kind,
                targets: targets.iter().map(|t| t.to_string()).collect(),
            },
            limits: Limits {
                timeout_s: 600,
                memory_gib: 8.0,
                cpus: 4,
            },
            libraries: LIBRARIES.iter().map(|l| l.to_string()).collect(),
        }
    }

    fn english(mode: Mode) -> PromptInputs {
        inputs("en", mode, OutputKind::Values, &["Sale_Price"])
    }

    /// The embedded files with `edit` applied to the named language's source.
    fn edited(language: &str, edit: impl Fn(&str) -> String) -> Vec<(&'static str, String)> {
        INSTRUCTIONS
            .iter()
            .map(|&(code, text)| {
                (
                    code,
                    if code == language {
                        edit(text)
                    } else {
                        text.to_string()
                    },
                )
            })
            .collect()
    }

    fn render_edited(files: &[(&'static str, String)], inputs: &PromptInputs) -> Result<Prompt, PromptError> {
        let files: Vec<(&str, &str)> = files.iter().map(|(c, t)| (*c, t.as_str())).collect();
        render_from(&files, inputs, None)
    }

    fn without_line(text: &str, prefix: &str) -> String {
        text.lines()
            .filter(|line| !line.starts_with(prefix))
            .collect::<Vec<_>>()
            .join("\n")
    }

    const KINDS: [(OutputKind, &[&str]); 5] = [
        (OutputKind::Values, &["y"]),
        (OutputKind::Values, &["col_5", "col_8"]),
        (OutputKind::Labels, &["y"]),
        (OutputKind::Probabilities, &["y"]),
        (OutputKind::Ranked { k: 3 }, &["y"]),
    ];

    #[test]
    fn every_language_renders_in_both_modes_and_every_output_kind() {
        for language in LANGUAGES {
            for mode in [Mode::Mono, Mode::Modular] {
                for (kind, targets) in KINDS {
                    let prompt = render(&inputs(language, mode, kind, targets))
                        .unwrap_or_else(|e| panic!("{language} {mode:?} {kind:?}: {e:?}"));
                    for text in [&prompt.system, &prompt.user] {
                        // The sample task has no braces: any left is an unfilled placeholder.
                        assert!(!text.contains(['{', '}']), "{language} {mode:?}:\n{text}");
                        assert!(!text.contains("none"), "{language} {mode:?}:\n{text}");
                    }
                }
            }
        }
    }

    fn aide_step(stage: &str, maximize: bool, memory: usize) -> AideStep {
        AideStep {
            stage: stage.into(),
            code: (stage != "draft").then(|| "def train(data):\n    return 1".into()),
            output: (stage == "debug").then(|| "ValueError: boom".into()),
            score: (stage == "improve").then(|| "0.812500".into()),
            maximize,
            memory: (0..memory)
                .map(|i| Remembered {
                    plan: format!("plan number {i}"),
                    score: format!("0.{i}"),
                })
                .collect(),
        }
    }

    #[test]
    fn every_language_renders_every_aide_step_after_the_task() {
        for language in LANGUAGES {
            let inputs = inputs(language, Mode::Modular, OutputKind::Values, &["y"]);
            let plain = render(&inputs).unwrap();
            for (stage, memory) in [("draft", 0), ("draft", 2), ("debug", 0), ("improve", 1)] {
                let p = render_aide(&inputs, &aide_step(stage, language == "ja", memory))
                    .unwrap_or_else(|e| panic!("{language} {stage}: {e:?}"));
                assert_eq!(p.system, plain.system);
                assert!(p.user.starts_with(plain.user.trim_end()), "{language} {stage}");
                let step = &p.user[plain.user.trim_end().len()..];
                assert!(!step.contains(['{', '}']), "{language} {stage}:\n{step}");
                assert_eq!(
                    step.contains("def train(data)"),
                    stage != "draft",
                    "{language} {stage}"
                );
                assert_eq!(step.contains("ValueError: boom"), stage == "debug");
                assert_eq!(step.contains("0.812500"), stage == "improve");
                for i in 0..memory {
                    assert!(
                        step.contains(&format!("plan number {i}")),
                        "{language} {stage}:\n{step}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_improve_step_says_which_way_is_better() {
        let inputs = english(Mode::Modular);
        let up = render_aide(&inputs, &aide_step("improve", true, 0)).unwrap();
        let down = render_aide(&inputs, &aide_step("improve", false, 0)).unwrap();
        assert!(
            up.user.contains("scored 0.812500 (higher is better)"),
            "{}",
            up.user
        );
        assert!(
            down.user.contains("scored 0.812500 (lower is better)"),
            "{}",
            down.user
        );
    }

    #[test]
    fn embedded_tables_pass_their_checks() {
        check().unwrap();
    }

    #[test]
    fn instruction_files_on_disk_have_identical_key_sets() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/generate/instructions");
        let mut found: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        found.sort();
        let mut expected: Vec<String> = LANGUAGES.iter().map(|c| format!("{c}.toml")).collect();
        expected.sort();
        assert_eq!(found, expected);

        let read = |code: &str| std::fs::read_to_string(dir.join(format!("{code}.toml"))).unwrap();
        let keys = |code: &str| -> Vec<String> {
            let table: Table = toml::from_str(&read(code)).unwrap();
            table.into_keys().collect()
        };
        let reference = keys("en");
        for (i, code) in LANGUAGES.iter().enumerate() {
            assert_eq!(keys(code), reference, "{code}.toml");
            assert_eq!(
                INSTRUCTIONS[i],
                (*code, read(code).as_str()),
                "embedded {code}.toml"
            );
        }
    }

    #[test]
    fn signatures_and_run_are_verbatim_in_every_language() {
        for language in LANGUAGES {
            for mode in [Mode::Mono, Mode::Modular] {
                let prompt = render(&inputs(language, mode, OutputKind::Values, &["y"])).unwrap();
                let fenced = |code: &str| format!("```python\n{code}\n```");
                assert!(
                    prompt.user.contains(&fenced(mode.signatures())),
                    "{language} {mode:?}"
                );
                assert!(
                    prompt.user.contains(&fenced(mode.run_source())),
                    "{language} {mode:?}"
                );
                for name in mode.functions() {
                    assert!(
                        prompt.user.contains(&format!("def {name}(")),
                        "{language}: {name}"
                    );
                    assert!(prompt.user.contains(&format!("`{name}`")), "{language}: {name}");
                }
                assert!(prompt.user.contains("`run()`"), "{language}");
                assert!(prompt.system.contains("```python"), "{language}");
            }
        }
    }

    #[test]
    fn only_the_two_code_blocks_open_fences() {
        // A sentence starting with ``` would open a Markdown fence and swallow the rest.
        for language in LANGUAGES {
            let prompt = render(&inputs(language, Mode::Modular, OutputKind::Values, &["y"])).unwrap();
            let fences = |text: &str| text.lines().filter(|l| l.trim_start().starts_with("```")).count();
            assert_eq!(fences(&prompt.system), 0, "{language}");
            assert_eq!(fences(&prompt.user), 4, "{language}");
        }
    }

    #[test]
    fn exact_signatures_of_the_contract() {
        let sigs = Mode::Modular.signatures();
        assert!(sigs.contains("def train(data: pd.DataFrame) -> Any:"));
        assert!(sigs.contains("def prepare_val(train_output: Any, X_val: pd.DataFrame) -> Any:"));
        assert!(sigs.contains("def predict(train_output: Any, prepare_val_output: Any) -> np.ndarray:"));
        assert!(
            Mode::Mono
                .signatures()
                .contains("def train_and_predict(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:")
        );
        for mode in [Mode::Mono, Mode::Modular] {
            assert!(
                mode.run_source()
                    .starts_with("def run(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:\n")
            );
        }
    }

    #[test]
    fn limits_libraries_and_task_text_are_shown() {
        let prompt = render(&english(Mode::Modular)).unwrap();
        assert!(prompt.system.contains("600 seconds"));
        assert!(prompt.system.contains("8 GiB"));
        assert!(prompt.system.contains("CPU: 4 cores"));
        for library in LIBRARIES {
            assert!(prompt.system.contains(&format!("- `{library}`\n")), "{library}");
        }
        assert!(prompt.user.starts_with("# Ames Housing Price Prediction\n"));
        assert!(
            prompt
                .user
                .contains("**Evaluation metric:** Root Mean Squared Logarithmic Error")
        );
        assert!(
            prompt
                .user
                .contains("## Overview\n\nPredict the sale price.\n\n# Data\n\n## Files")
        );
        assert!(prompt.user.contains("including the target: `Sale_Price`."));
    }

    #[test]
    fn lists_are_joined_the_language_way() {
        let zh = render(&inputs("zh", Mode::Modular, OutputKind::Values, &["a", "b"])).unwrap();
        assert!(zh.user.contains("`train`、`prepare_val`、`predict`"));
        assert!(zh.user.contains("`a`、`b`"));
        let files: Vec<(&'static str, String)> = INSTRUCTIONS
            .iter()
            .map(|&(code, text)| (code, without_line(text, "list_separator =")))
            .collect();
        let err = render_edited(&files, &inputs("it", Mode::Mono, OutputKind::Values, &["y"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "instructions/it.toml: missing key `list_separator`"
        );
    }

    #[test]
    fn braces_in_the_task_text_are_kept() {
        let mut inputs = english(Mode::Mono);
        inputs.task.description = "Score = {seconds} and {{x}}".into();
        let prompt = render(&inputs).unwrap();
        assert!(prompt.user.contains("Score = {seconds} and {{x}}"));
    }

    #[test]
    fn a_missing_key_names_language_and_key() {
        let files = edited("fr", |t| without_line(t, "run_intro ="));
        let err =
            render_edited(&files, &inputs("fr", Mode::Modular, OutputKind::Values, &["y"])).unwrap_err();
        assert!(
            matches!(&err, PromptError::MissingKey { language, key } if language == "fr" && key == "run_intro"),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "instructions/fr.toml: missing key `run_intro`");
    }

    #[test]
    fn a_key_the_templates_use_but_no_table_has_is_named() {
        // Removed from every table, the key passes the comparison with English; the
        // templates' references still catch it.
        let files: Vec<(&'static str, String)> = INSTRUCTIONS
            .iter()
            .map(|&(code, text)| (code, without_line(text, "request =")))
            .collect();
        let err = render_edited(&files, &inputs("kk", Mode::Mono, OutputKind::Values, &["y"])).unwrap_err();
        assert_eq!(err.to_string(), "instructions/kk.toml: missing key `request`");
    }

    #[test]
    fn a_stray_key_is_named() {
        let files = edited("ja", |t| format!("{t}\nextra = \"x\"\n"));
        let err = render_edited(&files, &inputs("ja", Mode::Mono, OutputKind::Values, &["y"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "instructions/ja.toml: unknown key `extra` (not in en.toml)"
        );
    }

    #[test]
    fn a_changed_placeholder_is_named() {
        let files = edited("ru", |t| t.replace("{seconds} с", "{секунды} {secs} с"));
        let err = render_edited(&files, &inputs("ru", Mode::Mono, OutputKind::Values, &["y"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "instructions/ru.toml: `limit_time` has placeholders [\"secs\"], expected [\"seconds\"] as in en.toml"
        );
    }

    #[test]
    fn an_unknown_language_is_refused() {
        let err = render(&inputs("de", Mode::Mono, OutputKind::Values, &["y"])).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("unknown prompt language `de`; expected one of en, fr,")
        );
    }

    #[test]
    fn no_target_is_refused() {
        let err = render(&inputs("en", Mode::Mono, OutputKind::Values, &[])).unwrap_err();
        assert!(matches!(err, PromptError::NoTarget), "{err:?}");
    }

    #[test]
    fn fill_needs_every_placeholder_and_uses_every_value() {
        let mut env = Environment::new();
        env.add_filter("fill", fill);
        let run = |src: &str| env.render_str(src, ());
        assert_eq!(run("{{ 'a {x} b {y}' | fill(x=1, y='z') }}").unwrap(), "a 1 b z");
        assert_eq!(run("{{ 'a {X} {} { x }' | fill() }}").unwrap(), "a {X} {} { x }");
        let missing = run("{{ 'a {x}' | fill(y=1) }}").unwrap_err();
        assert!(
            missing.to_string().contains("placeholder {x} has no value"),
            "{missing}"
        );
        assert!(run("{{ 'a' | fill(y=1) }}").is_err());
    }

    #[test]
    fn strict_mode_refuses_undefined_variables() {
        let env = environment().unwrap();
        let err = env
            .get_template(USER)
            .unwrap()
            .render(minijinja::context! {})
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UndefinedError);
    }
}
