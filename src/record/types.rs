//! What a record is made of, as `ml2b show --json` prints it and the viewer renders it:
//! an event's row, its links, the detail of each kind of event (a run, an aide attempt, an
//! analysis, a translation check) and the artefacts `--raw` writes. A leaf of `record/`:
//! plain data, read by every part of it.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::events::{Analysis, Attempt, Execution, Generation, Grade, TranslationCheck};
use crate::store::Hash;

/// One event as its log holds it: the common columns and the body's fields (JSON).
#[derive(Clone, Debug, Serialize)]
pub struct EventRow {
    pub log: String,
    pub event_id: Hash,
    pub unit_key: Hash,
    pub upstream: Vec<Hash>,
    pub created_at: String,
    pub host: String,
    pub duration_ms: u64,
    /// The body's fields, in the log's column order.
    pub body: Map<String, Value>,
}

/// Another event this one is related to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Link {
    /// `upstream` (consumed by this event), `downstream` (consumed this event) or the
    /// relation's name (`execution`, `grade`, `translation`, `attempt`, `search`, `run`).
    pub relation: String,
    pub log: String,
    pub event_id: Hash,
    /// What it is, in a few words.
    pub label: String,
}

/// An event of a typed log, with its id.
#[derive(Clone, Debug, Serialize)]
pub struct Ided<B> {
    pub event_id: Hash,
    #[serde(flatten)]
    pub body: B,
}

/// Everything about one event.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    pub event: EventRow,
    pub detail: Detail,
    pub links: Vec<Link>,
    /// What the event names and the store lacks: a missing or damaged object (the rest
    /// is shown; `ml2b verify` checks the whole store).
    pub problems: Vec<String>,
}

/// What a record knows beyond the event's own fields, by log.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Detail {
    /// A generate, execute or grade event: the run it belongs to.
    Run(Box<Run>),
    /// A journal event: one attempt of an aide search.
    Attempt(Box<Step>),
    /// An analyze event: the table it computed.
    Analysis(Box<Table>),
    /// A translate-validate event: the texts it checked.
    Translation(Box<Texts>),
    /// A log whose events this module does not know (or could not decode): the fields alone.
    Event,
}

/// The prompt object of a generation: `{"system", "user"}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Prompt {
    #[serde(default)]
    pub system: String,
    #[serde(default)]
    pub user: String,
}

/// One finding of the static checks, at its 1-based line.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Finding {
    pub kind: String,
    pub line: usize,
    pub message: String,
}

/// A generated sample, its run and its grade.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    pub generation: Ided<Generation>,
    /// The entrant the tables count it under (`<model>+aide` for an aide search).
    pub entrant: String,
    pub prompt: Option<Prompt>,
    /// The model's answer as text.
    pub response: Option<String>,
    pub code: Option<String>,
    pub findings: Vec<Finding>,
    /// The English task (from the benchmark root, when its text is the one checked).
    pub english_task: Option<String>,
    pub translation: Option<Ided<TranslationCheck>>,
    pub execution: Option<Ided<Execution>>,
    pub grade: Option<Ided<Grade>>,
    /// The aide search's attempts, in step order (none for other agents).
    pub attempts: Vec<AttemptRef>,
    /// An external agent's run: how it ended, its requests, what it printed and kept.
    pub external: Option<ExternalView>,
}

/// One attempt of a search, as a node of its tree.
#[derive(Clone, Debug, Serialize)]
pub struct AttemptRef {
    pub event_id: Hash,
    pub node: String,
    pub parent: Option<String>,
    pub step: u32,
    pub stage: String,
    pub metric: Option<f64>,
    pub is_buggy: bool,
    pub is_best_so_far: bool,
}

/// One attempt of an aide search, with its texts.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub attempt: Ided<Attempt>,
    pub prompt: Option<Prompt>,
    pub response: Option<String>,
    pub code: Option<String>,
    /// The generate event the search became, if committed.
    pub run: Option<Hash>,
}

/// An analyze event's table.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    pub analysis: Ided<Analysis>,
    /// The SQL text, when a table of this binary's `queries/` has that blake3.
    pub query: Option<String>,
    /// The first rows, rendered as text (all columns).
    pub rows: Vec<Vec<String>>,
}

/// A translation check and the texts it checked.
#[derive(Clone, Debug, Serialize)]
pub struct Texts {
    pub check: Ided<TranslationCheck>,
    pub english: Option<String>,
    pub text: Option<String>,
    pub back: Option<String>,
}

/// The artefacts `ml2b show --raw KIND` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Artefact {
    /// The prompt object (JSON `{"system", "user"}`).
    Prompt,
    /// The recorded response object (JSON: text, usage, raw body, attempts).
    Response,
    /// The solution's code.
    Code,
    /// The predictions (Parquet).
    Predictions,
    /// The sandbox's stdout tail.
    Stdout,
    /// The sandbox's stderr tail.
    Stderr,
    /// An aide attempt's run output (`term_out`).
    TermOut,
    /// An analyze event's table (Parquet).
    Result,
    /// An analyze event's SQL.
    Query,
    /// A translation check's English, translated and back-translated texts.
    English,
    Text,
    Back,
}

impl Artefact {
    /// Every artefact, in `--raw`'s order.
    pub const ALL: [Artefact; 12] = [
        Self::Prompt,
        Self::Response,
        Self::Code,
        Self::Predictions,
        Self::Stdout,
        Self::Stderr,
        Self::TermOut,
        Self::Result,
        Self::Query,
        Self::English,
        Self::Text,
        Self::Back,
    ];

    /// The name `--raw` takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Prompt => "prompt",
            Self::Response => "response",
            Self::Code => "code",
            Self::Predictions => "predictions",
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
            Self::TermOut => "term-out",
            Self::Result => "result",
            Self::Query => "query",
            Self::English => "english",
            Self::Text => "text",
            Self::Back => "back",
        }
    }

    /// The artefact named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// An external agent's run, as `show` and the run page present it.
#[derive(Clone, Debug, Serialize)]
pub struct ExternalView {
    pub run: Ided<crate::events::ExternalRun>,
    /// Its requests through the gateway, in order (the first 10,000).
    pub calls: Vec<crate::events::GatewayCall>,
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    /// What it kept in `/home/logs`: path, bytes, blake3.
    pub logs: Vec<(String, u64, String)>,
}
