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
//!
//! The outcomes that are not a verdict on the solution are ml2b's alone to decide, from what
//! it observed, never from the record: `timeout` (its own clock), `constraint_violation` of
//! the output limits (its own measure) and `sandbox_error`. The harness prints [`READY`] as
//! the first line of stdout once its own imports and inputs worked, before it loads the
//! submission; a run whose stdout does not begin with it never reached the submission (the
//! sandbox, the Python environment or the limits failed it) and is `sandbox_error`, which
//! the stages treat as a fault of the environment, not a result. The solution cannot
//! forge its absence (the line is written before it runs) nor its presence (without it the
//! solution never runs). A record that claims `timeout` or `sandbox_error` is not believed:
//! the run is `runtime_error`, and the detail says what was claimed. The line is taken
//! out of the stdout tail a run records.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use super::error::{SandboxError, io};
use super::job::{Job, Limits, PREDICTIONS, Run};
use super::outputs::{RESULT_CAP, Refused, check_predictions, copy_capped, read_capped};
use crate::events::Outcome;

/// The first line the harness prints on stdout, before it loads the submission (and the
/// grading program's driver, once it loaded the grader).
pub const READY: &str = "ml2b-harness: ready\n";

/// What a run wrote on one stream: its first bytes (enough to hold [`READY`]) and its last
/// ones (the tail kept, up to 4 × [`TAIL`] while reading).
#[derive(Clone, Debug, Default)]
pub(super) struct Captured {
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl Captured {
    /// Appends what was read next.
    pub(super) fn push(&mut self, bytes: &[u8]) {
        let room = READY.len().saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > 4 * TAIL {
            self.tail.drain(..self.tail.len() - TAIL);
        }
    }

    /// The kept bytes: the stream's last 16 to 64 KiB (all of a shorter one).
    pub(super) fn kept(&self) -> &[u8] {
        &self.tail
    }

    /// Whether the stream began with [`READY`].
    fn began_ready(&self) -> bool {
        self.head == READY.as_bytes()
    }

    /// The kept bytes, without a leading [`READY`] line.
    fn tail(&self) -> &[u8] {
        self.tail.strip_prefix(READY.as_bytes()).unwrap_or(&self.tail)
    }

    #[cfg(test)]
    pub(super) fn of(bytes: &[u8]) -> Self {
        let mut c = Self::default();
        c.push(bytes);
        c
    }
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
///
/// `OMP_WAIT_POLICY=PASSIVE`: an OpenMP thread waiting at a barrier sleeps instead of
/// spinning. Where runs share cores (more `-j` than the cores hold at [`CPUS`] a run, or
/// other work on the machine) spinning threads take the cores the working ones need, and a
/// 3 s gradient-boosting fit took over 600 s: a timeout that was the machine's fault. It
/// changes how threads wait, never what they compute, so it is not in a run's key.
pub(super) const ENV: [(&str, &str); 10] = [
    ("PATH", "/usr/bin:/bin"),
    ("HOME", "/tmp"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
    ("PYTHONHASHSEED", "0"),
    ("MPLCONFIGDIR", "/tmp"),
    ("OMP_NUM_THREADS", "2"),
    ("OMP_WAIT_POLICY", "PASSIVE"),
    ("OPENBLAS_NUM_THREADS", "2"),
    ("MKL_NUM_THREADS", "2"),
    ("LANG", "C.UTF-8"),
];

/// The harness's command line in every sandbox: the harness, code and spec under
/// `/sandbox`, the public files at `/data`, the outputs in `/out`.
pub(super) fn harness_argv(job: &Job) -> Vec<std::ffi::OsString> {
    let mut argv = vec![job.python.clone().into_os_string()];
    if job.proxy.is_some() {
        // The relay binds the proxy port, then executes the harness in its place.
        argv.extend(["/sandbox/relay.py".into(), job.python.clone().into_os_string()]);
    }
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

/// The socket families `job`'s filter allows: IPv4 and IPv6 too in a `--network proxy`
/// run, whose relay listens on the loopback.
pub(super) fn sockets(job: &Job) -> super::seccomp::Sockets {
    match job.proxy {
        Some(_) => super::seccomp::Sockets::Inet,
        None => super::seccomp::Sockets::Unix,
    }
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
    if job.proxy.is_some() {
        let relay = inputs.join("relay.py");
        std::fs::write(&relay, super::assets::RELAY).map_err(io(format!("writing {}", relay.display())))?;
        chmod(&relay, 0o644)?;
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
    pub stdout: &'a Captured,
    pub stderr: &'a Captured,
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
        stdout_tail: tail(ended.stdout.tail(), TAIL),
        stderr_tail: tail(ended.stderr.tail(), TAIL),
        detail,
        requests: None,
    }
}

/// The outcome rules, first match wins: the backend's own limits, then whether the harness
/// started ([`READY`]), then the record (checked), then what stderr and the exit status say.
fn decide(job: &Job, out_dir: &Path, ended: &Ended<'_>, record: &Record) -> (Outcome, Option<String>) {
    let stderr_text = String::from_utf8_lossy(ended.stderr.tail());
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
    if !ended.stdout.began_ready() {
        return (Outcome::SandboxError, Some(not_started(&stderr_text, status)));
    }
    if let Record::Refused(why) = record {
        return (Outcome::ConstraintViolation, Some(format!("result.json {why}")));
    }
    match record.claim() {
        Some(Outcome::Ok) => return check_ok(job, out_dir, status),
        Some(claimed @ (Outcome::Timeout | Outcome::SandboxError)) => {
            let why = format!("the run's result.json claims `{claimed}`, which ml2b did not observe");
            return (Outcome::RuntimeError, Some(why));
        }
        Some(claimed) => return (claimed, None),
        None => {}
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

/// Why a run never reached the submission: the first line stderr holds (bubblewrap's,
/// prlimit's or Python's own complaint), else the exit status.
fn not_started(stderr: &str, status: std::process::ExitStatus) -> String {
    let first = stderr.lines().map(str::trim).find(|l| !l.is_empty());
    let last = stderr.lines().map(str::trim).rfind(|l| !l.is_empty());
    match (first, last) {
        (Some(first), Some(last)) if first != last => {
            format!("the harness never started the submission: {first} … {last}")
        }
        (Some(line), _) => format!("the harness never started the submission: {line}"),
        _ => format!("the harness never started the submission (it ended with {status}, saying nothing)"),
    }
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

    fn job() -> Job {
        Job {
            python: "/nowhere/python".into(),
            harness: "/nowhere/harness.py".into(),
            code: "/nowhere/code.py".into(),
            format: crate::events::Format::Mono,
            public_dir: "/nowhere".into(),
            spec: crate::competition::spec::Spec {
                id: "id".into(),
                targets: vec!["y".into()],
                kind: crate::competition::spec::Kind::Values,
                k: None,
            },
            limits: Limits::default(),
            proxy: None,
            model_cache: None,
            gpus: None,
        }
    }

    /// The outcome of a run that exited with `code`, printed `stdout` and `stderr` and left
    /// `record` as its result.json.
    fn outcome(stdout: &[&[u8]], stderr: &str, code: i32, record: Option<&str>, timed_out: bool) -> Run {
        let dir = tempfile::tempdir().unwrap();
        if let Some(r) = record {
            std::fs::write(dir.path().join("result.json"), r).unwrap();
        }
        let mut out = Captured::default();
        for chunk in stdout {
            out.push(chunk);
        }
        let ended = Ended {
            status: std::process::ExitStatus::from_raw(code << 8),
            timed_out,
            wall_seconds: 1.0,
            stdout: &out,
            stderr: &Captured::of(stderr.as_bytes()),
        };
        classify(&job(), dir.path(), &ended)
    }

    #[test]
    fn a_run_that_never_printed_ready_is_the_sandboxs_failure() {
        let stderr = "Traceback (most recent call last):\n  File \"/sandbox/harness.py\"\nModuleNotFoundError: No module named 'numpy'\n";
        let record = r#"{"outcome": "runtime_error", "errors": ["No module named 'numpy'"]}"#;
        let run = outcome(&[], stderr, 1, Some(record), false);
        assert_eq!(run.outcome, Outcome::SandboxError);
        assert_eq!(
            run.detail.as_deref(),
            Some(
                "the harness never started the submission: Traceback (most recent call last): … ModuleNotFoundError: No module named 'numpy'"
            )
        );
        let run = outcome(&[], "bwrap: Can't mount proc on /newroot/proc\n", 1, None, false);
        assert_eq!(run.outcome, Outcome::SandboxError);
        // A timeout is ml2b's own observation, first.
        assert_eq!(outcome(&[], "", 137, None, true).outcome, Outcome::Timeout);
    }

    #[test]
    fn a_record_cannot_claim_what_only_ml2b_observes() {
        for claimed in ["sandbox_error", "timeout"] {
            let record = format!(r#"{{"outcome": "{claimed}"}}"#);
            let run = outcome(&[READY.as_bytes()], "bwrap: fake\n", 1, Some(&record), false);
            assert_eq!(run.outcome, Outcome::RuntimeError, "{claimed}");
            assert_eq!(
                run.detail,
                Some(format!(
                    "the run's result.json claims `{claimed}`, which ml2b did not observe"
                ))
            );
        }
        // A claim against the code itself stands.
        let run = outcome(
            &[READY.as_bytes()],
            "",
            1,
            Some(r#"{"outcome": "import_error"}"#),
            false,
        );
        assert_eq!(run.outcome, Outcome::ImportError);
        // Without a record, stderr imitating bubblewrap is the code's own crash.
        let run = outcome(&[READY.as_bytes()], "bwrap: fake\n", 1, None, false);
        assert_eq!(run.outcome, Outcome::RuntimeError);
    }

    #[test]
    fn the_ready_line_is_found_across_reads_and_left_out_of_the_tail() {
        let run = outcome(
            &[b"ml2b-har", b"ness: ready\nhello\n"],
            "",
            1,
            Some(r#"{"outcome": "runtime_error"}"#),
            false,
        );
        assert_eq!(run.outcome, Outcome::RuntimeError);
        assert_eq!(run.stdout_tail, "hello\n");
        // A line that only looks like it, or comes later, is not it.
        let run = outcome(&[b"hello\n", READY.as_bytes()], "", 1, None, false);
        assert_eq!(run.outcome, Outcome::SandboxError);
    }

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
