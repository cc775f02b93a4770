//! What to run, resolved: the settings the pipeline and its engines take — the
//! selection of a benchmark, the models' entries, the agent, the sandbox, the engine.
//!
//! `crate::settings` builds these from the command line, once, at the top (each
//! `resolve`, which stays there, beside the clap types it reads); everything below the
//! commands receives them and never sees `crate::cli`. A leaf of the run's layers: it
//! names the stages' own settings (`aide::Config`, `Shard`) and the sandbox's
//! [`Limits`], nothing above them.

use std::path::PathBuf;
use std::time::Duration;

use crate::events::Format;
use crate::providers::budget::LimitOverrides;
use crate::sandbox::Limits;
use crate::stages::Shard;
use crate::stages::generate::{aide, react};
use crate::store::Hash;

/// A value the user gave that cannot be used (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

impl crate::error::IsInputError for InputError {
    fn is_input_error(&self) -> bool {
        true
    }
}
crate::error::input_error!(InputError);

/// The sandbox backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// bubblewrap namespaces and rlimits on this machine.
    Local,
    /// One container per run from ml2b's runtime image.
    Docker,
}

/// A run's network, as asked: none, or the allowlisting proxy with the domains of
/// `manifests/network.toml` (ML2B's when it is absent) and those asked for besides. The
/// pipeline resolves it against the benchmark into a `sandbox::Network`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetworkSettings {
    pub proxy: bool,
    /// Domain suffixes allowed besides the manifest's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
}

impl NetworkSettings {
    /// Whether this is the default (no network), which plans and keys leave out.
    pub fn is_none(&self) -> bool {
        *self == Self::default()
    }
}

/// Where solutions run: the backend, the limits of one run, the network, and runs at once.
/// The prompt states these same limits.
#[derive(Clone, Debug)]
pub struct SandboxSettings {
    pub backend: BackendKind,
    pub limits: Limits,
    pub network: NetworkSettings,
    /// A folder of pretrained weights every run sees read-only (`--model-cache`).
    pub model_cache: Option<PathBuf>,
    /// The GPUs each run gets (`--gpus`).
    pub gpus: Option<crate::sandbox::Gpus>,
    pub jobs: usize,
    /// How `jobs` was chosen for this machine, when `-j` was not given (said once).
    pub jobs_chosen: Option<String>,
}

/// Which competitions and languages a stage covers, of which benchmark.
#[derive(Clone, Debug)]
pub struct Selection {
    /// The benchmark root (`manifests/`, `data/`).
    pub root: PathBuf,
    /// Competition ids (empty: all).
    pub competitions: Vec<String>,
    /// Language codes (empty: all).
    pub languages: Vec<String>,
}

/// The agent of LLM models.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentSettings {
    OneShot,
    Aide(aide::Config),
    React(react::Config),
    /// An external agent: its name in `manifests/agents.toml`.
    External(String),
}

/// `ml2b stage translate-validate`.
#[derive(Clone, Debug)]
pub struct TranslateValidateSettings {
    pub selection: Selection,
}

/// `ml2b stage generate`: one model over a selection.
#[derive(Clone, Debug)]
pub struct GenerateSettings {
    pub selection: Selection,
    /// A model of `manifests/models.toml`.
    pub model: String,
    /// Submission formats (never empty).
    pub formats: Vec<Format>,
    /// Samples per (competition, language, format).
    pub seeds: u32,
    /// Limit per HTTP attempt.
    pub request_timeout: Duration,
    /// Overrides the model's `max_tokens`.
    pub max_tokens: Option<u32>,
    /// Override the model's request limits (`max_in_flight`, per minute).
    pub requests: LimitOverrides,
    /// Processes asking the model at once with these limits (a cluster plan's tasks
    /// running together): each takes this share of them. 1 here.
    pub request_shares: u32,
    /// Also pairs whose translation failed its gate.
    pub force: bool,
    pub agent: AgentSettings,
    /// Where the aide agent's attempts run; its limits are the ones the prompt states.
    pub sandbox: SandboxSettings,
    /// Where the searches run (a searching agent's may go to Slurm).
    pub engine: EngineSettings,
    /// Only this shard of the planned units (a cluster worker's).
    pub shard: Option<Shard>,
    /// Set when the run must stop (a cluster worker's SIGTERM).
    pub stop: Option<&'static std::sync::atomic::AtomicBool>,
}

/// `ml2b translate`.
#[derive(Clone, Debug)]
pub struct TranslateSettings {
    pub selection: Selection,
    /// The models of `manifests/models.toml` of each leg.
    pub model: String,
    pub back_model: String,
    /// One model may translate both ways.
    pub same_model_both_ways: bool,
    /// Limit per HTTP attempt.
    pub request_timeout: Duration,
    /// Overrides the models' `max_tokens`.
    pub max_tokens: Option<u32>,
    /// Override the models' request limits.
    pub requests: LimitOverrides,
}

/// `ml2b stage execute`.
#[derive(Clone, Debug)]
pub struct ExecuteSettings {
    pub root: PathBuf,
    pub sandbox: SandboxSettings,
    /// Only code generated after the generate segment with this hash.
    pub since: Option<Hash>,
    /// Where the units run.
    pub engine: EngineSettings,
    /// Only this shard of the planned units (a cluster worker's).
    pub shard: Option<Shard>,
    /// Set when the run must stop (a cluster worker's SIGTERM).
    pub stop: Option<&'static std::sync::atomic::AtomicBool>,
}

/// Where a stage's units run (`--engine`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineSettings {
    Local,
    Slurm(SlurmSettings),
}

