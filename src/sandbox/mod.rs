//! Running untrusted solutions: one [`Job`] (a submission, its competition's public files,
//! the harness, limits) in, one [`Execution`] (outcome, predictions, result record, output
//! tails) out, behind the [`Backend`] trait.
//!
//! Invariants every backend keeps: the solution sees only the harness, its own code, the
//! competition's public files (read-only) and one writable output folder; no network; no
//! environment variable of the caller; bounded wall time, memory, processes and output;
//! nothing of the run (process or file outside the output folder) survives it. The outcome
//! taxonomy is [`Outcome`]: the harness decides the ones about the code, the backend adds
//! `timeout`, `constraint_violation` and `sandbox_error`.

pub mod assets;
pub mod docker;
pub mod image;
pub mod local;
pub mod pyenv;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::competition::contract::Spec;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    SyntaxError,
    ImportError,
    MissingFunction,
    SignatureMismatch,
    RuntimeError,
    Timeout,
    OutOfMemory,
    BadPredictions,
    ConstraintViolation,
    SandboxError,
}

impl std::fmt::Display for Outcome {
    /// The name events and the harness use (`ok`, `runtime_error`, …).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::manifest::serde_name(self))
    }
}

impl Outcome {
    /// Parses the harness's `outcome` field.
    pub fn from_harness(name: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
    }
}

/// Which submission format the code follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// MODULAR_PREDICT: `train(data)`, `prepare_val(train_output, X_val)`,
    /// `predict(train_output, prepare_val_output)`.
    Modular,
    /// MONO_PREDICT: `train_and_predict(data, X_val)`.
    Mono,
}

/// A format name that is neither `modular` nor `mono`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown submission format {0:?}: expected \"modular\" or \"mono\"")]
pub struct ParseFormatError(pub String);

impl std::str::FromStr for Format {
    type Err = ParseFormatError;

    /// `modular`, `mono`, or the original release's `MODULAR_PREDICT`, `MONO_PREDICT`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "modular" | "modular_predict" => Ok(Format::Modular),
            "mono" | "mono_predict" => Ok(Format::Mono),
            _ => Err(ParseFormatError(s.to_string())),
        }
    }
}

impl Format {
    pub fn harness_mode(self) -> &'static str {
        match self {
            Self::Modular => "modular",
            Self::Mono => "mono",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.harness_mode())
    }
}

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
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            wall: Duration::from_secs(600),
            memory_bytes: 8 << 30,
            processes: 256,
            output_bytes: 256 << 20,
        }
    }
}

/// One run to make.
#[derive(Clone, Debug)]
pub struct Job {
    /// The Python of the managed environment (`scripts/python-env`).
    pub python: PathBuf,
    /// `stages/execute/harness.py`.
    pub harness: PathBuf,
    /// The submission's code.
    pub code: PathBuf,
    pub format: Format,
    /// `data/<id>/public/`: `train.csv` and `test.csv` are read from it.
    pub public_dir: PathBuf,
    pub spec: Spec,
    pub limits: Limits,
}

/// What a run produced.
#[derive(Clone, Debug, Serialize)]
pub struct Execution {
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
}

/// Why a backend could not run a job at all (distinct from the job failing).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("{0}")]
    Unavailable(String),
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
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
    fn run(&self, job: &Job, out_dir: &Path) -> Result<Execution, SandboxError>;
}

/// The last `max` bytes of `bytes` as text (at a character boundary).
pub fn tail(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.len() <= max {
        return text.into_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_string()
}

/// The cores a run may use: its numeric libraries' thread counts ([`ENV`]), the docker
/// backend's CPU quota, and what the prompt tells the model.
pub const CPUS: u32 = 2;

/// The environment of every run, whatever the backend (the caller's is never passed on).
const ENV: [(&str, &str); 9] = [
    ("PATH", "/usr/bin:/bin"),
    ("HOME", "/tmp"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
    ("PYTHONHASHSEED", "0"),
    ("MPLCONFIGDIR", "/tmp"),
    ("OMP_NUM_THREADS", "2"),
    ("OPENBLAS_NUM_THREADS", "2"),
    ("MKL_NUM_THREADS", "2"),
    ("LANG", "C.UTF-8"),
];

/// The harness's command line in every sandbox: the harness, code and spec under
/// `/sandbox`, the public files at `/data`, the outputs in `/out`.
fn harness_argv(job: &Job) -> Vec<std::ffi::OsString> {
    let mut argv = vec![job.python.clone().into_os_string()];
    argv.extend(
        [
            "/sandbox/harness.py",
            "--code",
            "/sandbox/code.py",
            "--mode",
            job.format.harness_mode(),
            "--spec",
            "/sandbox/spec.json",
            "--train",
            "/data/train.csv",
            "--test",
            "/data/test.csv",
            "--out",
            "/out/predictions.parquet",
            "--result",
            "/out/result.json",
        ]
        .map(Into::into),
    );
    argv
}

/// The predictions file a run writes in its output folder (Parquet, written by the
/// harness with pyarrow).
pub const PREDICTIONS: &str = "predictions.parquet";

/// Whether ml2b runs as root (it then hands each run's output folder to the sandbox user).
pub(super) fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Stages one run on the host, the same for every backend: `spec.json`, `code.py` and
/// `harness.py` in `inputs` (mode 0644, the folder 0755; the sandbox sees them read-only),
/// and the empty output folder `out` (0755), handed to `owner` (uid, gid) when ml2b is root.
fn stage_run(job: &Job, inputs: &Path, out: &Path, owner: (u32, u32)) -> Result<(), SandboxError> {
    use std::os::unix::fs::PermissionsExt;
    let chmod = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode))
            .map_err(io(format!("chmod {}", p.display())))
    };
    std::fs::create_dir_all(inputs).map_err(io(format!("creating {}", inputs.display())))?;
    chmod(inputs, 0o755)?;
    let spec = inputs.join("spec.json");
    std::fs::write(&spec, job.spec.to_json()).map_err(io(format!("writing {}", spec.display())))?;
    for (from, name) in [(&job.code, "code.py"), (&job.harness, "harness.py")] {
        std::fs::copy(from, inputs.join(name)).map_err(io(format!("reading {}", from.display())))?;
    }
    for name in ["spec.json", "code.py", "harness.py"] {
        chmod(&inputs.join(name), 0o644)?;
    }
    std::fs::create_dir(out).map_err(io("creating the output folder".into()))?;
    chmod(out, 0o755)?;
    if is_root() {
        std::os::unix::fs::chown(out, Some(owner.0), Some(owner.1))
            .map_err(io("handing the output folder to the sandbox user".into()))?;
    }
    Ok(())
}

