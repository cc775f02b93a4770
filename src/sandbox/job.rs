//! What goes into a run and what comes out: a [`Job`] (the code, its [`Format`], the
//! competition's public files, the harness and the [`Limits`]), a [`Run`] (its
//! [`Outcome`], predictions, result record and output tails), and the [`Backend`] trait that
//! turns one into the other. A leaf of the sandbox modules: the backends and the shared run
//! steps (`steps`) build on it.
//!
//! On disk: a run leaves `result.json` (the harness's record) and, when it wrote one,
//! [`PREDICTIONS`] in its output folder; [`Outcome`] names are the harness's `outcome` field
//! and what events record, in snake case.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::error::SandboxError;
use super::gpu::GpuSet;
use super::model_cache::ModelCache;
use super::network::ProxyRequest;
use super::proxy::Proxy;
use crate::competition::spec::Spec;
use crate::events::{Format, Outcome};

/// Resource limits of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Limits {
    pub wall: Duration,
    /// Address-space limit of every process of the run.
    pub memory_bytes: u64,
    /// Processes (and threads) the run may have at once.
    pub processes: u64,
    /// Largest file the run may write, and the most it may leave in its output folder.
    pub output_bytes: u64,
    /// Files and folders the run may leave in its output folder. Serialized (as execute's
    /// unit keys hash the limits) only when it is not [`OUTPUT_FILES`], so that the keys of
    /// runs made before this limit existed, all under the default, stay what they were.
    #[serde(skip_serializing_if = "is_default_output_files")]
    pub output_files: u64,
}

/// The default of [`Limits::output_files`].
pub(super) const OUTPUT_FILES: u64 = 10_000;

/// The size of a run's `/dev/shm` (POSIX shared memory, `multiprocessing`'s semaphores)
/// under both backends: Docker's default. Its pages count against the run's memory limit
/// wherever a control group bounds the run (always under docker; locally as root or with a
/// delegated group); elsewhere this size is what bounds it.
pub(super) const SHM_BYTES: u64 = 64 << 20;

fn is_default_output_files(n: &u64) -> bool {
    *n == OUTPUT_FILES
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            wall: Duration::from_secs(600),
            memory_bytes: 8 << 30,
            processes: 256,
            output_bytes: 256 << 20,
            output_files: OUTPUT_FILES,
        }
    }
}

/// One run to make.
#[derive(Clone, Debug)]
pub struct Job {
    /// The Python of the managed environment (`scripts/python-env`).
    pub python: PathBuf,
    /// `assets/execute/harness.py`.
    pub harness: PathBuf,
    /// The submission's code.
    pub code: PathBuf,
    pub format: Format,
    /// `data/<id>/public/`: `train.csv` and `test.csv` are read from it.
    pub public_dir: PathBuf,
    pub spec: Spec,
    pub limits: Limits,
    /// The proxy of a `--network proxy` run (none: no network but a loopback).
    pub proxy: Option<Arc<Proxy>>,
    /// Pretrained weights the run sees read-only at `/cache` (`--model-cache`).
    pub model_cache: Option<Arc<ModelCache>>,
    /// The GPUs the run gets (`--gpus`).
    pub gpus: Option<Arc<GpuSet>>,
}

/// What a run produced.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    pub outcome: Outcome,
    /// The predictions file, when the run wrote one (inside `out_dir`).
    pub predictions: Option<PathBuf>,
    /// The harness's result record (`null` when it wrote none).
    pub result: serde_json::Value,
    pub wall_seconds: f64,
    pub stdout_tail: String,
    pub stderr_tail: String,
    /// Human-readable cause for the backend's own outcomes.
    pub detail: Option<String>,
    /// What the proxy saw of a `--network proxy` run, in order (none without a proxy).
    pub requests: Option<Vec<ProxyRequest>>,
}

/// A way of running jobs in isolation.
pub trait Backend: Send + Sync {
    /// The backend's name, as recorded in events (`local`, `docker`).
    fn name(&self) -> &'static str;
    /// The runtime image the backend runs (recorded in every execute event), if any.
    fn image(&self) -> Option<String> {
        None
    }
    /// Runs `job`; copies its `result.json` (and `predictions.parquet` when the run is ok) to
    /// `out_dir`, which must exist.
    fn run(&self, job: &Job, out_dir: &Path) -> Result<Run, SandboxError>;
}

/// The predictions file a run writes in its output folder (Parquet, written by the
/// harness with pyarrow).
pub const PREDICTIONS: &str = "predictions.parquet";

#[cfg(test)]
mod tests {
    use super::*;

    /// Execute's unit keys hash the limits: the default limits serialize as they did before
    /// `output_files` existed, so a store's execute units keep their keys.
    #[test]
    fn the_default_limits_keep_their_serialization() {
        let json = serde_json::to_string(&Limits::default()).unwrap();
        assert_eq!(
            json,
            r#"{"wall":{"secs":600,"nanos":0},"memory_bytes":8589934592,"processes":256,"output_bytes":268435456}"#
        );
        let fewer = Limits {
            output_files: 10,
            ..Limits::default()
        };
        assert!(
            serde_json::to_string(&fewer)
                .unwrap()
                .ends_with(r#","output_files":10}"#)
        );
    }
}
