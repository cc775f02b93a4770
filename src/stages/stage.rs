//! What every stage is and shares: the [`Stage`] trait, a [`Planned`] unit, the stages'
//! error ([`StageError`]), the version after a segment (`--since`), the re-derivation of a
//! pure stage's events and the hash of an input file. A leaf of `stages/`: each stage and
//! the runner build on it, and it calls none of them.

use std::future::Future;

use crate::log::{EventBody, LogError};
use crate::store::{Hash, Store};

/// One unit a stage plans to run.
#[derive(Clone, Debug)]
pub struct Planned<U> {
    /// The unit key (see [`crate::log::unit_key`]).
    pub key: Hash,
    /// Upstream event ids the unit consumes.
    pub upstream: Vec<Hash>,
    /// A short human label for progress and errors.
    pub label: String,
    /// What the stage needs to run it.
    pub unit: U,
}

/// Why a stage could not plan or run a unit. A unit's error becomes text only where the
/// run summary reports it (`crate::error::chain`: the message and its causes).
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    #[error(transparent)]
    Log(#[from] LogError),
    /// The unit ran and failed; `message` is what its failure is recorded as.
    #[error("unit {label} failed: {message}")]
    Unit { label: String, message: String },
    /// The benchmark root lacks a competition that the selection or a log names.
    #[error("{0}")]
    Benchmark(String),
    #[error(transparent)]
    Manifest(#[from] crate::manifest::ManifestError),
    /// A competition's data file is not what its manifest records.
    #[error(transparent)]
    Data(#[from] crate::competition::integrity::DataError),
    /// An input file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A value in a log or a cache is not what its schema promises.
    #[error("{0}")]
    Malformed(String),
    /// A recorded value (a cached response, a recorded run) does not decode.
    #[error("{what} does not decode")]
    Decode {
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// `--since` names no segment of the upstream log.
    #[error("--since {since}: no {stage} segment has this hash (see `ml2b log --stage {stage}`)")]
    Since { since: Hash, stage: String },
    /// A step outside the stage failed: rendering a prompt or a template, writing a
    /// validation split, grading, querying.
    #[error("{what}")]
    Failed {
        what: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A log that analyze reads moved while it planned.
    #[error("a log changed while analyze was planning; run it again")]
    Moved,
    #[error("a unit task panicked")]
    Panicked(#[source] tokio::task::JoinError),
    /// The settings ask for something the stage cannot do.
    #[error("{0}")]
    Unsupported(String),
    /// A unit is not what its stage planned (a bug, never bad input).
    #[error("{0}")]
    Invariant(&'static str),
}

impl crate::error::IsInputError for StageError {
    fn is_input_error(&self) -> bool {
        match self {
            Self::Manifest(e) => crate::error::IsInputError::is_input_error(e),
            _ => false,
        }
    }
}
crate::error::input_error!(StageError);

impl StageError {
    /// A step of `what` that failed with `source`.
    pub(crate) fn failed(
        what: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self::Failed {
            what: what.into(),
            source: source.into(),
        }
    }
}

/// The version right after `log`'s segment named `since` (for `--since HASH`): a stage
/// given it plans only from the upstream events committed after that segment.
pub fn version_after(log: &crate::log::StageLog, since: &Hash) -> Result<u64, StageError> {
    for r in log.list()? {
        if log.check(&r)? == *since {
            return Ok(r.version + 1);
        }
    }
    Err(StageError::Since {
        since: *since,
        stage: log.stage().to_string(),
    })
}

/// Re-runs every planned unit of `stage` that the log holds an event for and compares ids:
/// returns how many were re-derived and the ids (with the new id) that came out different.
/// Only meaningful for pure stages (translate-validate, grade, analyze).
pub async fn rederive<S: Stage>(
    stage: &S,
    store: &Store,
) -> Result<(usize, Vec<(Hash, String)>), StageError> {
    let committed: std::collections::HashMap<Hash, crate::log::Event<S::Body>> =
        crate::log::StageLog::new(store, S::Body::STAGE)?
            .read_events::<S::Body>(0)?
            .into_iter()
            .map(|e| (e.unit_key, e))
            .collect();
    let mut found = 0;
    let mut differ = Vec::new();
    for p in stage.plan(store)? {
        let Some(e) = committed.get(&p.key) else { continue };
        found += 1;
        let label = p.label.clone();
        let body = stage.run(p.unit).await?;
        let id = crate::log::Event::compute_id(&p.key, &p.upstream, &body)?;
        if id != e.id {
            differ.push((e.id, format!("{label} re-derived as {id}")));
        }
    }
    Ok((found, differ))
}

/// The blake3 (hex) of an input file, as unit keys record it.
pub(crate) fn file_blake3(path: &std::path::Path) -> Result<Hash, StageError> {
    crate::competition::integrity::file_hash(path).map_err(|source| StageError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// A pipeline stage.
pub trait Stage: Send + Sync + 'static {
    /// The event body this stage appends.
    type Body: EventBody;
    /// What one unit carries from planning to running.
    type Unit: Send + 'static;

    /// The units this invocation should produce, committed or not.
    fn plan(&self, store: &Store) -> Result<Vec<Planned<Self::Unit>>, StageError>;

    /// Runs one unit. An `Err` leaves the unit uncommitted (a re-run retries it).
    fn run(&self, unit: Self::Unit) -> impl Future<Output = Result<Self::Body, StageError>> + Send;

    /// Whether a unit that fails is recorded in the `fault` log: the stages whose units
    /// make up a row of `runs` (generate, execute, grade), so that a table can say why a
    /// planned sample is missing.
    const RECORDS_FAULTS: bool = false;

    /// Called with the units this invocation will run (after its shard is taken), before
    /// the first one runs: generate records them in the `planned` log.
    fn record_plan(&self, _store: &Store, _planned: &[Planned<Self::Unit>]) -> Result<(), StageError> {
        Ok(())
    }

    /// Hash of the configuration, recorded in every segment's metadata.
    fn config_hash(&self) -> Option<Hash> {
        None
    }
}
