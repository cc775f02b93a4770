//! Where a cluster plan stands, read from the store (the log, the plan object and the
//! plan's folder): what `ml2b status` shows and what the submitter reports when its arrays
//! end.
//!
//! - planned: the plan's unit keys;
//! - committed: those the stage's log holds now (whoever committed them);
//! - failed: the failures that the latest run of each shard reported (its summary in the
//!   plan's folder, `crate::cluster::folder`); a failed unit is not committed, and a later
//!   run of its shard (or another plan) may commit it;
//! - jobs: the Slurm jobs recorded for the plan (`crate::cluster::jobs`);
//! - tasks: how the tasks of its ended arrays ended (`crate::cluster::tasks`): the one
//!   part asked of Slurm, filled in by `ml2b status --plan` alone.
//!
//! The plans of a store are the folders of its `cluster/` named by a plan's hash: a plan
//! gets its folder when it is submitted. All of it reads alike from a directory and from S3.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::arrays::Array;
use super::folder::{self, FolderError, PlanFolder};
use super::jobs::JobRecord;
use super::plan::{Plan, PlanError};
use super::tasks::TaskReport;
use crate::log::{LogError, StageLog, View};
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
    /// How the tasks ended, once the arrays have (`ml2b status --plan` asks Slurm).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TaskReport>,
}

/// A plan's status cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(transparent)]
    Folder(#[from] FolderError),
}

impl PlanStatus {
    /// The status of plan `hash`, counting committed units in `view` (its stage's log).
    pub fn of(store: &Store, hash: &Hash, view: &View) -> Result<Self, StatusError> {
        let plan = Plan::get(store, hash)?;
        let folder = PlanFolder::new(store, *hash);
        Ok(Self {
            plan: *hash,
            committed: plan.units.iter().filter(|k| view.contains(k)).count() as u64,
            planned: plan.units.len() as u64,
            failed: folder.failed_units(plan.shards)?,
            jobs: folder.jobs()?,
            tasks: None,
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

    /// The arrays the plan was submitted as.
    pub fn arrays(&self) -> Vec<Array> {
        self.jobs
            .iter()
            .map(|j| Array {
                job_id: j.job_id.clone(),
                first: j.first,
                shards: j.shards,
            })
            .collect()
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
    for hash in folder::submitted(store)? {
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
