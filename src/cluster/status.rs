//! Where a cluster plan stands, read from the store alone (the log, the plan object and the
//! plan's folder), never from Slurm: what `ml2b status` shows and what the submitter
//! reports when its arrays end.
//!
//! - planned: the plan's unit keys;
//! - committed: those the stage's log holds now (whoever committed them);
//! - failed: the failures that the latest run of each shard reported in its output's last
//!   summary line (`<store>/cluster/<P>/<shard>.out`); a failed unit is not committed, and
//!   a later run of its shard (or another plan) may commit it;
//! - jobs: the Slurm jobs recorded for the plan (`crate::cluster::jobs`).
//!
//! The plans of a store are the folders of `<store>/cluster/` named by a plan's hash: a
//! plan gets its folder when it is submitted.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::jobs::{self, JobRecord, JobsError};
use super::plan::{Plan, PlanError};
use super::slurm::{output_dir, shard_output};
use crate::log::{LogError, StageLog, View};
use crate::stages::RunSummary;
use crate::store::{Hash, Store};

/// A plan's progress.
#[derive(Clone, Debug, Serialize)]
pub struct PlanStatus {
    pub plan: Hash,
    pub stage: String,
    pub created_at: DateTime<Utc>,
    /// The host that planned and submitted it.
    pub host: String,
    pub shards: u32,
    pub planned: u64,
    pub committed: u64,
    /// (label, error) of each failed unit, as its shard's latest run reported it.
    pub failed: Vec<(String, String)>,
    pub jobs: Vec<JobRecord>,
}

/// A plan's status cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(transparent)]
    Jobs(#[from] JobsError),
    #[error("cannot list {}", path.display())]
    List {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl PlanStatus {
    /// The status of plan `hash`, counting committed units in `view` (its stage's log).
    pub fn of(store: &Store, hash: &Hash, view: &View) -> Result<Self, StatusError> {
        let plan = Plan::get(store, hash)?;
        let dir = output_dir(store.root(), hash);
        Ok(Self {
            plan: *hash,
            committed: plan.units.iter().filter(|k| view.contains(k)).count() as u64,
            planned: plan.units.len() as u64,
            failed: failed_units(&dir, plan.shards),
            jobs: jobs::read(&dir)?,
            stage: plan.stage,
            created_at: plan.created_at,
            host: plan.host,
            shards: plan.shards,
        })
    }

    /// The status of plan `hash`, reading its stage's log.
    pub fn read(store: &Store, hash: &Hash) -> Result<Self, StatusError> {
        let plan = Plan::get(store, hash)?;
        let view = StageLog::new(store, &plan.stage)?.view()?;
        Self::of(store, hash, &view)
    }

    /// Whether every planned unit is committed.
    pub fn done(&self) -> bool {
        self.committed == self.planned
    }
}

/// The status of every submitted plan of `store`, newest first.
pub fn all(store: &Store) -> Result<Vec<PlanStatus>, StatusError> {
    let mut views: std::collections::HashMap<String, View> = Default::default();
    let mut out = Vec::new();
    for hash in submitted(store)? {
        let stage = Plan::get(store, &hash)?.stage;
        if !views.contains_key(&stage) {
            let view = StageLog::new(store, &stage)?.view()?;
            views.insert(stage.clone(), view);
        }
        out.push(PlanStatus::of(store, &hash, &views[&stage])?);
    }
    out.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.plan.cmp(&b.plan)));
    Ok(out)
}

/// The plans with a folder in `<store>/cluster/`.
pub fn submitted(store: &Store) -> Result<Vec<Hash>, StatusError> {
    let dir = store.root().join("cluster");
    let entries = match std::fs::read_dir(&dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        other => other.map_err(|source| StatusError::List {
            path: dir.clone(),
            source,
        })?,
    };
    let mut plans: Vec<Hash> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    plans.sort();
    Ok(plans)
}

/// The failed units that each shard's latest run reports (the last summary line of its
/// output in the plan folder `dir`).
pub fn failed_units(dir: &Path, shards: u32) -> Vec<(String, String)> {
    (0..shards)
        .filter_map(|i| std::fs::read_to_string(shard_output(dir, i)).ok())
        .filter_map(|out| last_summary(&out))
        .flat_map(|summary| summary.failed)
        .collect()
}

/// The last run summary in a task's output.
fn last_summary(output: &str) -> Option<RunSummary> {
    output
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str::<RunSummary>(line).ok())
}
