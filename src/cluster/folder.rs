//! A plan's folder in the store, `cluster/<P>/`: what the submitter and the workers leave
//! there for `ml2b status` and the waiting submitter. On a shared filesystem it is a
//! directory beside the log; on S3 (no filesystem shared with the nodes) it is keys under
//! the store's prefix, every one written once, never replaced:
//!
//! ```text
//! cluster/<P>/                      directory store           S3 store
//!   the Slurm jobs of the plan      jobs.jsonl (appended)     jobs/<first:010>.json
//!   each shard run's summary        <shard>.out (the worker's runs/<shard:06>/<at>-<host>-<pid>.json
//!                                   output, last line)
//!   Slurm's messages                slurm.log                 on the node: /tmp/ml2b-<P>-<job>_<task>.log
//! ```
//!
//! The latest run of a shard is the one whose summary comes last: the last line of
//! `<shard>.out`, or the key that sorts last under `runs/<shard>/` (its name starts with the
//! run's UTC time to the microsecond). The plans of a store are the folders under
//! `cluster/` named by a plan's hash: a plan gets its folder when it is submitted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::arrays::Array;
use super::jobs::{self, JobRecord, JobsError};
use crate::stages::RunSummary;
use crate::store::{Hash, S3Error, Store};

/// The folder of the plans, under the store's root or prefix.
const CLUSTER: &str = "cluster";

