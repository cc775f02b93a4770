//! Slurm through its own commands: `sbatch` submits a plan as job arrays, `squeue` says
//! whether they still have tasks, `scontrol show config` gives the cluster's
//! `MaxArraySize`, and once the arrays ended `sacct` (else `scontrol show job`) says how
//! each task ended (`crate::cluster::tasks`). What is done is read from the store's log,
//! never from the scheduler: Slurm only tells why a task did nothing.
//!
//! A plan of B shards is one array when B ≤ `MaxArraySize − 1`, else several arrays of at
//! most that many tasks, each after the previous one (`--dependency=afterany:…`, so that
//! no more than `--max-running` tasks run at once). The array whose first shard is F runs,
//! in its task `t`, shard F + t: its batch script (given to `sbatch` on stdin) runs this
//! very `ml2b` binary as `ml2b --store <store> worker --plan <P> --shard $((F + t))`, with
//! the submitting environment (`--export=ALL`: `ML2B_PYTHON`, `ML2B_ROOT`, the `AWS_*`
//! settings of an S3 store, …). Tasks are requeued when their node is lost (`--requeue`).
//!
//! On a directory store the tasks write into the plan's folder, `<store>/cluster/<P>/`:
//! `<shard>.out`, the worker's output (appended by each run of the task; its last line is
//! the run summary), and `slurm.log`, what Slurm itself says about the tasks (`--output`,
//! appended). On S3 the nodes share no directory: a task's output stays on its node
//! (`/tmp/ml2b-<P>-<job>_<task>.log`, unless a `--slurm-arg --output=…` says otherwise) and
//! the worker puts its summary into the store (`crate::cluster::folder`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::Plan;
use super::arrays::{Array, DEFAULT_MAX_ARRAY_SIZE, Span, spans};
use super::folder::{FolderError, PlanFolder};
use crate::config::SlurmSettings;
use crate::store::{Hash, Store};

/// A submitted plan: its arrays.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Submission {
    /// Slurm's job id of the first array.
    pub job_id: String,
    /// Every array, in shard order.
    pub arrays: Vec<Array>,
    /// The plan's hash.
    pub plan: Hash,
    /// The plan's folder (on S3: its URL).
    pub output_dir: PathBuf,
}

/// Slurm could not be asked.
#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    #[error("cannot run `{command}` (is Slurm's client installed and SLURM_CONF set?)")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("`{command}` failed ({status}): {stderr}")]
    Failed {
        command: String,
        status: std::process::ExitStatus,
        stderr: String,
    },
    #[error("cannot record the submitted job")]
    Record(#[from] FolderError),
}

/// The cluster's `MaxArraySize` (`scontrol show config`); Slurm's default when unset.
pub fn max_array_size() -> Result<u32, SlurmError> {
    let config = run("scontrol", &["show".into(), "config".into()], None)?;
    Ok(parse_max_array_size(&config).unwrap_or(DEFAULT_MAX_ARRAY_SIZE))
}

/// `MaxArraySize = N` in `scontrol show config`'s output.
fn parse_max_array_size(config: &str) -> Option<u32> {
    config.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "MaxArraySize").then(|| value.trim().parse().ok())?
    })
}

/// Submits `plan` (stored as `hash` in `store`) as arrays of at most
/// [`array_cap`](super::arrays::array_cap)`(max_array_size)` tasks.
pub fn submit(
    store: &Store,
    hash: &Hash,
    plan: &Plan,
    s: &SlurmSettings,
    max_array_size: u32,
) -> Result<Submission, SlurmError> {
    let folder = PlanFolder::new(store, *hash);
    folder.create()?;
    let store_root = super::folder::location(store);
    let output_dir = folder.path();
    let exe = std::env::current_exe().map_err(|source| SlurmError::Spawn {
        command: "ml2b (its own path)".into(),
        source,
    })?;
    let job = ArrayJob {
        exe: &exe,
        store_root: &store_root,
        output_dir: &output_dir,
        shared: folder.is_shared_directory(),
        hash,
        plan,
        settings: s,
    };
    let mut arrays: Vec<Array> = Vec::new();
    for span in spans(plan.shards, max_array_size) {
        let after = arrays.last().map(|a| a.job_id.as_str());
        let array = job.submit(span, after)?;
        folder.record_job(&array)?;
        arrays.push(array);
    }
    Ok(Submission {
        job_id: arrays.first().map(|a| a.job_id.clone()).unwrap_or_default(),
        arrays,
        plan: *hash,
        output_dir,
    })
}

