//! Runs a [`Stage`]: plan, skip what is committed, run the rest, commit in batches.
//!
//! Invariants: a unit's event is committed at most once per log (the commit
//! protocol drops units a concurrent run committed first); every finished unit
//! is committed before `run_stage` returns; a unit that failed is not committed,
//! so the next run retries it, and for the stages whose units make up a run
//! ([`Stage::RECORDS_FAULTS`]) its failure is committed to the `fault` log with the
//! batch (best effort: a store that refuses it loses the record, not the run); a killed run loses only units still in flight or
//! waiting for the next batch; a stopped run ([`RunOptions::stop`]) commits every unit that
//! finished and abandons those in flight. Before any unit runs, the stage records what it
//! planned ([`Stage::record_plan`]).

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use super::{Planned, Stage, StageError};
use crate::events::Fault;
use crate::log::{Committed, Event, EventBody, Provenance, StageLog, View, unit_key};
use crate::progress::Progress;
use crate::store::{Hash, Store};

/// How to run a stage; none of it changes results.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Units in flight at once.
    pub concurrency: usize,
    /// Commit when this many events are waiting…
    pub batch_events: usize,
    /// …or when the oldest has waited this long.
    pub batch_interval: Duration,
    /// Only the planned units of this shard (a cluster worker's share of a plan).
    pub shard: Option<Shard>,
    /// Once set (a worker's SIGTERM), no unit starts, the units in flight are abandoned
    /// (never committed), what finished is committed, and the run returns `interrupted`.
    pub stop: Option<&'static AtomicBool>,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            concurrency: 2,
            batch_events: 256,
            batch_interval: Duration::from_secs(5),
            shard: None,
            stop: None,
        }
    }
}

/// Shard `index` of `count`: the units whose key's first 8 bytes, read as a little-endian
/// integer, are `index` modulo `count`. A pure function of the unit key, so a task run
/// again (requeued, resumed) runs the same units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Whether the unit `key` belongs to this shard.
    pub fn holds(&self, key: &crate::store::Hash) -> bool {
        shard_of(key, self.count) == self.index
    }
}

/// The shard (of `count`) that the unit `key` belongs to.
pub fn shard_of(key: &crate::store::Hash, count: u32) -> u32 {
    let first: [u8; 8] = key.0[..8].try_into().expect("a hash has 32 bytes");
    (u64::from_le_bytes(first) % u64::from(count.max(1))) as u32
}

/// What one run of a stage did.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct RunSummary {
    pub stage: String,
    pub planned: u64,
    pub skipped: u64,
    pub ran: u64,
    pub commits: Vec<Committed>,
    /// Units that failed (label, error); they stay uncommitted.
    pub failed: Vec<(String, String)>,
    /// The run was stopped (`RunOptions::stop`) before every unit ran.
    #[serde(default)]
    pub interrupted: bool,
    /// generate: what the model's request budget did (its limits, how the in-flight limit
    /// moved under 429s, requests and time waited); absent for a model asked nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<crate::providers::budget::Report>,
    /// What the run spent on its own work rather than in units: planning, committing.
    #[serde(default)]
    pub overhead: Overhead,
}

/// Where a run's own time went, in milliseconds: planning (the log's view, the plan and
/// its record), committing batches, and the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Overhead {
    pub plan_ms: u64,
    pub commit_ms: u64,
    pub wall_ms: u64,
}

impl RunSummary {
    /// Events this run appended.
    pub fn appended(&self) -> u64 {
        self.commits.iter().map(|c| c.events).sum()
    }
}

/// Runs `stage` over `store`.
pub async fn run_stage<S: Stage>(
    store: &Store,
    stage: Arc<S>,
    options: &RunOptions,
    progress: &dyn Progress,
) -> Result<RunSummary, StageError> {
    let started = Instant::now();
    let log = StageLog::new(store, S::Body::STAGE)?;
    let view = log.view()?;
    let mut planned = dedupe(stage.plan(store)?);
    if let Some(shard) = options.shard {
        planned.retain(|p| shard.holds(&p.key));
    }
    let mut summary = RunSummary {
        stage: S::Body::STAGE.to_string(),
        planned: planned.len() as u64,
        ..Default::default()
    };
    stage.record_plan(store, &planned)?;
    summary.overhead.plan_ms = millis(started.elapsed());
    let todo: Vec<_> = planned.into_iter().filter(|p| !view.contains(&p.key)).collect();
    summary.skipped = summary.planned - todo.len() as u64;
    progress.begin(S::Body::STAGE, todo.len() as u64);
    let mut batcher = Batcher {
        log,
        view,
        config: stage.config_hash(),
        pending: Vec::new(),
        faults: S::RECORDS_FAULTS.then(|| Faults::new(store)),
        since: None,
    };
    execute(stage, todo, options, progress, &mut batcher, &mut summary).await?;
    flush(&mut batcher, progress, &mut summary)?;
    progress.end();
    summary.overhead.wall_ms = millis(started.elapsed());
    Ok(summary)
}

