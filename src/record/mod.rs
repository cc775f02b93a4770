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

mod error;
mod list;
mod load;
mod logs;
mod raw;
mod resolve;
mod text;
mod types;

use datafusion::prelude::SessionContext;
use tokio::sync::OnceCell;

use crate::competition::Benchmark;
use crate::store::Store;

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

pub use error::{Candidate, RecordError};
pub use list::{Filters, RunRow};
pub use resolve::{Found, is_id_prefix};
pub use types::{
    Artefact, AttemptRef, Detail, EventRow, ExternalView, Finding, Ided, Link, Prompt, Record, Run, Step,
    Table, Texts,
};