/// A plan's folder cannot be written or read.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    #[error(transparent)]
    Jobs(#[from] JobsError),
    #[error(transparent)]
    S3(#[from] Box<S3Error>),
    #[error("cannot list {}", path.display())]
    List {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create {}", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{url}: not a {what}")]
    Decode {
        url: String,
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

impl From<S3Error> for FolderError {
    fn from(e: S3Error) -> Self {
        Self::S3(Box::new(e))
    }
}

/// The folder of plan `plan` in `store`.
pub struct PlanFolder<'a> {
    store: &'a Store,
    plan: Hash,
}

impl<'a> PlanFolder<'a> {
    pub fn new(store: &'a Store, plan: Hash) -> Self {
        Self { store, plan }
    }

    /// The folder's key under the store's root or prefix.
    fn key(&self, name: &str) -> String {
        match name {
            "" => format!("{CLUSTER}/{}", self.plan),
            _ => format!("{CLUSTER}/{}/{name}", self.plan),
        }
    }

    /// The folder: a directory, absolute (on S3: its URL, for messages and Slurm).
    pub fn path(&self) -> PathBuf {
        match self.store.s3() {
            Some(s3) => PathBuf::from(s3.url(&self.key(""))),
            None => location(self.store).join(self.key("")),
        }
    }

    /// Whether the tasks' output goes into the folder (a directory every node sees) rather
    /// than to the node running them.
    pub fn is_shared_directory(&self) -> bool {
        !self.store.is_s3()
    }

    /// Makes the folder, before anything is submitted (a directory store: Slurm writes
    /// into it).
    pub fn create(&self) -> Result<(), FolderError> {
        if self.store.is_s3() {
            return Ok(());
        }
        let path = self.path();
        std::fs::create_dir_all(&path).map_err(|source| FolderError::Create { path, source })
    }

    /// Records a submitted array.
    pub fn record_job(&self, array: &Array) -> Result<(), FolderError> {
        let record = JobRecord::of(array);
        match self.store.s3() {
            None => jobs::append(&self.path(), &record)?,
            Some(s3) => {
                let key = self.key(&format!("jobs/{:010}.json", record.first));
                s3.put(
                    &key,
                    serde_json::to_vec(&record)
                        .expect("a job record serialises")
                        .into(),
                )?;
            }
        }
        Ok(())
    }

    /// The recorded jobs, in submission order; none before the first is submitted.
    pub fn jobs(&self) -> Result<Vec<JobRecord>, FolderError> {
        let Some(s3) = self.store.s3() else {
            return Ok(jobs::read(&self.path())?);
        };
        let dir = self.key("jobs");
        let mut records = Vec::new();
        for name in s3.list_files(&dir)? {
            let key = format!("{dir}/{name}");
            records.push(self.decode(&key, "job record", &s3.get_required(&key)?)?);
        }
        Ok(records)
    }

    /// Records the summary of a run of shard `shard` (on a directory store, the worker's
    /// output already ends in it: nothing to write).
    pub fn record_summary(&self, shard: u32, summary: &RunSummary) -> Result<(), FolderError> {
        let Some(s3) = self.store.s3() else {
            return Ok(());
        };
        let at = chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ");
        let name = format!(
            "runs/{shard:06}/{at}-{}-{}.json",
            crate::log::event::host_name(),
            std::process::id()
        );
        let bytes = serde_json::to_vec(summary).expect("a run summary serialises");
        s3.put(&self.key(&name), bytes.into())?;
        Ok(())
    }

    /// The failed units that the latest run of each of the `shards` shards reported.
    pub fn failed_units(&self, shards: u32) -> Result<Vec<(String, String)>, FolderError> {
        Ok(self
            .latest_summaries(shards)?
            .into_values()
            .flat_map(|s| s.failed)
            .collect())
    }

    /// The summary of each shard's latest run, by shard, for the shards that reported one.
    pub fn latest_summaries(&self, shards: u32) -> Result<BTreeMap<u32, RunSummary>, FolderError> {
        let Some(s3) = self.store.s3() else {
            let dir = self.path();
            return Ok((0..shards)
                .filter_map(|i| Some((i, std::fs::read_to_string(shard_output(&dir, i)).ok()?)))
                .filter_map(|(i, out)| Some((i, last_summary(&out)?)))
                .collect());
        };
        let runs = self.key("runs");
        let mut latest: BTreeMap<u32, String> = Default::default();
        for key in s3.list_all(&runs)? {
            if let Some(shard) = key.split_once('/').and_then(|(s, _)| s.parse().ok()) {
                // Sorted: the last name of a shard is its latest run.
                latest.insert(shard, key);
            }
        }
        latest
            .into_iter()
            .map(|(shard, key)| {
                let key = format!("{runs}/{key}");
                Ok((shard, self.decode(&key, "run summary", &s3.get_required(&key)?)?))
            })
            .collect()
    }

    /// Where the output of shard `shard`'s task (task `index` of the array `job`, run on
    /// `node` when known) is: the plan's directory, or on S3 a file on the node.
    pub fn task_output(&self, shard: u32, job: &str, index: u32, node: Option<&str>) -> String {
        match self.store.is_s3() {
            false => {
                let out = shard_output(&self.path(), shard);
                match out.exists() {
                    true => out.display().to_string(),
                    false => format!(
                        "{} (never written; Slurm's own messages are in {})",
                        out.display(),
                        self.path().join("slurm.log").display()
                    ),
                }
            }
            true => format!(
                "{}:/tmp/ml2b-{}-{job}_{index}.log (on the node, unless a --slurm-arg --output said otherwise)",
                node.unwrap_or("<its node>"),
                self.plan
            ),
        }
    }

    /// The last `lines` lines of shard `shard`'s output, when it can be read here (a
    /// directory store); none on S3, where it stays on the node.
    pub fn output_tail(&self, shard: u32, lines: usize) -> Vec<String> {
        if self.store.is_s3() {
            return Vec::new();
        }
        let text = std::fs::read(shard_output(&self.path(), shard)).unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        all[all.len().saturating_sub(lines)..]
            .iter()
            .map(|l| l.chars().take(400).collect())
            .collect()
    }

    fn decode<T: serde::de::DeserializeOwned>(
        &self,
        key: &str,
        what: &'static str,
        bytes: &[u8],
    ) -> Result<T, FolderError> {
        serde_json::from_slice(bytes).map_err(|source| FolderError::Decode {
            url: self.store.s3().map_or_else(|| key.to_string(), |s3| s3.url(key)),
            what,
            source,
        })
    }
}

/// Where the nodes find `store`: its directory, absolute, or its URL.
pub fn location(store: &Store) -> PathBuf {
    let root = store.root();
    match store.is_s3() {
        true => root.to_path_buf(),
        false => std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf()),
    }
}

/// The plans with a folder in the store's `cluster/`, sorted.
pub fn submitted(store: &Store) -> Result<Vec<Hash>, FolderError> {
    let names = match store.s3() {
        Some(s3) => s3.list_dirs(CLUSTER)?,
        None => {
            let dir = store.root().join(CLUSTER);
            match std::fs::read_dir(&dir) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
                Err(source) => return Err(FolderError::List { path: dir, source }),
                Ok(entries) => entries
                    .filter_map(Result::ok)
                    .filter_map(|e| e.file_name().into_string().ok())
                    .collect(),
            }
        }
    };
    let mut plans: Vec<Hash> = names.iter().filter_map(|n| n.parse().ok()).collect();
    plans.sort();
    Ok(plans)
}

/// The output of shard `shard` in a plan's directory.
pub fn shard_output(dir: &Path, shard: u32) -> PathBuf {
    dir.join(format!("{shard}.out"))
}

/// The last run summary in a task's output.
fn last_summary(output: &str) -> Option<RunSummary> {
    output
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str::<RunSummary>(line).ok())
}