/// Commits what waits, timing it.
fn flush<B: EventBody>(
    batcher: &mut Batcher<B>,
    progress: &dyn Progress,
    summary: &mut RunSummary,
) -> Result<(), StageError> {
    let started = Instant::now();
    let committed = batcher.flush()?;
    summary.overhead.commit_ms += millis(started.elapsed());
    if let Some(c) = committed {
        progress.committed(&summary.stage, &c);
        summary.commits.push(c);
    }
    Ok(())
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn dedupe<U>(planned: Vec<Planned<U>>) -> Vec<Planned<U>> {
    let mut seen = HashSet::new();
    planned.into_iter().filter(|p| seen.insert(p.key)).collect()
}

/// A unit that ran: its label, key and upstream, and its event or why it failed.
struct Finished<B> {
    label: String,
    key: Hash,
    upstream: Vec<Hash>,
    result: Result<Event<B>, StageError>,
}

async fn execute<S: Stage>(
    stage: Arc<S>,
    todo: Vec<Planned<S::Unit>>,
    options: &RunOptions,
    progress: &dyn Progress,
    batcher: &mut Batcher<S::Body>,
    summary: &mut RunSummary,
) -> Result<(), StageError> {
    let mut queue = todo.into_iter();
    let mut running: JoinSet<Finished<S::Body>> = JoinSet::new();
    loop {
        while running.len() < options.concurrency.max(1) && !stopped(options) {
            let Some(p) = queue.next() else { break };
            if batcher.view.contains(&p.key) {
                // A concurrent run committed it since we planned.
                summary.skipped += 1;
                progress.unit_finished(&p.label, true);
                continue;
            }
            progress.unit_started(&p.label);
            running.spawn(run_one(stage.clone(), p));
        }
        if stopped(options) {
            // The units in flight are abandoned: their sandboxes die with this process.
            summary.interrupted = true;
            running.abort_all();
            return Ok(());
        }
        let Some(done) = next_or_deadline(&mut running, batcher, options).await else {
            if running.is_empty() {
                return Ok(());
            }
            if !stopped(options) {
                commit_due(batcher, options, progress, summary, true)?;
            }
            continue;
        };
        let done = done.map_err(StageError::Panicked)?;
        summary.ran += 1;
        if let Ok(event) = &done.result {
            progress.tokens(event.body.output_tokens());
        }
        progress.unit_finished(&done.label, done.result.is_ok());
        match done.result {
            Ok(event) => batcher.push(event),
            Err(e) => {
                // The fault's message leaves out the unit (its label is beside it), so that
                // the same fault of many units reads as one.
                let cause = match &e {
                    StageError::Unit { message, .. } => message.clone(),
                    e => crate::error::chain(e),
                };
                batcher.fault(S::Body::STAGE, &done.label, done.key, done.upstream, &cause)?;
                summary.failed.push((done.label, crate::error::chain(&e)));
            }
        }
        commit_due(batcher, options, progress, summary, false)?;
    }
}

/// Waits for the next finished unit, or returns `None` when the batch is due or the run is
/// stopped.
async fn next_or_deadline<B: EventBody>(
    running: &mut JoinSet<Finished<B>>,
    batcher: &Batcher<B>,
    options: &RunOptions,
) -> Option<Result<Finished<B>, tokio::task::JoinError>> {
    let deadline = batcher.since.map(|t| t + options.batch_interval);
    let batch_due = async {
        match deadline {
            Some(d) => tokio::time::sleep_until(d.into()).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        done = running.join_next() => done,
        () = batch_due => None,
        () = stop_requested(options) => None,
    }
}

/// Whether the run was asked to stop.
fn stopped(options: &RunOptions) -> bool {
    options.stop.is_some_and(|s| s.load(Ordering::SeqCst))
}

/// Resolves once the run is asked to stop (never without a stop flag).
async fn stop_requested(options: &RunOptions) {
    const POLL: Duration = Duration::from_millis(100);
    if options.stop.is_none() {
        return std::future::pending().await;
    }
    while !stopped(options) {
        tokio::time::sleep(POLL).await;
    }
}

fn commit_due<B: EventBody>(
    batcher: &mut Batcher<B>,
    options: &RunOptions,
    progress: &dyn Progress,
    summary: &mut RunSummary,
    timer_fired: bool,
) -> Result<(), StageError> {
    if !(timer_fired || batcher.pending.len() >= options.batch_events.max(1)) {
        return Ok(());
    }
    flush(batcher, progress, summary)
}

async fn run_one<S: Stage>(stage: Arc<S>, p: Planned<S::Unit>) -> Finished<S::Body> {
    let started = Instant::now();
    let body = stage.run(p.unit).await;
    let ms = started.elapsed().as_millis() as u64;
    let upstream = p.upstream.clone();
    let result = body.and_then(|b| Ok(Event::new(p.key, p.upstream, b, Provenance::now(ms))?));
    Finished {
        label: p.label,
        key: p.key,
        upstream,
        result,
    }
}

/// Events waiting to be committed.
struct Batcher<B> {
    log: StageLog,
    view: View,
    config: Option<crate::store::Hash>,
    pending: Vec<Event<B>>,
    /// The `fault` log, for a stage that records its failed units.
    faults: Option<Faults>,
    since: Option<Instant>,
}

impl<B: EventBody> Batcher<B> {
    fn push(&mut self, e: Event<B>) {
        self.since.get_or_insert_with(Instant::now);
        self.pending.push(e);
    }

    /// Records that the unit `key` of `stage` failed with `message` (committed with the
    /// next batch), when the stage records its faults.
    fn fault(
        &mut self,
        stage: &str,
        label: &str,
        key: Hash,
        upstream: Vec<Hash>,
        message: &str,
    ) -> Result<(), StageError> {
        let Some(faults) = &mut self.faults else {
            return Ok(());
        };
        let body = Fault {
            stage: stage.to_string(),
            unit: key,
            label: label.to_string(),
            message: message.to_string(),
        };
        let fault_key = unit_key(Fault::STAGE, Fault::SCHEMA_VERSION, &[], &(stage, key, message))?;
        faults
            .pending
            .push(Event::new(fault_key, upstream, body, Provenance::now(0))?);
        self.since.get_or_insert_with(Instant::now);
        Ok(())
    }

    fn flush(&mut self) -> Result<Option<Committed>, StageError> {
        self.since = None;
        if let Some(faults) = &mut self.faults {
            faults.flush()?;
        }
        if self.pending.is_empty() {
            return Ok(None);
        }
        let events = std::mem::take(&mut self.pending);
        let committed = self.log.commit(&mut self.view, events, self.config)?;
        if let Some(c) = &committed {
            tracing::info!(
                "{}: committed segment {} ({} events, {})",
                self.log.stage(),
                c.version,
                c.events,
                c.hash.short()
            );
        }
        Ok(committed)
    }
}

/// The faults waiting to be committed to the `fault` log, opened at the first of them.
///
/// Recording a fault is best effort: a store that could not take a unit's event (read-only,
/// full) may not take its fault either, and the unit's failure is in the run summary
/// anyway, so a fault that cannot be committed is logged and dropped, never the stage's
/// error.
struct Faults {
    store: Store,
    log: Option<(StageLog, View)>,
    pending: Vec<Event<Fault>>,
}

impl Faults {
    fn new(store: &Store) -> Self {
        Self {
            store: store.clone(),
            log: None,
            pending: Vec::new(),
        }
    }

    fn flush(&mut self) -> Result<(), StageError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let events = std::mem::take(&mut self.pending);
        let n = events.len();
        if let Err(e) = self.commit(events) {
            tracing::warn!(
                "{n} fault(s) could not be recorded in the fault log: {}",
                crate::error::chain(&e)
            );
        }
        Ok(())
    }

    fn commit(&mut self, events: Vec<Event<Fault>>) -> Result<(), crate::log::LogError> {
        if self.log.is_none() {
            let log = StageLog::new(&self.store, Fault::STAGE)?;
            let view = log.view()?;
            self.log = Some((log, view));
        }
        let (log, view) = self.log.as_mut().expect("opened above");
        log.commit(view, events, None)?;
        Ok(())
    }
}
