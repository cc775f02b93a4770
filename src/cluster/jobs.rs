//! The Slurm jobs a plan was submitted as, recorded by the submitter beside the tasks'
//! outputs so that `ml2b status --plan P` can name them without asking Slurm.
//!
//! On a directory store: `<store>/cluster/<P>/jobs.jsonl`, one JSON object per submitted
//! array, appended
//! (`O_APPEND`, one write per line) in submission order:
//! ```text
//! {"job_id":"41","first":0,"shards":1000,"submitted_at":"2026-12-02T20:00:00Z","host":"login1"}
//! {"job_id":"42","first":1000,"shards":500,"submitted_at":"2026-12-02T20:00:01Z","host":"login1"}
//! ```
//! Invariant: a line is written only after `sbatch` accepted its array, so every job id
//! listed exists (or existed) in Slurm; a plan whose folder lacks the file was planned but
//! never submitted. On S3 each record is a key of its own (`crate::cluster::folder`).

use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::arrays::Array;

/// The file's name in a plan's folder.
pub const JOBS_FILE: &str = "jobs.jsonl";

/// One submitted array of a plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRecord {
    pub job_id: String,
    /// Its first shard; it runs `first..first + shards`.
    pub first: u32,
    pub shards: u32,
    pub submitted_at: DateTime<Utc>,
    /// The submitting host.
    pub host: String,
}

/// The jobs file cannot be written or read.
#[derive(Debug, thiserror::Error)]
pub enum JobsError {
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}, line {line}: not a job record", path.display())]
    Decode {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
}

impl JobRecord {
    /// The record of `array`, submitted now from this host.
    pub fn of(array: &Array) -> Self {
        Self {
            job_id: array.job_id.clone(),
            first: array.first,
            shards: array.shards,
            submitted_at: Utc::now(),
            host: crate::log::event::host_name(),
        }
    }
}

/// Appends `record` to the jobs file of the plan directory `dir`.
pub fn append(dir: &Path, record: &JobRecord) -> Result<(), JobsError> {
    let path = dir.join(JOBS_FILE);
    let mut text = serde_json::to_string(record).expect("a job record serialises");
    text.push('\n');
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()
    };
    write().map_err(|source| JobsError::Write {
        path: path.clone(),
        source,
    })
}

/// The records of the plan folder `dir`, in submission order; none when it has no file.
pub fn read(dir: &Path) -> Result<Vec<JobRecord>, JobsError> {
    let path = dir.join(JOBS_FILE);
    let text = match std::fs::read_to_string(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        other => other.map_err(|source| JobsError::Read {
            path: path.clone(),
            source,
        })?,
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|source| JobsError::Decode {
                path: path.clone(),
                line: i + 1,
                source,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_append_in_order_and_a_bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), vec![]);
        for (job, first) in [("41", 0), ("42", 1000)] {
            let array = Array {
                job_id: job.into(),
                first,
                shards: 1000,
            };
            append(dir.path(), &JobRecord::of(&array)).unwrap();
        }
        let jobs = read(dir.path()).unwrap();
        let ids: Vec<(&str, u32)> = jobs.iter().map(|j| (j.job_id.as_str(), j.first)).collect();
        assert_eq!(ids, vec![("41", 0), ("42", 1000)]);
        std::fs::write(dir.path().join(JOBS_FILE), "{\"job_id\":\"41\"}\nnot json\n").unwrap();
        let err = read(dir.path()).unwrap_err().to_string();
        assert!(err.contains("jobs.jsonl, line 1: not a job record"), "{err}");
    }
}
