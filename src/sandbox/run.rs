//! The steps of a run that every backend takes the same way, so that a job behaves alike
//! whichever runs it: staging the inputs ([`stage_run`]), the harness's command line
//! ([`harness_argv`]) and environment ([`ENV`]), deciding the outcome ([`classify`]), and
//! handing the outputs back ([`drop_links`], [`deliver`]).
//!
//! In the sandbox the harness, code and spec are at `/sandbox/{harness.py,code.py,spec.json}`,
//! the public files at `/data`, and the outputs go to `/out` (`result.json`,
//! `predictions.parquet`); each backend maps those paths to host folders of its own, inside
//! the run's private folder (`rundir`).
//!
//! Everything in `/out` is the solution's to forge: outputs are read only as regular files,
//! without blocking and within caps (`outputs`), and the harness's record is believed only
//! where ml2b can check it ([`classify`]): `ok` needs a zero exit status and a predictions
//! file that is a regular, non-empty Parquet file within the output limit; a record over
//! 64 KiB, or left as anything but a regular file, is `constraint_violation` and is not
//! stored (the run's `result` is then `null`, the reason in `detail`).

use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use super::error::{SandboxError, io};
use super::job::{Job, Limits, Outcome, PREDICTIONS, Run};
use super::outputs::{RESULT_CAP, Refused, check_predictions, copy_capped, read_capped};

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
pub(super) const ENV: [(&str, &str); 9] = [
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
pub(super) fn harness_argv(job: &Job) -> Vec<std::ffi::OsString> {
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

/// Whether ml2b runs as root (it then hands each run's output folder to the sandbox user).
pub(super) fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Stages one run on the host, the same for every backend: `spec.json`, `code.py` and
/// `harness.py` in `inputs` (mode 0644, the folder 0755; the sandbox sees them read-only),
/// and the empty output folder `out` (0755), handed to `owner` (uid, gid) when ml2b is root.
/// Both are in the run's private folder (`rundir`, mode 0700), so no other user reaches
/// them whatever their own modes.
pub(super) fn stage_run(job: &Job, inputs: &Path, out: &Path, owner: (u32, u32)) -> Result<(), SandboxError> {
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
pub(super) const TAIL: usize = 16 * 1024;

/// What a run left in its output folder: bytes (the larger of a file's length and the disk
/// it takes, so that neither sparse files nor directories are free) and inodes (files,
/// directories and anything else, the folder itself not counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Usage {
    pub bytes: u64,
    pub inodes: u64,
}

impl Usage {
    /// Measures `dir`, stopping once past `limits` (so a flood costs no more than the limit
    /// to measure).
    pub(super) fn of(dir: &Path, limits: &Limits) -> Self {
        use std::os::unix::fs::MetadataExt;
        let mut usage = Self::default();
        for meta in walkdir::WalkDir::new(dir)
            .min_depth(1)
            .into_iter()
            .filter_map(Result::ok)
            .filter_map(|e| e.metadata().ok())
        {
            usage.inodes += 1;
            usage.bytes += meta.len().max(meta.blocks() * 512);
            if usage.over(limits).is_some() {
                break;
            }
        }
        usage
    }

    /// Why this usage is over `limits`, if it is.
    pub(super) fn over(&self, limits: &Limits) -> Option<String> {
        if self.bytes > limits.output_bytes {
            Some(format!(
                "left over {} bytes in its output folder (limit {})",
                self.bytes, limits.output_bytes
            ))
        } else if self.inodes > limits.output_files {
            Some(format!(
                "left over {} files and folders in its output folder (limit {})",
                self.inodes, limits.output_files
            ))
        } else {
            None
        }
    }
}

/// How the sandbox ended, as the backend saw it.
pub(super) struct Ended<'a> {
    pub status: std::process::ExitStatus,
    pub timed_out: bool,
    pub wall_seconds: f64,
    pub stdout: &'a [u8],
    pub stderr: &'a [u8],
}

/// The harness's record as read from the output folder: its JSON, or why it was refused.
enum Record {
    Read(serde_json::Value),
    Unreadable,
    Refused(Refused),
}

impl Record {
    fn read(out_dir: &Path) -> Self {
        match read_capped(&out_dir.join("result.json"), RESULT_CAP) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_or(Self::Unreadable, Self::Read),
            Err(Refused::Missing) => Self::Unreadable,
            Err(e) => Self::Refused(e),
        }
    }

    /// The outcome the record claims.
    fn claim(&self) -> Option<Outcome> {
        match self {
            Self::Read(v) => v
                .get("outcome")
                .and_then(|o| o.as_str())
                .and_then(Outcome::from_harness),
            _ => None,
        }
    }

    fn into_value(self) -> serde_json::Value {
        match self {
            Self::Read(v) => v,
            _ => serde_json::Value::Null,
        }
    }
}