/// What every array of one submission shares.
struct ArrayJob<'a> {
    exe: &'a Path,
    store_root: &'a Path,
    output_dir: &'a Path,
    /// Whether `output_dir` is a directory the nodes share (else it is the store's URL).
    shared: bool,
    hash: &'a Hash,
    plan: &'a Plan,
    settings: &'a SlurmSettings,
}

impl ArrayJob<'_> {
    /// Submits the shards of `span`, after the array `after` when given.
    fn submit(&self, span: Span, after: Option<&str>) -> Result<Array, SlurmError> {
        let out = run("sbatch", &self.args(span, after), Some(&self.script(span)))?;
        Ok(Array {
            job_id: out.split(';').next().unwrap_or_default().trim().to_string(),
            first: span.first,
            shards: span.len,
        })
    }

    /// The batch script of the array starting at shard `span.first`.
    fn script(&self, span: Span) -> String {
        // On S3 the output stays in Slurm's own file, on the node.
        let redirect = match self.shared {
            true => format!(
                " >> {}/\"$shard\".out 2>&1",
                shell_quote(&self.output_dir.to_string_lossy())
            ),
            false => String::new(),
        };
        format!(
            "#!/bin/sh\nshard=$(({} + SLURM_ARRAY_TASK_ID))\n\
             exec {} --store {} worker --plan {} --shard \"$shard\"{redirect}\n",
            span.first,
            shell_quote(&self.exe.to_string_lossy()),
            shell_quote(&self.store_root.to_string_lossy()),
            self.hash,
        )
    }

    /// Where the tasks run and Slurm writes their messages: the plan's directory, or on
    /// S3 the node's `/tmp`.
    fn output_args(&self) -> [String; 2] {
        match self.shared {
            true => {
                let dir = self.output_dir.display();
                [format!("--chdir={dir}"), format!("--output={dir}/slurm.log")]
            }
            false => [
                "--chdir=/tmp".into(),
                format!("--output=/tmp/ml2b-{}-%A_%a.log", self.hash),
            ],
        }
    }

    fn args(&self, span: Span, after: Option<&str>) -> Vec<String> {
        let [chdir, output] = self.output_args();
        let mut args = vec![
            "--parsable".to_string(),
            format!("--array=0-{}%{}", span.len - 1, self.settings.max_running),
            "--requeue".into(),
            // A requeued task appends: every run's messages stay readable.
            "--open-mode=append".into(),
            "--export=ALL".into(),
            chdir,
            format!("--job-name=ml2b-{}-{}", self.plan.stage, &self.hash.to_hex()[..8]),
            output,
        ];
        args.extend(after.map(|job| format!("--dependency=afterany:{job}")));
        // A task's runs take the GPUs in turn: one run's worth per task (`all`: one).
        args.extend(self.plan.gpus().map(|g| match g {
            crate::sandbox::Gpus::Count(n) => format!("--gres=gpu:{n}"),
            crate::sandbox::Gpus::All => "--gres=gpu".to_string(),
        }));
        args.extend(self.settings.sbatch_args.iter().cloned());
        args
    }
}

