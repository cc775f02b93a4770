//! A worker process: this test binary, re-executed with `ML2B_IT_WORKER` set,
//! runs the echo stage over a store (a directory, or `s3://…` reached through the
//! `AWS_*` variables it was given) and prints each commit as a JSON line.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use ml2b::progress::Progress;
use ml2b::stages::{RunOptions, run_stage};
use ml2b::store::Store;

use crate::common::EchoStage;

/// Settings passed to a worker through its environment.
pub struct WorkerSpec<'a> {
    pub store: &'a std::path::Path,
    pub units: &'a [u64],
    pub batch: usize,
    pub sleep_us: u64,
}

/// Starts a worker process.
pub fn spawn(spec: &WorkerSpec) -> Child {
    spawn_with_env(spec, &[])
}

/// Starts a worker process with more environment variables (an S3 store's `AWS_*`).
pub fn spawn_with_env(spec: &WorkerSpec, env: &[(String, String)]) -> Child {
    let units: Vec<String> = spec.units.iter().map(u64::to_string).collect();
    Command::new(std::env::current_exe().unwrap())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args([
            "worker::worker_entry",
            "--exact",
            "--nocapture",
            "--test-threads=1",
            "--quiet",
        ])
        .env("ML2B_IT_WORKER", "1")
        .env("ML2B_IT_STORE", spec.store)
        .env("ML2B_IT_UNITS", units.join(","))
        .env("ML2B_IT_BATCH", spec.batch.to_string())
        .env("ML2B_IT_SLEEP_US", spec.sleep_us.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Prints each commit as it happens, so a killed worker has told what it committed.
struct PrintCommits;

impl Progress for PrintCommits {
    fn committed(&self, _stage: &str, c: &ml2b::log::Committed) {
        println!("COMMIT {}", serde_json::to_string(c).unwrap());
    }
}

#[test]
fn worker_entry() {
    if std::env::var_os("ML2B_IT_WORKER").is_none() {
        return;
    }
    let var = |k: &str| std::env::var(k).unwrap();
    let units = var("ML2B_IT_UNITS")
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let store = Store::open_location(&var("ML2B_IT_STORE")).unwrap();
    let stage = Arc::new(EchoStage {
        units,
        sleep_us: var("ML2B_IT_SLEEP_US").parse().unwrap(),
    });
    let options = RunOptions {
        concurrency: 2,
        batch_events: var("ML2B_IT_BATCH").parse().unwrap(),
        ..Default::default()
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let summary = rt
        .block_on(run_stage(&store, stage, &options, &PrintCommits))
        .unwrap();
    println!("DONE {}", summary.appended());
}
