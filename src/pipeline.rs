//! The pipeline below the commands: runs stages from resolved settings ([`crate::config`]).
//!
//! ```text
//! config ──► Pipeline ──► benchmark (loaded once per root), sandbox backend, Python
//!                  │      environment, responder (built here)
//!                  ├──► stages::run_stage(stage) for translate_validate → generate →
//!                  │    execute → grade → analyze, each over the same store
//!                  └──► the engine `config` names for generate and execute: here, or
//!                       Slurm (crate::cluster::engine, handed the units planned here)
//! ```
//! `ml2b run`, `ml2b baselines` and `ml2b stage …` are thin callers of it; so is anything
//! else that drives stages from code (a cluster worker). The pipeline never prints: what
//! the user should see goes through [`Progress`], and results come back as run summaries
//! ([`Ran`], wherever a stage ran). Nothing below it calls back into it.
//!
//! Invariants: the limits a prompt states are the [`Limits`](crate::sandbox::Limits) the
//! sandbox applies ([`SandboxSettings`]), so `--timeout` and `--memory` are never told to
//! the model otherwise than they are enforced; each stage skips what the store already
//! holds, so running a selection again appends only what is missing; every stage of one
//! pipeline reads the same load of the benchmark.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::cluster::Plan;
use crate::cluster::engine::{self, ClusterError, ClusterRun};
use crate::competition::Benchmark;
use crate::config::{
    AgentSettings, AnalyzeSettings, BackendKind, BenchmarkSettings, EngineSettings, ExecuteSettings,
    GenerateSettings, GradeSettings, InputError, NetworkSettings, SandboxSettings, Selection, SlurmSettings,
    TranslateSettings, TranslateValidateSettings,
};
use crate::error::IsInputError;
use crate::events::Provider;
use crate::events::{Execution, Generation, TranslationCheck};
use crate::log::{EventBody, LogError, StageLog};
use crate::manifest::agents::{self, AgentsManifest};
use crate::manifest::network::NetworkManifest;
use crate::manifest::{ManifestError, Model, Models};
use crate::progress::Progress;
use crate::providers::budget::{Budgets, LimitOverrides, RequestLimits};
use crate::providers::http::is_floating_alias;
use crate::providers::{Responder, client_config};
use crate::sandbox::network::{DEFAULT_DOMAINS, DEFAULT_PORTS};
use crate::sandbox::{Allowlist, Backend, GpuSet, Limits, ModelCache, Network, Proxy, SandboxError, pyenv};
use crate::stages::analyze::Analyze;
use crate::stages::execute::Execute;
use crate::stages::generate::aide::{Aide, trial::Trials};
use crate::stages::generate::external::{self, External};
use crate::stages::generate::react::{React, python::Python};
use crate::stages::generate::{Generate, prompt};
use crate::stages::grade::GradeStage;
use crate::stages::requests::Requests;
use crate::stages::solution::Runner;
use crate::stages::translate::{Leg, Translate, Written, same_model};
use crate::stages::translate_validate::TranslateValidate;
use crate::stages::{RunOptions, RunSummary, Stage, StageError, rederive, run_stage};
use crate::store::{Hash, Store};