/// Requeues the array task this process runs in (`scontrol requeue`), so that Slurm runs
/// it again; `false` when not running under Slurm.
pub fn requeue_self() -> Result<bool, SlurmError> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let task = match (
        var("SLURM_ARRAY_JOB_ID"),
        var("SLURM_ARRAY_TASK_ID"),
        var("SLURM_JOB_ID"),
    ) {
        (Some(array), Some(index), _) => format!("{array}_{index}"),
        (_, _, Some(job)) => job,
        _ => return Ok(false),
    };
    run("scontrol", &["requeue".into(), task], None)?;
    Ok(true)
}

/// Whether any of the arrays still has pending or running tasks (none when the controller
/// no longer knows any of them: it forgets an ended job after `MinJobAge`).
pub fn active(arrays: &[Array]) -> Result<bool, SlurmError> {
    let ids: Vec<&str> = arrays.iter().map(|a| a.job_id.as_str()).collect();
    let args = ["-h".into(), "-j".into(), ids.join(","), "-o".into(), "%i".into()];
    match run("squeue", &args, None) {
        Err(e) if e.is_unknown_job() => Ok(false),
        other => Ok(!other?.trim().is_empty()),
    }
}

/// The fields asked of `sacct`, in the order [`crate::cluster::tasks::parse_sacct`] reads.
pub const SACCT_FIELDS: &str = "JobID,State,ExitCode,NodeList";

/// What the accounting storage holds on the arrays' tasks: `sacct`'s parsable lines of
/// [`SACCT_FIELDS`], one per task (its allocation, not its steps; the latest run of a
/// requeued task). An error when the cluster keeps no accounting.
pub fn sacct(arrays: &[Array]) -> Result<String, SlurmError> {
    let ids: Vec<&str> = arrays.iter().map(|a| a.job_id.as_str()).collect();
    let args = ["--noheader", "--parsable2", "--allocations", "--jobs"]
        .into_iter()
        .map(String::from)
        .chain([ids.join(","), format!("--format={SACCT_FIELDS}")])
        .collect::<Vec<_>>();
    run("sacct", &args, None)
}

/// What the controller still holds on the array `job` (until `MinJobAge` after it ended):
/// `scontrol --oneliner show job`, one line per task.
pub fn show_job(job: &str) -> Result<String, SlurmError> {
    run(
        "scontrol",
        &["--oneliner".into(), "show".into(), "job".into(), job.into()],
        None,
    )
}

impl SlurmError {
    /// Whether Slurm answered that it knows no such job (purged, or never submitted).
    pub fn is_unknown_job(&self) -> bool {
        matches!(self, Self::Failed { stderr, .. } if stderr.contains("Invalid job id"))
    }

    /// What Slurm said, without the command line: its error output, or why it could not run.
    pub fn reason(&self) -> String {
        match self {
            Self::Failed { stderr, .. } if !stderr.is_empty() => stderr.clone(),
            other => crate::error::chain(other),
        }
    }
}

fn run(program: &str, args: &[String], stdin: Option<&str>) -> Result<String, SlurmError> {
    let command = format!("{program} {}", args.join(" "));
    let mut child = Command::new(program)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| SlurmError::Spawn {
            command: command.clone(),
            source,
        })?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())
            .map_err(|source| SlurmError::Spawn {
                command: command.clone(),
                source,
            })?;
    }
    let out = child.wait_with_output().map_err(|source| SlurmError::Spawn {
        command: command.clone(),
        source,
    })?;
    if !out.status.success() {
        return Err(SlurmError::Failed {
            command,
            status: out.status,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `text` as one single-quoted shell word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_array_size_is_read_from_scontrol_show_config() {
        let config = "Configuration data as of 2026-12-02T20:00:00\nMaxArraySize            = 10001\n\
                      MaxJobCount             = 10000\n";
        assert_eq!(parse_max_array_size(config), Some(10001));
        assert_eq!(parse_max_array_size("MaxJobCount = 3\n"), None);
    }

    #[test]
    fn words_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("/a b/c"), "'/a b/c'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
