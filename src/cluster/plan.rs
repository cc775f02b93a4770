//! A frozen plan: what one `--engine slurm` submission asked for, stored as an object of the
//! store (canonical JSON), named by its hash, read back by every worker.
//!
//! The plan holds the stage's settings as values (never a command line to re-parse), the
//! unit keys that were planned and uncommitted when it was made, and the number of shards.
//! Workers run the stage from those settings, restricted to their shard; `units` is what
//! the submitter counts progress against.
//!
//! Versions: schema 1 plans are execute plans (`"execute": {…}`); schema 2 adds generate
//! plans (`"generate": {…}` in its place, for a searching agent). The layout of an execute
//! plan is unchanged, so this ml2b writes 2 and reads both.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::arrays::array_cap;
use crate::config::{
    AgentSettings, BackendKind, EngineSettings, ExecuteSettings, GenerateSettings, NetworkSettings,
    SandboxSettings, Selection,
};
use crate::events::Format;
use crate::providers::budget::LimitOverrides;
use crate::stages::Shard;
use crate::store::{Hash, ObjectError, Store};

/// The plan format's version.
pub const PLAN_SCHEMA: u32 = 2;

/// One submission's frozen plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub schema: u32,
    /// The stage its units belong to (`execute` or `generate`).
    pub stage: String,
    /// The stage's settings: `"execute": {…}` or `"generate": {…}`.
    #[serde(flatten)]
    pub settings: StagePlan,
    /// Array tasks; unit key `k` is in shard `first 8 bytes of k mod shards`.
    pub shards: u32,
    /// The planned, uncommitted unit keys when the plan was made.
    pub units: Vec<Hash>,
    /// Who made it, when (so that two submissions of one selection are two plans).
    pub host: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

/// The settings of the stage a plan runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StagePlan {
    Execute(ExecutePlan),
    Generate(GeneratePlan),
}

/// Where a plan's code runs: [`SandboxSettings`] as values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SandboxPlan {
    pub backend: BackendKind,
    pub wall_seconds: u64,
    pub memory_bytes: u64,
    pub jobs: usize,
    /// The network asked for (left out when none, as plans before it).
    #[serde(default, skip_serializing_if = "NetworkSettings::is_none")]
    pub network: NetworkSettings,
    /// The model cache asked for (left out when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_cache: Option<PathBuf>,
    /// The GPUs each run asks for (left out when none); each task asks Slurm for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<crate::sandbox::Gpus>,
}

impl Plan {
    /// The GPUs each task's runs ask for: what the task asks Slurm for (`--gres=gpu:N`).
    pub fn gpus(&self) -> Option<crate::sandbox::Gpus> {
        match &self.settings {
            StagePlan::Execute(e) => e.sandbox.gpus,
            StagePlan::Generate(g) => g.sandbox.gpus,
        }
    }
}

impl SandboxPlan {
    fn of(s: &SandboxSettings) -> Self {
        Self {
            backend: s.backend,
            wall_seconds: s.limits.wall.as_secs(),
            memory_bytes: s.limits.memory_bytes,
            jobs: s.jobs,
            network: s.network.clone(),
            model_cache: s.model_cache.clone(),
            gpus: s.gpus,
        }
    }

    fn settings(&self) -> SandboxSettings {
        SandboxSettings {
            network: self.network.clone(),
            model_cache: self.model_cache.clone(),
            gpus: self.gpus,
            ..SandboxSettings::of(self.backend, self.wall_seconds, self.memory_bytes, self.jobs)
        }
    }
}

/// `ml2b stage execute`'s settings, as values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExecutePlan {
    /// The benchmark root, absolute.
    pub root: PathBuf,
    #[serde(flatten)]
    pub sandbox: SandboxPlan,
    pub since: Option<Hash>,
}

/// `ml2b stage generate`'s settings (a searching agent's), as values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GeneratePlan {
    /// The benchmark root, absolute.
    pub root: PathBuf,
    pub competitions: Vec<String>,
    pub languages: Vec<String>,
    pub model: String,
    pub formats: Vec<Format>,
    pub seeds: u32,
    pub request_timeout_seconds: u64,
    pub max_tokens: Option<u32>,
    pub force: bool,
    pub agent: AgentSettings,
    #[serde(flatten)]
    pub sandbox: SandboxPlan,
    /// The request limits the submitter gave (left out when none, as plans before them).
    #[serde(default, skip_serializing_if = "is_default")]
    pub requests: LimitOverrides,
    /// Tasks that ask the model at once, sharing its limits (absent in older plans: 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub request_shares: u32,
}

fn is_default(l: &LimitOverrides) -> bool {
    *l == LimitOverrides::default()
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// What one shard of a plan runs: its stage's settings.
#[derive(Clone, Debug)]
pub enum ShardSettings {
    Execute(ExecuteSettings),
    Generate(GenerateSettings),
}

/// A plan that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("plan {hash} is not in the store")]
    Object {
        hash: Hash,
        #[source]
        source: ObjectError,
    },
    #[error("object {hash} is not a plan")]
    Decode {
        hash: Hash,
        #[source]
        source: serde_json::Error,
    },
    #[error("plan {hash} has schema version {found}; this ml2b reads versions 1 to {PLAN_SCHEMA}")]
    Schema { hash: Hash, found: u32 },
    #[error("plan {hash} has {shards} shards; there is no shard {shard}")]
    NoShard { hash: Hash, shards: u32, shard: u32 },
}