/// `--engine slurm`: how the job array is cut and submitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlurmSettings {
    /// Shards of the plan; none: 8 × `max_running`, at most one per planned unit.
    pub shards: Option<u32>,
    /// Array tasks at once.
    pub max_running: u32,
    /// Passed to sbatch verbatim.
    pub sbatch_args: Vec<String>,
    /// Wait for the array to end (else return once submitted).
    pub wait: bool,
}

/// `ml2b stage grade`.
#[derive(Clone, Debug)]
pub struct GradeSettings {
    pub root: PathBuf,
    /// Only runs executed after the execute segment with this hash.
    pub since: Option<Hash>,
}

/// `ml2b stage analyze`.
#[derive(Clone, Debug)]
pub struct AnalyzeSettings {
    pub root: PathBuf,
    /// Tables of `queries/` (empty: all); each one exists.
    pub tables: Vec<String>,
}

/// What `ml2b run` and `ml2b baselines` run: generate with each entry's model over its
/// selection, then execute and grade everything generated.
#[derive(Clone, Debug)]
pub struct BenchmarkSettings {
    /// Everything the run covers: translate-validate checks it (the entries' selections
    /// lie inside it).
    pub selection: Selection,
    pub entries: Vec<Entry>,
    pub seeds: u32,
    pub agent: AgentSettings,
    pub sandbox: SandboxSettings,
    /// Where execute's units (and a searching agent's searches) run; one-shot generate and
    /// grade run here.
    pub engine: EngineSettings,
    /// Check the environment before the first unit (`crate::preflight`).
    pub preflight: bool,
    /// Override every model's request limits.
    pub requests: LimitOverrides,
}

/// One model over a selection, in some formats.
#[derive(Clone, Debug)]
pub struct Entry {
    pub model: String,
    pub selection: Selection,
    pub formats: Vec<Format>,
}

impl SandboxSettings {
    /// A backend, the wall-clock and memory limits of a run, and runs at once.
    pub fn of(backend: BackendKind, timeout_s: u64, memory_bytes: u64, jobs: usize) -> Self {
        Self {
            backend,
            limits: Limits {
                wall: Duration::from_secs(timeout_s),
                memory_bytes,
                ..Limits::default()
            },
            network: NetworkSettings::default(),
            model_cache: None,
            gpus: None,
            jobs,
            jobs_chosen: None,
        }
    }

    /// Runs at once on this machine at `memory_bytes` each: as many as its cores hold at
    /// [`crate::sandbox::CPUS`] cores a run (every run's numeric libraries start that many
    /// threads: more runs than that would oversubscribe the cores, and OpenMP's spinning
    /// threads then slow every run many times over, into timeouts that are the machine's
    /// fault, not the code's), and as fit in the memory available now (`MemAvailable`; the
    /// limit is on address space, which a run's resident memory stays under, so this errs on
    /// the safe side), at least 1; and a line saying so.
    pub fn machine_jobs(memory_bytes: u64) -> (usize, String) {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let per_run = crate::sandbox::CPUS as usize;
        let held = (cores / per_run).max(1);
        let available = mem_available();
        let fit = available.map(|a| usize::try_from(a / memory_bytes.max(1)).unwrap_or(usize::MAX));
        let jobs = fit.map_or(held, |f| f.min(held)).max(1);
        let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
        let memory = match available {
            Some(a) => format!("{:.1} GiB available", gib(a)),
            None => "memory available unknown".into(),
        };
        let why = format!(
            "-j {jobs}: {cores} cores ({per_run} a run), {memory}, {:.1} GiB per run (--jobs to choose)",
            gib(memory_bytes)
        );
        (jobs, why)
    }
}

/// `MemAvailable` of `/proc/meminfo`, in bytes (`None` where there is none).
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl Selection {
    /// Checks that every competition and language it names exists in `bench`: a misspelt
    /// one is a usage error naming it, never an empty selection.
    pub fn check(&self, bench: &crate::competition::Benchmark) -> Result<(), InputError> {
        bench.select(&self.competitions).map_err(InputError)?;
        let known: Vec<&str> = bench.languages.all().iter().map(|l| l.code.as_str()).collect();
        match self.languages.iter().find(|code| !known.contains(&code.as_str())) {
            Some(code) => Err(InputError(format!(
                "no language `{code}` in {} (known: {})",
                bench.root.join("manifests/languages.toml").display(),
                known.join(", ")
            ))),
            None => Ok(()),
        }
    }
}

impl AgentSettings {
    /// Whether the agent searches (aide, react): its units are searches with validation
    /// runs, heavy enough for the cluster; one-shot units are a request each.
    pub fn searches(&self) -> bool {
        *self != Self::OneShot
    }
}

impl BenchmarkSettings {
    /// generate's settings for one entry.
    pub fn generate(&self, entry: &Entry) -> GenerateSettings {
        GenerateSettings {
            selection: entry.selection.clone(),
            model: entry.model.clone(),
            formats: entry.formats.clone(),
            seeds: self.seeds,
            request_timeout: Duration::from_secs(600),
            max_tokens: None,
            requests: self.requests,
            request_shares: 1,
            force: false,
            agent: self.agent.clone(),
            sandbox: self.sandbox.clone(),
            // A searching agent's searches go where execute's units go; one-shot requests
            // are made here.
            engine: match self.agent.searches() {
                true => self.engine.clone(),
                false => EngineSettings::Local,
            },
            shard: None,
            stop: None,
        }
    }

    /// execute's settings: every generated program not yet run.
    pub fn execute(&self) -> ExecuteSettings {
        ExecuteSettings {
            root: self.selection.root.clone(),
            sandbox: self.sandbox.clone(),
            since: None,
            engine: self.engine.clone(),
            shard: None,
            stop: None,
        }
    }

    /// grade's settings: every execution not yet graded.
    pub fn grade(&self) -> GradeSettings {
        GradeSettings {
            root: self.selection.root.clone(),
            since: None,
        }
    }
}