/// Bytes of stdout/stderr kept (the end of each).
const TAIL: usize = 16 * 1024;

fn io(what: String) -> impl FnOnce(std::io::Error) -> SandboxError {
    move |source| SandboxError::Io { what, source }
}

fn dir_size(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// Decides the outcome from the harness's record and how the sandbox ended.
fn classify(
    job: &Job,
    out_dir: &Path,
    status: std::process::ExitStatus,
    timed_out: bool,
    wall_seconds: f64,
    stdout: &[u8],
    stderr: &[u8],
) -> Execution {
    let result: serde_json::Value = std::fs::read(out_dir.join("result.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(serde_json::Value::Null);
    let stderr_text = String::from_utf8_lossy(stderr);
    let harness = result
        .get("outcome")
        .and_then(|o| o.as_str())
        .and_then(Outcome::from_harness);
    let signal = status
        .signal()
        .or_else(|| status.code().filter(|c| *c > 128).map(|c| c - 128));
    let written = dir_size(out_dir);
    let (outcome, detail) = if timed_out {
        (
            Outcome::Timeout,
            Some(format!("killed after the {:?} wall-clock limit", job.limits.wall)),
        )
    } else if written > job.limits.output_bytes {
        (
            Outcome::ConstraintViolation,
            Some(format!(
                "left {written} bytes in its output folder (limit {})",
                job.limits.output_bytes
            )),
        )
    } else if signal == Some(25) {
        (
            Outcome::ConstraintViolation,
            Some(format!(
                "wrote a file over the {}-byte limit",
                job.limits.output_bytes
            )),
        )
    } else if let Some(h) = harness {
        (h, None)
    } else if stderr_text.starts_with("bwrap:")
        || stderr_text.contains("prlimit:")
        || stderr_text.contains("setpriv:")
    {
        (
            Outcome::SandboxError,
            Some(stderr_text.lines().next().unwrap_or_default().to_string()),
        )
    } else if stderr_text.contains("MemoryError") {
        (
            Outcome::OutOfMemory,
            Some("the run died without a result, out of memory".into()),
        )
    } else {
        let how = signal.map_or_else(
            || format!("exit status {:?}", status.code()),
            |s| format!("signal {s}"),
        );
        (
            Outcome::RuntimeError,
            Some(format!("the run ended without a result ({how})")),
        )
    };
    let predictions = out_dir.join(PREDICTIONS);
    let predictions = if outcome == Outcome::Ok && predictions.is_file() {
        Some(predictions)
    } else {
        if outcome == Outcome::ConstraintViolation {
            clear(out_dir);
        }
        None
    };
    Execution {
        outcome,
        predictions,
        result,
        wall_seconds,
        stdout_tail: tail(stdout, TAIL),
        stderr_tail: tail(stderr, TAIL),
        detail,
    }
}

/// Deletes everything a run left in its output folder.
fn clear(out_dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(out_dir) {
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            let _ = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
        }
    }
}

/// Deletes `result.json` and `predictions.parquet` from a run's output folder when the run
/// left them as symbolic links: [`classify`] and [`deliver`] would follow a link on the
/// host, to any host file (a forged result record, or a host file as the predictions).
fn drop_links(out: &Path) {
    for name in ["result.json", PREDICTIONS] {
        let path = out.join(name);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Copies a run's `result.json` (and `predictions.parquet` when the run is ok) from its output
/// folder `staged` to `out_dir`, and points the execution's predictions there.
fn deliver(mut execution: Execution, staged: &Path, out_dir: &Path) -> Result<Execution, SandboxError> {
    for name in ["result.json", PREDICTIONS] {
        let from = staged.join(name);
        if from.is_file() && (name == "result.json" || execution.predictions.is_some()) {
            std::fs::copy(&from, out_dir.join(name))
                .map_err(io(format!("copying {name} out of the sandbox")))?;
        }
    }
    execution.predictions = execution.predictions.map(|_| out_dir.join(PREDICTIONS));
    Ok(execution)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_left_as_outputs_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join(PREDICTIONS)).unwrap();
        std::fs::write(dir.path().join("result.json"), "{}").unwrap();
        drop_links(dir.path());
        assert!(std::fs::symlink_metadata(dir.path().join(PREDICTIONS)).is_err());
        assert!(dir.path().join("result.json").is_file());
    }
}