impl Plan {
    /// A plan made here and now of `settings` over `units` cut into `shards`.
    fn new(stage: &str, settings: StagePlan, units: Vec<Hash>, shards: u32) -> Self {
        Self {
            schema: PLAN_SCHEMA,
            stage: stage.into(),
            settings,
            shards,
            units,
            host: crate::log::event::host_name(),
            created_at: chrono::Utc::now(),
        }
    }

    /// The plan of an execute run of `s` over `units` cut into `shards`.
    pub fn execute(s: &ExecuteSettings, units: Vec<Hash>, shards: u32) -> Self {
        let settings = StagePlan::Execute(ExecutePlan {
            root: absolute(&s.root),
            sandbox: SandboxPlan::of(&s.sandbox),
            since: s.since,
        });
        Self::new("execute", settings, units, shards)
    }

    /// The plan of a generate run of `s` (a searching agent's) over `units` cut into
    /// `shards`.
    pub fn generate(s: &GenerateSettings, units: Vec<Hash>, shards: u32) -> Self {
        let settings = StagePlan::Generate(GeneratePlan {
            root: absolute(&s.selection.root),
            competitions: s.selection.competitions.clone(),
            languages: s.selection.languages.clone(),
            model: s.model.clone(),
            formats: s.formats.clone(),
            seeds: s.seeds,
            request_timeout_seconds: s.request_timeout.as_secs(),
            max_tokens: s.max_tokens,
            force: s.force,
            agent: s.agent.clone(),
            sandbox: SandboxPlan::of(&s.sandbox),
            requests: s.requests,
            request_shares: s.request_shares,
        });
        Self::new("generate", settings, units, shards)
    }

    /// Stores the plan; its hash names it.
    pub fn put(&self, store: &Store) -> Result<Hash, ObjectError> {
        let bytes = serde_json::to_vec(self).expect("a plan serialises");
        store.objects().put(&bytes)
    }

    /// Reads the plan `hash` (verified like every object).
    pub fn get(store: &Store, hash: &Hash) -> Result<Self, PlanError> {
        let bytes = store
            .objects()
            .get(hash)
            .map_err(|source| PlanError::Object { hash: *hash, source })?;
        let plan: Self =
            serde_json::from_slice(&bytes).map_err(|source| PlanError::Decode { hash: *hash, source })?;
        if !(1..=PLAN_SCHEMA).contains(&plan.schema) {
            return Err(PlanError::Schema {
                hash: *hash,
                found: plan.schema,
            });
        }
        Ok(plan)
    }

    /// The settings of shard `index` (the plan `hash`): its stage's, run here on the shard.
    pub fn shard_settings(&self, hash: &Hash, index: u32) -> Result<ShardSettings, PlanError> {
        if index >= self.shards {
            return Err(PlanError::NoShard {
                hash: *hash,
                shards: self.shards,
                shard: index,
            });
        }
        let shard = Some(Shard {
            index,
            count: self.shards,
        });
        Ok(match &self.settings {
            StagePlan::Execute(e) => ShardSettings::Execute(ExecuteSettings {
                root: e.root.clone(),
                sandbox: e.sandbox.settings(),
                since: e.since,
                engine: EngineSettings::Local,
                shard,
                stop: None,
            }),
            StagePlan::Generate(g) => ShardSettings::Generate(GenerateSettings {
                selection: Selection {
                    root: g.root.clone(),
                    competitions: g.competitions.clone(),
                    languages: g.languages.clone(),
                },
                model: g.model.clone(),
                formats: g.formats.clone(),
                seeds: g.seeds,
                request_timeout: Duration::from_secs(g.request_timeout_seconds),
                max_tokens: g.max_tokens,
                requests: g.requests,
                request_shares: g.request_shares,
                force: g.force,
                agent: g.agent.clone(),
                sandbox: g.sandbox.settings(),
                engine: EngineSettings::Local,
                shard,
                stop: None,
            }),
        })
    }

    /// How many of the plan's units shard `index` holds.
    pub fn shard_len(&self, index: u32) -> usize {
        let shard = Shard {
            index,
            count: self.shards,
        };
        self.units.iter().filter(|k| shard.holds(k)).count()
    }
}

