//! The steps of a run that every backend takes the same way, so that a job behaves alike
//! whichever runs it: staging the inputs ([`stage_run`]), the harness's command line
//! ([`harness_argv`]) and environment ([`ENV`]), deciding the outcome ([`classify`]), and
//! handing the outputs back ([`drop_links`], [`deliver`]).
//!
//! In the sandbox the harness, code and spec are at `/sandbox/{harness.py,code.py,spec.json}`,
//! the public files at `/data`, and the outputs go to `/out` (`result.json`,
//! `predictions.parquet`); each backend maps those paths to host folders of its own.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use super::error::{SandboxError, io};
use super::job::{Job, Outcome, PREDICTIONS, Run};

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
pub(super) fn classify(
    job: &Job,
    out_dir: &Path,
    status: std::process::ExitStatus,
    timed_out: bool,
    wall_seconds: f64,
    stdout: &[u8],
    stderr: &[u8],
) -> Run {
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
    Run {
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
pub(super) fn drop_links(out: &Path) {
    for name in ["result.json", PREDICTIONS] {
        let path = out.join(name);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Copies a run's `result.json` (and `predictions.parquet` when the run is ok) from its output
/// folder `staged` to `out_dir`, and points the execution's predictions there.
pub(super) fn deliver(mut execution: Run, staged: &Path, out_dir: &Path) -> Result<Run, SandboxError> {
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
