//! Full verification of a store: every segment, every chain, every object, and everything
//! an event names.
//!
//! Unlike ordinary reads, which stop at the first damaged segment, verification
//! visits everything and collects one [`Problem`] per damaged or missing file,
//! so a user learns the whole extent of the damage at once. Beyond what each log shows by
//! itself, the events of every log are checked against what they name ([`references`]):
//! upstream events, objects and the heads of other logs, which reveal a log that lost its
//! last segments and a deleted object. A problem's message keeps its cause (`Permission
//! denied`, …): a file that cannot be read is not reported as damaged without saying why.
//!
//! Verification also checks each log's row index ([`rows`]) against the entries its
//! segments give, removes the files that fail and leaves one file covering the whole log: a
//! damaged index is a cache to rebuild, reported apart from the problems.
//!
//! [`references`]: super::references
//! [`rows`]: super::rows

use std::collections::HashSet;

use arrow::array::RecordBatch;

pub use super::problem::Problem;
use super::references::References;
use super::rows::{self, Entry};
use super::segment::segment_name;
use super::stage_log::{SegmentRef, StageLog};
use super::{LogError, event, stages};
use crate::progress::Progress;
use crate::store::{Hash, Store};

/// One stage log's summary.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StageSummary {
    pub stage: String,
    pub segments: u64,
    pub events: u64,
    pub head: Option<Hash>,
}

/// The outcome of [`verify_store`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    pub stages: Vec<StageSummary>,
    pub objects: u64,
    pub problems: Vec<Problem>,
    /// Each sound log's row index as checked (and rebuilt).
    pub index: Vec<(String, rows::Checked)>,
}

/// The lookup columns of a stage's events ([`super::EventBody::LOOKUP`]), by stage name.
pub type Lookups = fn(&str) -> &'static [&'static str];

impl Report {
    /// Whether nothing was found wrong.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Verifies every stage log and every object of `store`.
pub fn verify_store(store: &Store, lookups: Lookups, progress: &dyn Progress) -> Result<Report, LogError> {
    let mut problems = Vec::new();
    let mut summaries = Vec::new();
    let mut references = References::default();
    let mut index = Vec::new();
    for stage in stages(store)? {
        let log = StageLog::new(store, &stage)?;
        let before = problems.len();
        let (summary, entries) = verify_log(&log, lookups(&stage), &mut references, &mut problems, progress)?;
        if problems.len() == before {
            match rows::check(&log.rows_site(), &entries) {
                Ok(checked) => index.push((stage.clone(), checked)),
                Err(e) => problems.push(Problem::of(log.dir().to_path_buf(), &e)),
            }
        }
        summaries.push(summary);
    }
    let objects = verify_objects(store, &mut problems, progress);
    progress.begin("verify references", 0);
    problems.extend(references.check(store));
    progress.end();
    Ok(Report {
        stages: summaries,
        objects,
        problems,
        index,
    })
}

/// Verifies one log; returns its summary and each segment's row index entries.
fn verify_log(
    log: &StageLog,
    lookup: &'static [&'static str],
    references: &mut References,
    problems: &mut Vec<Problem>,
    progress: &dyn Progress,
) -> Result<(StageSummary, Vec<Vec<Entry>>), LogError> {
    let refs = log.list_raw()?;
    progress.begin(&format!("verify {}", log.stage()), refs.len() as u64);
    report_gaps(log, &refs, problems);
    let mut walk = ChainWalk {
        lookup,
        ..ChainWalk::default()
    };
    for r in &refs {
        walk.visit(log, r, references, problems);
        progress.advance(1);
    }
    progress.end();
    let summary = StageSummary {
        stage: log.stage().to_string(),
        segments: refs.len() as u64,
        events: walk.events,
        head: walk.prev,
    };
    Ok((summary, walk.entries))
}

fn report_gaps(log: &StageLog, refs: &[SegmentRef], problems: &mut Vec<Problem>) {
    let present: HashSet<u64> = refs.iter().map(|r| r.version).collect();
    let last = refs.last().map_or(0, |r| r.version);
    for v in (0..last).filter(|v| !present.contains(v)) {
        problems.push(Problem {
            path: log.dir().join(segment_name(v)),
            message: "missing: the log has a gap here".to_string(),
        });
    }
}

/// Walks one log in order, checking each segment and its link to the previous.
#[derive(Default)]
struct ChainWalk {
    prev: Option<Hash>,
    prev_version: Option<u64>,
    events: u64,
    units: HashSet<Hash>,
    lookup: &'static [&'static str],
    /// Each segment's row index entries.
    entries: Vec<Vec<Entry>>,
}

impl ChainWalk {
    fn visit(
        &mut self,
        log: &StageLog,
        r: &SegmentRef,
        references: &mut References,
        problems: &mut Vec<Problem>,
    ) {
        match self.check(log, r) {
            Ok((hash, batches)) => {
                references.add(log.stage(), &r.path, hash, &batches);
                self.prev = Some(hash);
            }
            Err(e) => {
                problems.push(Problem::of(r.path.clone(), &e));
                self.prev = None;
            }
        }
        self.prev_version = Some(r.version);
    }

    /// Checks one segment; returns its hash and rows.
    fn check(&mut self, log: &StageLog, r: &SegmentRef) -> Result<(Hash, Vec<RecordBatch>), LogError> {
        let (seg, meta) = log.read_with_meta(r)?;
        let follows = self.prev_version.map_or(r.version == 0, |p| p + 1 == r.version);
        if follows && (self.prev.is_some() || r.version == 0) && meta.parent != self.prev {
            return Err(LogError::BrokenChain {
                path: r.path.clone(),
                expected: self.prev,
                found: meta.parent,
            });
        }
        let batches = seg.batches(None).map_err(|m| LogError::damaged(&r.path, m))?;
        let rows: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
        if rows != meta.events {
            return Err(LogError::damaged(
                &r.path,
                format!("{rows} rows but its metadata says {}", meta.events),
            ));
        }
        for b in &batches {
            event::hashes(b, "event_id").map_err(|e| LogError::damaged(&r.path, e.to_string()))?;
            for key in event::hashes(b, "unit_key").map_err(|e| LogError::damaged(&r.path, e.to_string()))? {
                if !self.units.insert(key) {
                    return Err(LogError::damaged(
                        &r.path,
                        format!("unit {} was already committed earlier in the log", key.short()),
                    ));
                }
            }
        }
        let entries = rows::of_batches(&batches, r.version, self.lookup)
            .map_err(|e| LogError::damaged(&r.path, e.to_string()))?;
        self.entries.push(entries);
        self.events += rows;
        Ok((seg.hash, batches))
    }
}

fn verify_objects(store: &Store, problems: &mut Vec<Problem>, progress: &dyn Progress) -> u64 {
    let listed: Vec<_> = store.objects().list().collect();
    progress.begin("verify objects", listed.len() as u64);
    for item in &listed {
        match item {
            Err(stray) => problems.push(Problem::of(stray.path().to_path_buf(), stray)),
            Ok((hash, path)) => {
                if let Err(e) = store.objects().verify(hash) {
                    problems.push(Problem::of(path.clone(), &e));
                }
            }
        }
        progress.advance(1);
    }
    progress.end();
    listed.len() as u64
}