/// Decides the outcome from how the sandbox ended, what the run left in `out_dir` and the
/// harness's record; the record is believed only where ml2b can check it: an `ok` needs a
/// zero exit status and a predictions file that [`check_predictions`] accepts.
pub(super) fn classify(job: &Job, out_dir: &Path, ended: &Ended<'_>) -> Run {
    let record = Record::read(out_dir);
    let (outcome, detail) = decide(job, out_dir, ended, &record);
    let predictions = if outcome == Outcome::Ok {
        Some(out_dir.join(PREDICTIONS))
    } else {
        if outcome == Outcome::ConstraintViolation {
            clear(out_dir);
        }
        None
    };
    Run {
        outcome,
        predictions,
        result: record.into_value(),
        wall_seconds: ended.wall_seconds,
        stdout_tail: tail(ended.stdout, TAIL),
        stderr_tail: tail(ended.stderr, TAIL),
        detail,
    }
}

/// The outcome rules, first match wins: the backend's own limits, then the record (checked),
/// then what stderr and the exit status say.
fn decide(job: &Job, out_dir: &Path, ended: &Ended<'_>, record: &Record) -> (Outcome, Option<String>) {
    let stderr_text = String::from_utf8_lossy(ended.stderr);
    let status = ended.status;
    let signal = status
        .signal()
        .or_else(|| status.code().filter(|c| *c > 128).map(|c| c - 128));
    if ended.timed_out {
        return (
            Outcome::Timeout,
            Some(format!("killed after the {:?} wall-clock limit", job.limits.wall)),
        );
    }
    if let Some(why) = Usage::of(out_dir, &job.limits).over(&job.limits) {
        return (Outcome::ConstraintViolation, Some(why));
    }
    if signal == Some(25) {
        return (
            Outcome::ConstraintViolation,
            Some(format!(
                "wrote a file over the {}-byte limit",
                job.limits.output_bytes
            )),
        );
    }
    if let Record::Refused(why) = record {
        return (Outcome::ConstraintViolation, Some(format!("result.json {why}")));
    }
    match record.claim() {
        Some(Outcome::Ok) => return check_ok(job, out_dir, status),
        Some(claimed) => return (claimed, None),
        None => {}
    }
    if stderr_text.starts_with("bwrap:")
        || stderr_text.contains("prlimit:")
        || stderr_text.contains("setpriv:")
    {
        return (
            Outcome::SandboxError,
            Some(stderr_text.lines().next().unwrap_or_default().to_string()),
        );
    }
    if stderr_text.contains("MemoryError") {
        return (
            Outcome::OutOfMemory,
            Some("the run died without a result, out of memory".into()),
        );
    }
    let how = signal.map_or_else(
        || format!("exit status {:?}", status.code()),
        |s| format!("signal {s}"),
    );
    (
        Outcome::RuntimeError,
        Some(format!("the run ended without a result ({how})")),
    )
}

/// An `ok` claimed by the record, checked against what ml2b sees.
fn check_ok(job: &Job, out_dir: &Path, status: std::process::ExitStatus) -> (Outcome, Option<String>) {
    if !status.success() {
        let why = format!("the record says ok but the run exited with {status}");
        return (Outcome::BadPredictions, Some(why));
    }
    match check_predictions(&out_dir.join(PREDICTIONS), job.limits.output_bytes) {
        Ok(()) => (Outcome::Ok, None),
        Err(why) => (
            Outcome::BadPredictions,
            Some(format!("the record says ok but {PREDICTIONS} {why}")),
        ),
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
pub(super) fn drop_links(out: &Path) {
    for name in ["result.json", PREDICTIONS] {
        let path = out.join(name);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Copies a run's `result.json` (when [`classify`] read it) and `predictions.parquet` (when
/// the run is ok) from its output folder `staged` to `out_dir`, and points the run's
/// predictions there. Only regular files are copied, never more than the caps that
/// [`classify`] checked.
pub(super) fn deliver(mut run: Run, job: &Job, staged: &Path, out_dir: &Path) -> Result<Run, SandboxError> {
    let copy = |name: &str, cap: u64| {
        copy_capped(&staged.join(name), &out_dir.join(name), cap).map_err(|e| SandboxError::Output {
            name: name.to_string(),
            source: e,
        })
    };
    // A constraint violation's outputs were deleted; its record, read before, is kept.
    match copy("result.json", RESULT_CAP) {
        Err(SandboxError::Output {
            source: Refused::Missing,
            ..
        }) => {}
        Err(e) if !run.result.is_null() => return Err(e),
        _ => {}
    }
    if run.predictions.is_some() {
        copy(PREDICTIONS, job.limits.output_bytes)?;
    }
    run.predictions = run.predictions.map(|_| out_dir.join(PREDICTIONS));
    Ok(run)
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
