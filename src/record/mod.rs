//! Everything the store holds about one event: what `ml2b show` prints and `ml2b view`
//! renders.
//!
//! An event is named by its id, its unit key, or a unique hex prefix of either, in any log
//! ([`resolve()`]). [`load`] reads the event and what it names, following the relations
//! between the logs: each a lookup in the row index of the log it names
//! ([`crate::log::rows`], through [`logs`]) and a read of the rows found, so a record costs
//! the same on a store of ten runs or of a million (where several events match, the latest
//! by `created_at`, then `event_id`, as the views decide):
//!
//! ```text
//! translate_validate ── (competition, language) ──► generate
//! generate ── (competition, format, code_blake3) ──► execute ── upstream[1] ──► grade
//! generate.unit_key ◄── journal.search                 (an aide search's attempts)
//! analyze ── result_blake3 ──► the table (a Parquet object)
//! every event ── upstream ──► the events it consumed; ◄── the events that consumed it
//! ```
//!
//! A *run* ([`Run`]) is a generate event with its prompt, response and code (objects,
//! rendered as text), the static findings on the code, the execution and the grade of that
//! code, the translation check of its (competition, language) and the English task beside
//! it. The record of an execute or grade event carries the run of the generate event it
//! came from.
//!
//! Invariant: reading only. Nothing here commits an event or puts an object (opening the
//! records writes the row index files of segments none covers yet: a derived cache); every
//! segment a row is read from is checked as every read checks it, and every object is
//! verified against its hash when read ([`crate::store::Objects::get`]). The logs are listed
//! once, when the records are opened: later commits are not seen. The SQL session (the
//! logs as tables, the views) is opened on first use, for the run list; `ml2b verify`
//! checks the whole store. A benchmark root
//! is optional: without it the English task and the task texts of a check are not shown
//! (the store holds their hashes, the root their text).

mod list;
mod load;
mod logs;
mod raw;
mod resolve;
mod text;

use datafusion::prelude::SessionContext;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::OnceCell;

use crate::competition::Benchmark;
use crate::events::{Analysis, Attempt, Execution, Generation, Grade, TranslationCheck};
use crate::log::LogError;
use crate::query::QueryError;
use crate::store::{Hash, ObjectError, Store};

/// A store opened for reading records: each log's row index, kept for every lookup, and
/// the SQL session once it is first asked for.
pub struct Records {
    logs: logs::Logs,
    ctx: OnceCell<SessionContext>,
    store: Store,
    bench: Option<Benchmark>,
}

impl Records {
    /// Opens `store`: lists every log (the pipeline's and any other stage folder's) and
    /// opens its row index.
    pub async fn open(store: Store, bench: Option<Benchmark>) -> Result<Self, RecordError> {
        let mut names = crate::log::stages(&store)?;
        for log in crate::events::LOGS {
            if !names.iter().any(|l| l == log.stage) {
                names.push(log.stage.to_string());
            }
        }
        let opened = store.clone();
        let logs = tokio::task::spawn_blocking(move || logs::Logs::open(&opened, &names))
            .await
            .map_err(|e| RecordError::Malformed {
                what: "the row index".into(),
                reason: e.to_string(),
            })??;
        Ok(Self {
            logs,
            ctx: OnceCell::new(),
            store,
            bench,
        })
    }

    /// The session: every log a table, and with a benchmark its tables and views (opened
    /// on first use, checking every segment as every query does).
    pub async fn session(&self) -> Result<&SessionContext, RecordError> {
        let session = crate::query::Session {
            bench: self.bench.as_ref(),
        };
        Ok(self.ctx.get_or_try_init(|| session.open(&self.store)).await?)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn bench(&self) -> Option<&Benchmark> {
        self.bench.as_ref()
    }

    /// The one event `wanted` (an id, unit key or hex prefix of one) names.
    pub async fn resolve(&self, wanted: &str) -> Result<Found, RecordError> {
        resolve::resolve(&self.logs, wanted)
    }

    /// The record of a resolved event.
    pub async fn load(&self, found: &Found) -> Result<Record, RecordError> {
        load::load(&self.logs, &self.store, self.bench.as_ref(), found)
    }

    /// The record `wanted` names.
    pub async fn get(&self, wanted: &str) -> Result<Record, RecordError> {
        self.load(&self.resolve(wanted).await?).await
    }

    /// The latest runs matching `filters`; needs a benchmark (the `runs` view).
    pub async fn latest_runs(&self, filters: &Filters) -> Result<Vec<RunRow>, RecordError> {
        if self.bench.is_none() {
            return Err(RecordError::NoBenchmark);
        }
        list::latest_runs(self.session().await?, filters).await
    }

    /// The bytes of one artefact of `record`.
    pub fn artefact(&self, record: &Record, kind: Artefact) -> Result<Vec<u8>, RecordError> {
        raw::artefact(&self.store, record, kind)
    }
}

pub use list::{Filters, RunRow};
pub use resolve::{Candidate, Found, is_id_prefix};

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

/// Why a record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("`{0}` is not an event id, unit key or hex prefix of one")]
    NotHex(String),
    #[error("no event of any log has an id or unit key starting with `{0}`")]
    NotFound(String),
    #[error("{}", ambiguous(.prefix, .count, .candidates))]
    Ambiguous {
        prefix: String,
        count: usize,
        candidates: Vec<Candidate>,
    },
    #[error("listing runs needs the benchmark's manifests (see --root): the runs view joins them")]
    NoBenchmark,
    #[error("this {log} event has no {kind}")]
    NoArtefact { log: String, kind: String },
    #[error("cannot read the logs")]
    Query(#[from] QueryError),
    #[error("cannot read the logs")]
    Log(#[from] LogError),
    #[error("cannot read an object the event names")]
    Object(#[from] ObjectError),
    #[error("{what} is malformed: {reason}")]
    Malformed { what: String, reason: String },
}

/// The ambiguity, with the candidates one per line.
fn ambiguous(prefix: &str, count: &usize, candidates: &[Candidate]) -> String {
    let shown = if *count > candidates.len() {
        format!(" (the {} latest shown)", candidates.len())
    } else {
        String::new()
    };
    let text = format!("`{prefix}` is ambiguous: {count} events match{shown}");
    if candidates.is_empty() {
        return text;
    }
    format!("{text}\n{}", resolve::candidates(candidates))
}

impl crate::error::IsInputError for RecordError {
    fn is_input_error(&self) -> bool {
        matches!(
            self,
            Self::NotHex(_)
                | Self::NotFound(_)
                | Self::Ambiguous { .. }
                | Self::NoArtefact { .. }
                | Self::NoBenchmark
        )
    }
}