/// Why the pipeline could not run a stage (a unit failing is not this: it is in the
/// stage's [`RunSummary`]).
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error(transparent)]
    Stage(#[from] StageError),
    #[error(transparent)]
    Log(#[from] LogError),
    #[error("could not start the async runtime")]
    Runtime(#[source] std::io::Error),
    #[error("{} translation checks could not run:\n  {}", .0.len(), .0.join("\n  "))]
    TranslationChecks(Vec<String>),
    #[error("the cluster run of {stage} failed")]
    Cluster {
        stage: &'static str,
        #[source]
        source: Box<ClusterError>,
    },
    #[error(transparent)]
    Preflight(#[from] crate::preflight::PreflightError),
}

impl IsInputError for PipelineError {
    fn is_input_error(&self) -> bool {
        match self {
            Self::Input(e) => e.is_input_error(),
            Self::Manifest(e) => e.is_input_error(),
            Self::Sandbox(e) => e.is_input_error(),
            Self::Stage(e) => e.is_input_error(),
            Self::Log(_)
            | Self::Runtime(_)
            | Self::TranslationChecks(_)
            | Self::Preflight(_)
            | Self::Cluster { .. } => false,
        }
    }
}
crate::error::input_error!(PipelineError);

/// Units in flight at once, per stage (none of it changes results). Generate's follow
/// the model's request budget ([`Pipeline::generate`]).
const GRADE_CONCURRENCY: usize = 2;

/// Runs stages over one store.
pub struct Pipeline<'a> {
    pub store: &'a Store,
    pub progress: &'a dyn Progress,
    /// The benchmarks the settings name, each loaded once (every setting of one command
    /// names the same root; a pipeline loads it on first use and every stage shares it).
    benchmarks: Mutex<Vec<(PathBuf, Arc<Benchmark>)>>,
    /// Each model's request budget, shared by every stage of this pipeline that asks it.
    budgets: Budgets,
    /// How many sandbox runs at once the machine was found to hold has been said.
    jobs_said: std::sync::Once,
    /// The proxies of `--network proxy`, one per allowlist, started on first use and
    /// stopped when the last runner using one is dropped.
    proxies: Mutex<Vec<std::sync::Weak<Proxy>>>,
}

impl<'a> Pipeline<'a> {
    /// A pipeline over `store`, showing its progress through `progress`.
    pub fn new(store: &'a Store, progress: &'a dyn Progress) -> Self {
        Self {
            store,
            progress,
            benchmarks: Mutex::new(Vec::new()),
            budgets: Budgets::default(),
            jobs_said: std::sync::Once::new(),
            proxies: Mutex::new(Vec::new()),
        }
    }

    /// The benchmark at `root` (`manifests/`, `data/`), loaded on first use.
    pub fn bench(&self, root: &Path) -> Result<Arc<Benchmark>, ManifestError> {
        let mut loaded = self.benchmarks.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, bench)) = loaded.iter().find(|(r, _)| r == root) {
            return Ok(bench.clone());
        }
        let bench = Arc::new(Benchmark::load(root)?);
        loaded.push((root.to_path_buf(), bench.clone()));
        Ok(bench)
    }

    /// translate-validate, and the checks of the selection's current texts in plan order.
    pub fn translate_validate(
        &self,
        s: &TranslateValidateSettings,
    ) -> Result<(RunSummary, Vec<TranslationCheck>), PipelineError> {
        let stage = Arc::new(self.translations(&s.selection)?);
        let summary = self.run(stage.clone(), RunOptions::default())?;
        if !summary.failed.is_empty() {
            let list = summary.failed.iter().map(|(l, e)| format!("{l}: {e}")).collect();
            return Err(PipelineError::TranslationChecks(list));
        }
        let state = StageLog::new(self.store, TranslationCheck::STAGE)?.state::<TranslationCheck>(0)?;
        let checks = stage
            .plan(self.store)?
            .iter()
            .filter_map(|p| state.get(&p.key).map(|e| e.body.clone()))
            .collect();
        Ok((summary, checks))
    }

    /// translate: the forward leg with `s.model`, its texts written where none exist, then
    /// the back leg with `s.back_model`, its texts written likewise. The two models must
    /// differ unless `s.same_model_both_ways`; a model that answers no requests, or replays
    /// another store, cannot translate.
    pub fn translate(&self, s: &TranslateSettings) -> Result<Vec<(RunSummary, Written)>, PipelineError> {
        let root = &s.selection.root;
        let forward = self.model_named(root, &s.model, s.max_tokens)?;
        let back = self.model_named(root, &s.back_model, s.max_tokens)?;
        for m in [&forward, &back] {
            if !m.provider.answers_requests() || m.provider == Provider::Replay {
                return Err(InputError(format!(
                    "model `{}` cannot translate: its provider `{}` answers no translation requests (use an openai, anthropic or local model)",
                    m.name,
                    crate::events::serde_name(&m.provider)
                ))
                .into());
            }
        }
        if same_model(&forward, &back) && !s.same_model_both_ways {
            return Err(InputError(format!(
                "--model `{}` and --back-model `{}` are the same model ({}): a back-translation by the model that translated checks nothing; choose another back model, or pass --same-model-both-ways",
                forward.name, back.name, forward.model
            ))
            .into());
        }
        let bench = self.bench(root)?;
        s.selection.check(&bench)?;
        let mut legs = Vec::new();
        for (leg, model) in [(Leg::Forward, forward), (Leg::Back, back)] {
            let limits = self.limits_of(&model, s.requests, 1)?;
            let budget = self.budgets.of(&model.name, limits);
            let config = client_config(&model, s.request_timeout, limits);
            let responder = Responder::for_model(&model, config, budget.clone())
                .map_err(|e| InputError(e.to_string()))?;
            let stage = Arc::new(Translate {
                bench: bench.clone(),
                competitions: s.selection.competitions.clone(),
                languages: s.selection.languages.clone(),
                leg,
                requests: Requests {
                    model,
                    store: self.store.clone(),
                    responder,
                },
            });
            let mut summary = self.run(stage.clone(), concurrency(budget.limits().max_in_flight))?;
            summary.requests = Some(budget.report());
            let written = stage.write_texts(self.store)?;
            legs.push((summary, written));
        }
        Ok(legs)
    }

    /// generate with one model (on its shard, when a cluster worker's). As many units run
    /// at once as the model's budget lets requests be in flight (a searching agent's
    /// searches also as many as `-j` runs their attempts: while some wait for answers,
    /// others run code); the budget, not the unit count, bounds the requests. The summary
    /// records what the budget did.
    pub fn generate(&self, s: &GenerateSettings) -> Result<RunSummary, PipelineError> {
        let stage = self.generate_stage(s, Here::Runs)?;
        let budget = stage.requests.responder.budget().clone();
        let in_flight = budget.limits().max_in_flight;
        let units = match &s.agent {
            // Each unit is a whole agent in a sandbox: `-j` of them at once.
            AgentSettings::External(_) => s.sandbox.jobs.max(1),
            a if a.searches() => in_flight + s.sandbox.jobs.max(1),
            _ => in_flight,
        };
        let asks = stage.requests.model.provider.answers_requests();
        let options = RunOptions {
            shard: s.shard,
            stop: s.stop,
            ..concurrency(units)
        };
        let mut summary = self.run(Arc::new(stage), options)?;
        summary.requests = asks.then(|| budget.report());
        Ok(summary)
    }

    /// generate where `s.engine` says: here, or a searching agent's searches on Slurm
    /// (`crate::cluster::engine`), which the units the store lacks go to as a frozen plan.
    pub fn generate_on_engine(&self, s: &GenerateSettings) -> Result<Ran, PipelineError> {
        match &s.engine {
            EngineSettings::Local => Ok(Ran::Here(self.generate(s)?)),
            EngineSettings::Slurm(slurm) => {
                let units = self.generate_pending(s)?;
                let run = engine::run(
                    &self.on_slurm(slurm),
                    Generation::STAGE,
                    units,
                    |units, shards| {
                        // The tasks that run at once share the model's limits.
                        let shares = shards.min(slurm.max_running).max(1);
                        let s = GenerateSettings {
                            request_shares: shares,
                            ..s.clone()
                        };
                        Plan::generate(&s, units, shards)
                    },
                );
                Ok(Ran::Slurm(run.map_err(|e| cluster_error(Generation::STAGE, e))?))
            }
        }
    }

    /// generate's units that the store does not hold yet, as `generate` would run them:
    /// what a cluster plan freezes.
    /// The plan is recorded here, by the submitter: a task that never runs still leaves its
    /// samples in every table's denominator.
    pub fn generate_pending(&self, s: &GenerateSettings) -> Result<Vec<Hash>, PipelineError> {
        // Planned here, searched elsewhere: the agents' trials need no proxy or GPU here.
        let stage = self.generate_stage(s, Here::Plans)?;
        let planned = stage.plan(self.store)?;
        stage.record_plan(self.store, &planned)?;
        self.pending_of::<Generate>(planned)
    }

    /// The planned units of `stage` that its log lacks, once each.
    fn pending<S: Stage>(&self, stage: &S) -> Result<Vec<Hash>, PipelineError> {
        self.pending_of::<S>(stage.plan(self.store)?)
    }

    fn pending_of<S: Stage>(
        &self,
        planned: Vec<crate::stages::Planned<S::Unit>>,
    ) -> Result<Vec<Hash>, PipelineError> {
        let view = StageLog::new(self.store, S::Body::STAGE)?.view()?;
        let mut seen = std::collections::HashSet::new();
        Ok(planned
            .into_iter()
            .map(|p| p.key)
            .filter(|k| !view.contains(k) && seen.insert(*k))
            .collect())
    }

    fn generate_stage(&self, s: &GenerateSettings, here: Here) -> Result<Generate, PipelineError> {
        let model = self.model(s)?;
        let limits = self.request_limits(&model, s)?;
        let budget = self.budgets.of(&model.name, limits);
        let config = client_config(&model, s.request_timeout, limits);
        let responder =
            Responder::for_model(&model, config, budget).map_err(|e| InputError(e.to_string()))?;
        Ok(Generate {
            requests: Requests {
                model,
                store: self.store.clone(),
                responder,
            },
            formats: s.formats.clone(),
            seeds: s.seeds,
            translations: self.translations(&s.selection)?,
            force: s.force,
            limits: prompt::Limits::of(&s.sandbox.limits),
            aide: self.aide(s, here)?,
            react: self.react(s, here)?,
            external: self.external(s)?,
        })
    }

    /// The external agent the settings name, with its Python environment (made on first
    /// use from its lock) and identity; `None` for ml2b's own agents.
    fn external(&self, s: &GenerateSettings) -> Result<Option<Arc<External>>, PipelineError> {
        let AgentSettings::External(name) = &s.agent else {
            return Ok(None);
        };
        let root = &s.selection.root;
        let manifest = AgentsManifest::load(root)?;
        let agent = manifest.agent(name, root)?.clone();
        if s.sandbox.backend != BackendKind::Local {
            return Err(InputError(
                "an external agent runs under the local backend (bubblewrap): use --backend local".into(),
            )
            .into());
        }
        let dir = root.join(&agent.dir);
        if !dir.is_dir() {
            return Err(InputError(format!(
                "agent `{name}`: its folder {} (`dir` in {}) does not exist",
                dir.display(),
                agents::FILE
            ))
            .into());
        }
        let requirements = match &agent.requirements {
            Some(path) => {
                let path = root.join(path);
                std::fs::read_to_string(&path)
                    .map_err(|e| InputError(format!("agent `{name}`: reading {}: {e}", path.display())))?
            }
            None => String::new(),
        };
        let python = if requirements.is_empty() {
            self.python()?
        } else {
            let env = pyenv::Env {
                dir: pyenv::agent_venv_dir(name),
                requirements: &requirements,
                name: &format!("agent `{name}`'s requirements"),
                no_deps: true,
            };
            pyenv::ensure_env(&env, || {
                self.progress.info(&format!(
                    "creating agent `{name}`'s Python environment (first use)"
                ));
                SlowStep::begin(self.progress, "installing the agent's requirements")
            })?
        };
        let identity = external::identity(name, &agent, &dir, &requirements)?;
        let limits = Limits {
            wall: std::time::Duration::from_secs(agent.time_limit_s),
            ..s.sandbox.limits.clone()
        };
        Ok(Some(Arc::new(External {
            name: name.clone(),
            agent,
            dir,
            python,
            limits,
            identity,
            backend: crate::sandbox::local::Local::new()?,
        })))
    }

    /// The model `s` names, with its `--max-tokens`, warning when its id is a floating alias.
    fn model(&self, s: &GenerateSettings) -> Result<Model, PipelineError> {
        self.model_named(&s.selection.root, &s.model, s.max_tokens)
    }

    /// The model `name` of the root's `manifests/models.toml`, with `max_tokens` over its
    /// own, warning when its id is a floating alias.
    fn model_named(&self, root: &Path, name: &str, max_tokens: Option<u32>) -> Result<Model, PipelineError> {
        let models = Models::load(&root.join("manifests/models.toml"))?;
        let model = models
            .get(name)
            .ok_or_else(|| InputError(format!("no model `{name}` in manifests/models.toml")))?;
        let model = Model {
            max_tokens: max_tokens.or(model.max_tokens),
            ..model.clone()
        };
        if matches!(model.provider, Provider::Openai | Provider::Anthropic) && is_floating_alias(&model.model)
        {
            self.progress.warn(&format!(
                "model `{}`: `{}` is a floating alias (no dated snapshot); its answers may change over time",
                model.name, model.model
            ));
        }
        Ok(model)
    }

    /// The model's request limits: the flags', else its manifest entry's, else its
    /// provider's defaults; this process's share of them.
    fn request_limits(&self, model: &Model, s: &GenerateSettings) -> Result<RequestLimits, PipelineError> {
        self.limits_of(model, s.requests, s.request_shares)
    }

    /// `model`'s request limits under `overrides`, this process's `shares` of them.
    fn limits_of(
        &self,
        model: &Model,
        overrides: LimitOverrides,
        shares: u32,
    ) -> Result<RequestLimits, PipelineError> {
        let limits = RequestLimits::of(model, overrides).shared_by(shares);
        match limits.invalid() {
            Some(why) => Err(InputError(format!("model `{}`: {why}", model.name)).into()),
            None => Ok(limits),
        }
    }

    /// The AIDE agent the settings ask for, with its sandbox; `None` for one-shot.
    fn aide(&self, s: &GenerateSettings, here: Here) -> Result<Option<Arc<Aide>>, PipelineError> {
        let AgentSettings::Aide(config) = &s.agent else {
            return Ok(None);
        };
        let runner = self.runner_with(&s.sandbox, &s.selection.root, here)?;
        let trials = Trials::new(runner, s.sandbox.jobs).map_err(|e| SandboxError::Io {
            what: "creating the aide agent's trial pool".into(),
            source: e,
        })?;
        Ok(Some(Arc::new(Aide {
            config: config.clone(),
            trials,
        })))
    }

    /// The react agent the settings ask for, with its sandbox; `None` for the others.
    fn react(&self, s: &GenerateSettings, here: Here) -> Result<Option<Arc<React>>, PipelineError> {
        let AgentSettings::React(config) = &s.agent else {
            return Ok(None);
        };
        let runner = self.runner_with(&s.sandbox, &s.selection.root, here)?;
        let trials = Trials::new(runner.clone(), s.sandbox.jobs).map_err(|e| SandboxError::Io {
            what: "creating the react agent's trial pool".into(),
            source: e,
        })?;
        Ok(Some(Arc::new(React {
            config: config.clone(),
            trials,
            python: Python { runner },
        })))
    }

    /// execute with the chosen sandbox.
    pub fn execute(&self, s: &ExecuteSettings) -> Result<RunSummary, PipelineError> {
        let options = RunOptions {
            shard: s.shard,
            stop: s.stop,
            ..concurrency(s.sandbox.jobs.max(1))
        };
        self.run(Arc::new(self.execute_stage(s, Here::Runs)?), options)
    }

    /// execute where `s.engine` says: here, or on Slurm (`crate::cluster::engine`), which
    /// the units the store lacks go to as a frozen plan.
    pub fn execute_on_engine(&self, s: &ExecuteSettings) -> Result<Ran, PipelineError> {
        match &s.engine {
            EngineSettings::Local => Ok(Ran::Here(self.execute(s)?)),
            EngineSettings::Slurm(slurm) => {
                let units = self.execute_pending(s)?;
                let run = engine::run(&self.on_slurm(slurm), Execution::STAGE, units, |units, shards| {
                    Plan::execute(s, units, shards)
                });
                Ok(Ran::Slurm(run.map_err(|e| cluster_error(Execution::STAGE, e))?))
            }
        }
    }

    fn on_slurm<'s>(&'s self, settings: &'s SlurmSettings) -> engine::Slurm<'s> {
        engine::Slurm {
            store: self.store,
            progress: self.progress,
            settings,
        }
    }

    /// execute's units that the store does not hold yet, as `execute` would run them: what
    /// a cluster plan freezes.
    pub fn execute_pending(&self, s: &ExecuteSettings) -> Result<Vec<Hash>, PipelineError> {
        // Planned here, run elsewhere: no proxy to start, no GPU to find on this host.
        self.pending(&self.execute_stage(s, Here::Plans)?)
    }

    fn execute_stage(&self, s: &ExecuteSettings, here: Here) -> Result<Execute, PipelineError> {
        Ok(Execute {
            bench: self.bench(&s.root)?,
            runner: self.runner_with(&s.sandbox, &s.root, here)?,
            store: self.store.clone(),
            since: s.since,
        })
    }

    /// grade.
    pub fn grade(&self, s: &GradeSettings) -> Result<RunSummary, PipelineError> {
        let stage = GradeStage {
            bench: self.bench(&s.root)?,
            store: self.store.clone(),
            since: s.since,
        };
        self.run(Arc::new(stage), concurrency(GRADE_CONCURRENCY))
    }

    /// analyze.
    pub fn analyze(&self, s: &AnalyzeSettings) -> Result<RunSummary, PipelineError> {
        let stage = Analyze::new(self.bench(&s.root)?, self.store.clone(), s.tables.clone());
        self.run(Arc::new(stage), concurrency(1))
    }

    /// Checks what a run of `s` needs before any unit of it runs (`crate::preflight`): each
    /// HTTP model's key and endpoint, the sandbox (where execute runs here) and the grading
    /// programs of the selection.
    pub fn preflight(&self, s: &BenchmarkSettings) -> Result<(), PipelineError> {
        let root = &s.selection.root;
        let models = Models::load(&root.join("manifests/models.toml"))?;
        let mut wanted = Vec::new();
        for entry in &s.entries {
            let model = models
                .get(&entry.model)
                .ok_or_else(|| InputError(format!("no model `{}` in manifests/models.toml", entry.model)))?;
            wanted.push(model);
        }
        let mut failed = runtime()?.block_on(crate::preflight::models(&wanted));
        if matches!(s.engine, EngineSettings::Local) {
            let runner = self.runner(&s.sandbox, root)?;
            if let Err(f) = crate::preflight::sandbox(&*runner.backend, &runner.python, &s.sandbox.limits) {
                failed.push(f);
            }
        }
        let bench = self.bench(root)?;
        let selected = bench.select(&s.selection.competitions).map_err(InputError)?;
        failed.extend(crate::preflight::graders(&selected));
        if failed.is_empty() {
            Ok(())
        } else {
            Err(crate::preflight::PreflightError(failed).into())
        }
    }

    /// generate with each model of `s`, then execute everything generated and grade it:
    /// what `ml2b run` and `ml2b baselines` share.
    pub fn benchmark(&self, s: &BenchmarkSettings) -> Result<Vec<RunSummary>, PipelineError> {
        let mut summaries = Vec::new();
        for entry in &s.entries {
            summaries.push(self.generate_on_engine(&s.generate(entry))?.summary());
        }
        summaries.push(self.execute_on_engine(&s.execute())?.summary());
        summaries.push(self.grade(&s.grade())?);
        Ok(summaries)
    }

    /// How stored code runs under `s`: its backend, the managed Python, its limits, its
    /// network (the proxy started, for the benchmark at `root`'s allowlist). Says once how
    /// many runs at once were chosen for this machine, when `-j` was not given.
    pub fn runner(&self, s: &SandboxSettings, root: &Path) -> Result<Runner, PipelineError> {
        self.runner_with(s, root, Here::Runs)
    }

    /// [`Pipeline::runner`]; when this host only plans (the units run on Slurm), without
    /// the proxy or the GPUs, which only the nodes need (the unit keys take what was asked).
    fn runner_with(&self, s: &SandboxSettings, root: &Path, here: Here) -> Result<Runner, PipelineError> {
        if let Some(why) = &s.jobs_chosen {
            self.jobs_said.call_once(|| self.progress.info(why));
        }
        let network = network(&s.network, root)?;
        let proxy = match (&network, here) {
            (Network::Proxy(allowlist), Here::Runs) => Some(self.proxy(allowlist)?),
            _ => None,
        };
        let gpus = match here {
            Here::Runs => s.gpus.map(GpuSet::select).transpose()?,
            Here::Plans => None,
        };
        if let Some(g) = &gpus {
            let names: Vec<String> = g
                .devices
                .iter()
                .map(|d| format!("{} ({})", d.name, d.index))
                .collect();
            self.progress
                .info(&format!("runs get the GPU(s) {}", names.join(", ")));
        }
        let model_cache = s.model_cache.as_deref().map(ModelCache::open).transpose()?;
        if let Some(c) = &model_cache {
            self.progress.info(&format!(
                "runs see the model cache {} at /cache: {} files, {:.1} MB, listing blake3 {}",
                c.dir.display(),
                c.files,
                c.bytes as f64 / 1e6,
                c.blake3.short()
            ));
        }
        Ok(Runner {
            python: self.python()?,
            backend: self.sandbox(s.backend)?,
            limits: s.limits.clone(),
            network,
            proxy,
            model_cache: model_cache.map(Arc::new),
            gpus_asked: s.gpus,
            gpus: gpus.map(Arc::new),
        })
    }

    /// The running proxy of `allowlist`, started if none is.
    fn proxy(&self, allowlist: &Allowlist) -> Result<Arc<Proxy>, SandboxError> {
        let mut proxies = self.proxies.lock().unwrap_or_else(|e| e.into_inner());
        proxies.retain(|p| p.strong_count() > 0);
        if let Some(p) = proxies
            .iter()
            .filter_map(std::sync::Weak::upgrade)
            .find(|p| p.allowlist() == allowlist)
        {
            return Ok(p);
        }
        let started = Arc::new(Proxy::start(allowlist)?);
        self.progress.info(&format!(
            "runs go out through squid on {}, allowing {} on port(s) {}",
            started.address(),
            allowlist.domains.join(" "),
            allowlist
                .ports
                .iter()
                .map(u16::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
        proxies.push(Arc::downgrade(&started));
        Ok(started)
    }

    /// The managed Python environment (`sandbox::pyenv`), created on first use.
    pub fn python(&self) -> Result<PathBuf, SandboxError> {
        crate::sandbox::pyenv::ensure(|| {
            self.progress
                .info("creating the Python environment solutions run in (first use; a minute or two)");
            SlowStep::begin(self.progress, "installing assets/execute/requirements.txt")
        })
    }

    /// The sandbox backend of `kind` (building the docker image on first use).
    pub fn sandbox(&self, kind: BackendKind) -> Result<Arc<dyn Backend>, SandboxError> {
        Ok(match kind {
            BackendKind::Local => Arc::new(crate::sandbox::local::Local::new()?),
            BackendKind::Docker => Arc::new(crate::sandbox::docker::Docker::new(self.runtime_image()?)?),
        })
    }

    /// The docker backend's runtime image, built when missing.
    fn runtime_image(&self) -> Result<crate::sandbox::image::ImageRef, SandboxError> {
        use crate::sandbox::image::{Route, RuntimeImage};
        RuntimeImage::ensure(|route| {
            let how = match route {
                Route::Dockerfile => "docker build of assets/execute/Dockerfile",
                Route::Debootstrap => "offline: debootstrap of Debian bookworm, then an image import",
            };
            self.progress.info(&format!(
                "building the sandbox's runtime image (first use; {how})"
            ));
            SlowStep::begin(self.progress, "building the runtime image")
        })
    }

    /// Re-derives every event of the pure stages (translate-validate, grade, analyze) that
    /// the store holds, from the benchmark at `root`: per stage, the events re-derived and
    /// those that came out with another id.
    pub fn rederive(&self, root: &Path) -> Result<Rederived, PipelineError> {
        let bench = || self.bench(root);
        let grade = GradeStage {
            bench: bench()?,
            store: self.store.clone(),
            since: None,
        };
        let analyze = Analyze::new(bench()?, self.store.clone(), Vec::new()).with_superseded();
        let tv = TranslateValidate {
            bench: bench()?,
            competitions: Vec::new(),
            languages: Vec::new(),
        };
        let rt = runtime()?;
        let store = self.store;
        Ok(vec![
            ("translate_validate", rt.block_on(tv.rederive(store))?),
            ("grade", rt.block_on(grade.rederive(store))?),
            ("analyze", rt.block_on(rederive(&analyze, store))?),
        ]
        .into_iter()
        .map(|(s, (n, d))| (s, n, d))
        .collect())
    }

    /// The translate-validate stage over a selection (checked: every name in it exists).
    fn translations(&self, s: &Selection) -> Result<TranslateValidate, PipelineError> {
        let bench = self.bench(&s.root)?;
        s.check(&bench)?;
        Ok(TranslateValidate {
            bench,
            competitions: s.competitions.clone(),
            languages: s.languages.clone(),
        })
    }

    fn run<S: Stage>(&self, stage: Arc<S>, options: RunOptions) -> Result<RunSummary, PipelineError> {
        Ok(runtime()?.block_on(run_stage(self.store, stage, &options, self.progress))?)
    }
}

/// How a stage ran on its engine: here (its run summary), or on Slurm (the plan, its
/// submission and, once waited for, what its tasks committed).
#[derive(Debug)]
pub enum Ran {
    Here(RunSummary),
    Slurm(ClusterRun),
}

impl Ran {
    /// The stage's run summary, wherever it ran.
    pub fn summary(self) -> RunSummary {
        match self {
            Self::Here(summary) => summary,
            Self::Slurm(run) => run.summary(),
        }
    }
}

/// Whether a runner runs units on this host, or only plans units that run elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Here {
    Runs,
    Plans,
}

/// The network `s` asks for, with the allowlist of the benchmark at `root`
/// (`manifests/network.toml`, else ML2B's) and the domains `s` adds.
fn network(s: &NetworkSettings, root: &Path) -> Result<Network, PipelineError> {
    if !s.proxy {
        if let Some(d) = s.allow.first() {
            return Err(InputError(format!(
                "--allow-domain {d}: domains are allowed through the proxy only (add --network proxy)"
            ))
            .into());
        }
        return Ok(Network::None);
    }
    let manifest = NetworkManifest::load(root)?;
    let file = root.join(crate::manifest::network::FILE);
    let listed = manifest
        .proxy
        .allow
        .unwrap_or_else(|| DEFAULT_DOMAINS.iter().map(|d| d.to_string()).collect());
    for d in &listed {
        if !Allowlist::valid_domain(d) {
            return Err(InputError(format!(
                "{}: proxy.allow: `{d}` is not a domain name",
                file.display()
            ))
            .into());
        }
    }
    for d in &s.allow {
        if !Allowlist::valid_domain(d) {
            return Err(InputError(format!(
                "--allow-domain {d}: not a domain name (`.example.org`: it and its subdomains)"
            ))
            .into());
        }
    }
    let ports = manifest.proxy.ports.unwrap_or_else(|| DEFAULT_PORTS.to_vec());
    if ports.contains(&0) {
        return Err(InputError(format!("{}: proxy.ports: 0 is no port", file.display())).into());
    }
    let domains = listed.into_iter().chain(s.allow.iter().cloned());
    Ok(Network::Proxy(Allowlist::new(
        domains,
        ports,
        manifest.proxy.hosts,
    )))
}

/// Per pure stage: its name, the events re-derived, and (id, why) for each that differs.
pub type Rederived = Vec<(&'static str, usize, Vec<(Hash, String)>)>;

fn runtime() -> Result<tokio::runtime::Runtime, PipelineError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(PipelineError::Runtime)
}

fn cluster_error(stage: &'static str, e: ClusterError) -> PipelineError {
    PipelineError::Cluster {
        stage,
        source: Box::new(e),
    }
}

fn concurrency(n: usize) -> RunOptions {
    RunOptions {
        concurrency: n,
        ..RunOptions::default()
    }
}

/// A slow step shown by [`Progress`] while this lives.
struct SlowStep<'a>(&'a dyn Progress);

impl<'a> SlowStep<'a> {
    fn begin(progress: &'a dyn Progress, message: &str) -> Self {
        progress.slow_step(message);
        Self(progress)
    }
}

impl Drop for SlowStep<'_> {
    fn drop(&mut self) {
        self.0.slow_step_ended();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    #[test]
    fn every_stage_of_a_pipeline_shares_one_load_of_the_benchmark() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let pipeline = Pipeline::new(&store, &NoProgress);
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let first = pipeline.bench(root).unwrap();
        let again = pipeline.bench(&root.join("manifests/..")).unwrap();
        assert!(Arc::ptr_eq(&first, &pipeline.bench(root).unwrap()), "loaded once");
        // Another spelling of a root is another root: loaded on its own, never mixed up.
        assert!(!Arc::ptr_eq(&first, &again));
        assert_eq!(first.competitions.len(), again.competitions.len());
    }
}