/// `path`, absolute (the nodes run elsewhere).
pub(crate) fn absolute(path: &std::path::Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Shards for `units` planned units: `wanted` (cut into several arrays beyond one array's
/// cap), else 8 × `max_running` within one array of a cluster whose `MaxArraySize` is
/// `max_array_size`; at most one per unit, at least one.
pub fn shard_count(wanted: Option<u32>, max_running: u32, units: usize, max_array_size: u32) -> u32 {
    let cap = u32::try_from(units).unwrap_or(u32::MAX).max(1);
    let default = || max_running.saturating_mul(8).min(array_cap(max_array_size));
    wanted.unwrap_or_else(default).clamp(1, cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_default_to_eight_per_running_task_and_never_exceed_the_units() {
        assert_eq!(shard_count(None, 4, 1000, 1001), 32);
        assert_eq!(shard_count(None, 4, 5, 1001), 5);
        assert_eq!(shard_count(Some(7), 4, 1000, 1001), 7);
        assert_eq!(shard_count(Some(7), 4, 0, 1001), 1);
        // The default stays within one array; an explicit count may span several.
        assert_eq!(shard_count(None, 500, 100_000, 1001), 1000);
        assert_eq!(shard_count(Some(2500), 4, 100_000, 1001), 2500);
    }

    #[test]
    fn a_plan_round_trips_through_the_store_and_every_unit_has_one_shard() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let units: Vec<Hash> = (0..100u32).map(|i| Hash::of(&i.to_le_bytes())).collect();
        let settings = ExecuteSettings {
            root: dir.path().to_path_buf(),
            sandbox: SandboxSettings::of(BackendKind::Local, 60, 1 << 30, 2),
            since: None,
            engine: EngineSettings::Local,
            shard: None,
            stop: None,
        };
        let plan = Plan::execute(&settings, units.clone(), 7);
        // An execute plan keeps schema 1's layout.
        let json = serde_json::to_value(&plan).unwrap();
        let keys: Vec<&String> = json["execute"].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["backend", "jobs", "memory_bytes", "root", "since", "wall_seconds"]
        );
        let hash = plan.put(&store).unwrap();
        let read = Plan::get(&store, &hash).unwrap();
        assert_eq!(read, plan);
        assert_eq!((0..7).map(|i| read.shard_len(i)).sum::<usize>(), units.len());
        let ShardSettings::Execute(s) = read.shard_settings(&hash, 3).unwrap() else {
            panic!("an execute plan");
        };
        assert_eq!(s.shard, Some(Shard { index: 3, count: 7 }));
        assert_eq!(s.sandbox.limits.wall.as_secs(), 60);
        let none = read.shard_settings(&hash, 7).unwrap_err().to_string();
        assert!(none.contains("has 7 shards; there is no shard 7"), "{none}");
        let missing = Plan::get(&store, &Hash::of(b"nothing")).unwrap_err().to_string();
        assert!(missing.contains("is not in the store"), "{missing}");
    }

    /// A plan written by the ml2b that wrote schema 1 (execute plans only) reads as an
    /// execute plan.
    #[test]
    fn a_schema_1_plan_reads() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let v1 = r#"{"schema":1,"stage":"execute","execute":{"root":"/bench","backend":"local","wall_seconds":60,"memory_bytes":1073741824,"jobs":2,"since":null},"shards":2,"units":[],"host":"login1","created_at":"2026-12-02T20:00:00Z"}"#;
        let hash = store.objects().put(v1.as_bytes()).unwrap();
        let plan = Plan::get(&store, &hash).unwrap();
        assert_eq!(plan.schema, 1);
        let ShardSettings::Execute(s) = plan.shard_settings(&hash, 1).unwrap() else {
            panic!("an execute plan");
        };
        assert_eq!(s.root, PathBuf::from("/bench"));
        assert_eq!(s.shard, Some(Shard { index: 1, count: 2 }));
    }

    #[test]
    fn a_generate_plan_round_trips_with_its_agent() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let settings = GenerateSettings {
            selection: Selection {
                root: dir.path().to_path_buf(),
                competitions: vec!["toy".into()],
                languages: vec!["en".into(), "kk".into()],
            },
            model: "fake".into(),
            formats: vec![Format::Modular],
            seeds: 2,
            request_timeout: Duration::from_secs(30),
            max_tokens: Some(100),
            requests: LimitOverrides {
                max_in_flight: Some(8),
                ..LimitOverrides::default()
            },
            request_shares: 4,
            force: true,
            agent: AgentSettings::Aide(crate::stages::generate::aide::Config::AIDE),
            sandbox: SandboxSettings::of(BackendKind::Local, 60, 1 << 30, 2),
            engine: EngineSettings::Local,
            shard: None,
            stop: None,
        };
        let plan = Plan::generate(&settings, vec![Hash::of(b"unit")], 1);
        let hash = plan.put(&store).unwrap();
        let read = Plan::get(&store, &hash).unwrap();
        assert_eq!(read, plan);
        let ShardSettings::Generate(s) = read.shard_settings(&hash, 0).unwrap() else {
            panic!("a generate plan");
        };
        assert_eq!(s.agent, settings.agent);
        assert_eq!(
            (s.model.as_str(), s.seeds, s.max_tokens, s.force),
            ("fake", 2, Some(100), true)
        );
        assert_eq!(s.selection.languages, settings.selection.languages);
        assert_eq!(s.shard, Some(Shard { index: 0, count: 1 }));
        assert_eq!((s.requests, s.request_shares), (settings.requests, 4));
    }
}
