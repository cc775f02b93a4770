//! Slurm through its own commands: `sbatch` submits a plan as one job array, `squeue` says
//! whether it still has tasks. Nothing else is asked of Slurm: what is done is read from
//! the store's log, never from the scheduler.
//!
//! The array's batch script (given to `sbatch` on stdin) runs this very `ml2b` binary as
//! `ml2b --store <store> worker --plan <P> --shard $SLURM_ARRAY_TASK_ID`, with the
//! submitting environment (`--export=ALL`: `ML2B_PYTHON`, `ML2B_ROOT`, …). Tasks are
//! requeued when their node is lost (`--requeue`). Each task's output goes to
//! `<store>/cluster/<P>/<task>.out`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::Plan;
use crate::settings::SlurmSettings;
use crate::store::Hash;

/// A submitted array.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Submission {
    /// Slurm's job id of the array.
    pub job_id: String,
    /// The plan's hash.
    pub plan: Hash,
    /// Where the tasks' outputs go.
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
    #[error("cannot create {}", path.display())]
    Output {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The folder of a plan's task outputs in `store_root`.
pub fn output_dir(store_root: &Path, plan: &Hash) -> PathBuf {
    store_root.join("cluster").join(plan.to_hex())
}

/// Submits `plan` (stored as `hash` in the store at `store_root`) as one array.
pub fn submit(
    store_root: &Path,
    hash: &Hash,
    plan: &Plan,
    s: &SlurmSettings,
) -> Result<Submission, SlurmError> {
    let store_root = std::path::absolute(store_root).unwrap_or_else(|_| store_root.to_path_buf());
    let output_dir = output_dir(&store_root, hash);
    std::fs::create_dir_all(&output_dir).map_err(|source| SlurmError::Output {
        path: output_dir.clone(),
        source,
    })?;
    let exe = std::env::current_exe().map_err(|source| SlurmError::Spawn {
        command: "ml2b (its own path)".into(),
        source,
    })?;
    let script = format!(
        "#!/bin/sh\nexec {} --store {} worker --plan {hash} --shard \"$SLURM_ARRAY_TASK_ID\"\n",
        shell_quote(&exe.to_string_lossy()),
        shell_quote(&store_root.to_string_lossy()),
    );
    let mut args = vec![
        "--parsable".to_string(),
        format!("--array=0-{}%{}", plan.shards - 1, s.max_running),
        "--requeue".into(),
        // A requeued task appends to its output: every run's summary stays readable.
        "--open-mode=append".into(),
        "--export=ALL".into(),
        format!("--chdir={}", output_dir.display()),
        format!("--job-name=ml2b-{}-{}", plan.stage, &hash.to_hex()[..8]),
        format!("--output={}/%a.out", output_dir.display()),
    ];
    args.extend(s.sbatch_args.iter().cloned());
    let out = run("sbatch", &args, Some(&script))?;
    let job_id = out.split(';').next().unwrap_or_default().trim().to_string();
    Ok(Submission {
        job_id,
        plan: *hash,
        output_dir,
    })
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

/// Whether the job still has pending or running tasks.
pub fn active(job_id: &str) -> Result<bool, SlurmError> {
    let out = run(
        "squeue",
        &["-h".into(), "-j".into(), job_id.into(), "-o".into(), "%i".into()],
        None,
    )?;
    Ok(!out.trim().is_empty())
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
    fn words_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("/a b/c"), "'/a b/c'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
