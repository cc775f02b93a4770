//! Resolved settings: what commands receive instead of clap types.
//!
//! Each `XSettings::resolve(args)` opens by destructuring its clap struct (uv's pattern), so
//! a new flag that nobody handles is a compile error, and checks every value there: below
//! this module nothing sees `crate::cli`, and a bad value is an input error naming its flag
//! before any work starts.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli::{self, GlobalArgs};
pub use crate::config::{
    AgentSettings, AnalyzeSettings, BackendKind, BenchmarkSettings, EngineSettings, Entry, ExecuteSettings,
    GenerateSettings, GradeSettings, InputError, NetworkSettings, SandboxSettings, Selection, SlurmSettings,
    TranslateSettings, TranslateValidateSettings,
};
use crate::events::Format;
use crate::manifest::cluster::{self, ClusterManifest};
use crate::providers::budget::LimitOverrides;
use crate::stages::generate::{aide, react};
use crate::store::{Hash, Store, s3};
use crate::terminal::message;
/// Settings shared by every command.
#[derive(Clone, Debug)]
pub struct GlobalSettings {
    pub store: Store,
    pub printer: Printer,
}

impl GlobalSettings {
    /// Resolves the global flags; `uses_store` says whether the command reads or writes
    /// the store at all (an S3 store, `s3://BUCKET/PREFIX`, is opened, and so checked, only
    /// then).
    pub fn resolve(args: &GlobalArgs, uses_store: bool) -> anyhow::Result<Self> {
        let GlobalArgs {
            store,
            json,
            quiet,
            verbose: _,
        } = args;
        Ok(Self {
            store: open_store(store, uses_store)?,
            printer: Printer {
                json: *json,
                quiet: *quiet,
                progress: !quiet && std::io::stderr().is_terminal(),
                lines: (!quiet && !json && !std::io::stderr().is_terminal()).then(progress_interval),
            },
        })
    }
}

/// How often progress is written as a plain line when stderr is not a terminal:
/// `ML2B_PROGRESS_INTERVAL` seconds (0: at every unit), else every 30 seconds.
fn progress_interval() -> std::time::Duration {
    let seconds = std::env::var("ML2B_PROGRESS_INTERVAL")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(30.0);
    std::time::Duration::from_secs_f64(seconds)
}

/// The store `--store` names: a directory, or an S3 store. A command that never touches
/// the store gets the location unopened (a path no one reads); one that does is refused,
/// whatever the command, when the path is something other than a directory.
fn open_store(location: &Path, uses_store: bool) -> anyhow::Result<Store> {
    match location
        .to_str()
        .filter(|l| uses_store && l.starts_with(s3::SCHEME))
    {
        Some(url) => Ok(Store::open_s3(url, &[])?),
        None => {
            if uses_store && location.exists() && !location.is_dir() {
                return Err(InputError(format!(
                    "the store {} is not a directory (see --store or ML2B_STORE)",
                    location.display()
                ))
                .into());
            }
            Ok(Store::open(location))
        }
    }
}

/// How a command talks to the user: data on stdout, messages on stderr.
#[derive(Clone, Copy, Debug)]
pub struct Printer {
    /// Machine-readable JSON on stdout.
    pub json: bool,
    /// No informational messages.
    pub quiet: bool,
    /// Draw progress bars.
    pub progress: bool,
    /// Stderr is not a terminal: write progress as a plain line this often instead (none:
    /// a terminal, `--quiet` or `--json`).
    pub lines: Option<std::time::Duration>,
}

impl Printer {
    /// Where data goes: commands write it with `writeln!(printer.stdout(), …)`, the one path
    /// to stdout (clippy's `print_stdout` is denied everywhere).
    pub fn stdout(&self) -> std::io::Stdout {
        std::io::stdout()
    }

    /// An informational message on stderr (hidden with `--quiet` or `--json`).
    pub fn info(&self, msg: impl std::fmt::Display) {
        if !self.quiet && !self.json {
            message(format_args!("{msg}"));
        }
    }

    /// A warning on stderr (always shown).
    pub fn warn(&self, msg: impl std::fmt::Display) {
        message(format_args!("warning: {msg}"));
    }

    /// An error on stderr (always shown): why the command exits non-zero.
    pub fn error(&self, msg: impl std::fmt::Display) {
        message(format_args!("error: {msg}"));
    }

    /// Prints a value as pretty JSON on stdout.
    pub fn json<T: serde::Serialize>(&self, value: &T) -> anyhow::Result<()> {
        use std::io::Write;
        writeln!(self.stdout(), "{}", serde_json::to_string_pretty(value)?)?;
        Ok(())
    }
}
impl From<cli::Backend> for BackendKind {
    fn from(b: cli::Backend) -> Self {
        match b {
            cli::Backend::Local => Self::Local,
            cli::Backend::Docker => Self::Docker,
        }
    }
}

/// The GPUs `manifests/sandbox.toml` of the benchmark at `root` gives every run, if any.
fn default_gpus(root: &Path) -> Result<Option<crate::sandbox::Gpus>, InputError> {
    use crate::manifest::sandbox::{FILE, GpuCount, SandboxManifest};
    let manifest = SandboxManifest::load(root).map_err(|e| InputError(crate::error::chain(&e)))?;
    let text = match manifest.gpus {
        None => return Ok(None),
        Some(GpuCount::Number(n)) => n.to_string(),
        Some(GpuCount::Word(w)) => w,
    };
    text.parse()
        .map(Some)
        .map_err(|e| InputError(format!("{}: gpus: {e}", root.join(FILE).display())))
}

impl SandboxSettings {
    fn new(backend: cli::Backend, timeout_s: u64, memory_bytes: u64, jobs: usize) -> Self {
        Self::of(backend.into(), timeout_s, memory_bytes, jobs)
    }

    /// The sandbox flags, over the defaults of the benchmark at `root`; without `-j`, as
    /// many runs as this machine holds ([`SandboxSettings::machine_jobs`]).
    fn resolve(args: &cli::SandboxArgs, root: &Path) -> Result<Self, InputError> {
        let cli::SandboxArgs {
            backend,
            jobs,
            timeout,
            memory,
            environment,
        } = args;
        let s = match jobs {
            Some(n) => Self::new(*backend, *timeout, *memory, *n as usize),
            None => {
                let (n, why) = Self::machine_jobs(*memory);
                Self {
                    jobs_chosen: Some(why),
                    ..Self::new(*backend, *timeout, *memory, n)
                }
            }
        };
        s.with_environment(environment, root)
    }

    /// These settings with the run environment of `args`: the network, the model cache
    /// (absolute) and the GPUs (the flag, else the default of the benchmark at `root`).
    fn with_environment(self, args: &cli::EnvironmentArgs, root: &Path) -> Result<Self, InputError> {
        let cli::EnvironmentArgs {
            network,
            allow_domains,
            model_cache,
            gpus,
        } = args;
        Ok(Self {
            network: NetworkSettings {
                proxy: *network == cli::NetworkMode::Proxy,
                allow: allow_domains.clone(),
            },
            model_cache: model_cache.as_deref().map(crate::cluster::plan::absolute),
            gpus: match gpus {
                Some(g) => Some(*g),
                None => default_gpus(root)?,
            },
            ..self
        })
    }
}
impl cli::RequestArgs {
    /// The limits given, over the models' own.
    fn resolve(&self) -> LimitOverrides {
        LimitOverrides {
            max_in_flight: self.max_in_flight.map(|n| n as usize),
            requests_per_minute: self.requests_per_minute,
            tokens_per_minute: self.tokens_per_minute,
        }
    }
}
impl Selection {
    fn resolve(args: &cli::TranslateValidateArgs) -> Self {
        let cli::TranslateValidateArgs {
            root,
            competitions,
            languages,
        } = args;
        Self {
            root: root.root.clone(),
            competitions: competitions.clone(),
            languages: languages.clone(),
        }
    }
}
impl AgentSettings {
    /// Resolves the agent flags, checking the searching agents'.
    pub fn resolve(args: &cli::AgentArgs) -> Result<Self, InputError> {
        let cli::AgentArgs {
            agent,
            steps,
            time_budget,
            tool_timeout,
            drafts,
            debug_prob,
            max_debug_depth,
            validation_fraction,
        } = args;
        match agent {
            cli::Agent::OneShot => return Ok(Self::OneShot),
            cli::Agent::External(name) => return Ok(Self::External(name.clone())),
            _ => {}
        }
        if !(*validation_fraction > 0.0 && *validation_fraction < 1.0) {
            return Err(InputError(format!(
                "--validation-fraction {validation_fraction}: must be between 0 and 1"
            )));
        }
        match agent {
            cli::Agent::OneShot => Ok(Self::OneShot),
            cli::Agent::External(name) => Ok(Self::External(name.clone())),
            cli::Agent::React => Ok(Self::React(react::Config {
                steps: steps.unwrap_or(react::Config::REACT.steps),
                time_budget_s: time_budget.unwrap_or(react::Config::REACT.time_budget_s),
                tool_timeout_s: *tool_timeout,
                validation_fraction: *validation_fraction,
            })),
            cli::Agent::Aide => {
                if !(0.0..=1.0).contains(debug_prob) {
                    return Err(InputError(format!(
                        "--debug-prob {debug_prob}: not a probability"
                    )));
                }
                Ok(Self::Aide(aide::Config {
                    steps: steps.unwrap_or(aide::Config::AIDE.steps),
                    time_budget_s: time_budget.unwrap_or(aide::Config::AIDE.time_budget_s),
                    drafts: *drafts,
                    debug_prob: *debug_prob,
                    max_debug_depth: *max_debug_depth,
                    validation_fraction: *validation_fraction,
                }))
            }
        }
    }
}
impl TranslateValidateSettings {
    pub fn resolve(args: &cli::TranslateValidateArgs) -> Self {
        Self {
            selection: Selection::resolve(args),
        }
    }
}
impl TranslateSettings {
    pub fn resolve(args: &cli::TranslateArgs) -> Self {
        let cli::TranslateArgs {
            select,
            model,
            back_model,
            same_model_both_ways,
            request_timeout,
            max_tokens,
            requests,
        } = args;
        Self {
            selection: Selection::resolve(select),
            model: model.clone(),
            back_model: back_model.clone(),
            same_model_both_ways: *same_model_both_ways,
            request_timeout: Duration::from_secs(*request_timeout),
            max_tokens: *max_tokens,
            requests: requests.resolve(),
        }
    }
}
impl GenerateSettings {
    pub fn resolve(args: &cli::GenerateArgs) -> Result<Self, InputError> {
        let cli::GenerateArgs {
            select,
            model,
            formats,
            seeds,
            request_timeout,
            max_tokens,
            force,
            requests,
            agent,
            sandbox,
            engine,
        } = args;
        let agent = AgentSettings::resolve(agent)?;
        let engine = EngineSettings::resolve(engine, &select.root.root)?;
        if matches!(engine, EngineSettings::Slurm(_)) && !agent.searches() {
            return Err(InputError(
                "--engine slurm: generate goes to the cluster for a searching agent (--agent aide \
                 or react), whose validation runs are the heavy part; one-shot generation is \
                 HTTP requests, run it here"
                    .into(),
            ));
        }
        Ok(Self {
            selection: Selection::resolve(select),
            model: model.clone(),
            formats: both_if_none(formats),
            seeds: *seeds,
            request_timeout: Duration::from_secs(*request_timeout),
            max_tokens: *max_tokens,
            requests: requests.resolve(),
            request_shares: 1,
            force: *force,
            agent,
            sandbox: SandboxSettings::resolve(sandbox, &select.root.root)?,
            engine,
            shard: None,
            stop: None,
        })
    }
}

/// The formats asked for, or both.
fn both_if_none(formats: &[cli::Format]) -> Vec<Format> {
    if formats.is_empty() {
        vec![Format::Modular, Format::Mono]
    } else {
        formats.iter().map(|&f| f.into()).collect()
    }
}
impl ExecuteSettings {
    pub fn resolve(args: &cli::ExecuteArgs) -> Result<Self, InputError> {
        let cli::ExecuteArgs {
            root,
            sandbox,
            since,
            engine,
        } = args;
        Ok(Self {
            root: root.root.clone(),
            sandbox: SandboxSettings::resolve(sandbox, &root.root)?,
            since: parse_since(since.as_deref())?,
            engine: EngineSettings::resolve(engine, &root.root)?,
            shard: None,
            stop: None,
        })
    }
}
impl EngineSettings {
    /// The engine of a command that goes on with the execute stage's results (grade), so
    /// waits for them: `--no-wait` is refused.
    fn resolve_waiting(args: &cli::EngineArgs, root: &Path, command: &str) -> Result<Self, InputError> {
        if args.no_wait {
            return Err(InputError(format!(
                "--no-wait: {command} grades what execute ran, so it waits; \
                 `ml2b stage execute --engine slurm --no-wait` submits without waiting"
            )));
        }
        Self::resolve(args, root)
    }

    /// The engine the flags ask for; on Slurm, with the defaults of the benchmark's
    /// `manifests/cluster.toml` (at `root`) under them.
    fn resolve(args: &cli::EngineArgs, root: &Path) -> Result<Self, InputError> {
        let cli::EngineArgs {
            engine,
            shards,
            max_running,
            slurm_args,
            no_wait,
        } = args;
        let slurm_only = shards.is_some() || max_running.is_some() || !slurm_args.is_empty() || *no_wait;
        match engine {
            cli::Engine::Local if slurm_only => Err(InputError(
                "--shards, --max-running, --slurm-arg and --no-wait are for --engine slurm".into(),
            )),
            cli::Engine::Local => Ok(Self::Local),
            cli::Engine::Slurm => {
                if *shards == Some(0) || *max_running == Some(0) {
                    return Err(InputError("--shards and --max-running must be at least 1".into()));
                }
                let defaults = ClusterManifest::load(root)
                    .map_err(|e| InputError(crate::error::chain(&e)))?
                    .slurm;
                Ok(Self::Slurm(SlurmSettings {
                    shards: shards.or(defaults.shards),
                    max_running: max_running
                        .or(defaults.max_running)
                        .unwrap_or(cluster::DEFAULT_MAX_RUNNING),
                    sbatch_args: [defaults.sbatch_args, slurm_args.clone()].concat(),
                    wait: !no_wait,
                }))
            }
        }
    }
}

/// `ml2b worker`.
#[derive(Clone, Debug)]
pub struct WorkerSettings {
    pub plan: Hash,
    pub shard: u32,
}

impl WorkerSettings {
    pub fn resolve(args: &cli::WorkerArgs) -> Result<Self, InputError> {
        let cli::WorkerArgs { plan, shard } = args;
        let plan = plan
            .parse()
            .map_err(|_| InputError(format!("--plan: `{plan}` is not a hash (64 hex digits)")))?;
        Ok(Self { plan, shard: *shard })
    }
}

/// `ml2b doctor`.
#[derive(Clone, Debug)]
pub struct DoctorSettings {
    pub root: std::path::PathBuf,
    pub backend: BackendKind,
    /// Models named on the command line (empty: every HTTP model).
    pub models: Vec<String>,
    pub min_free_bytes: u64,
}

impl DoctorSettings {
    pub fn resolve(args: &cli::DoctorArgs) -> Result<Self, InputError> {
        let cli::DoctorArgs {
            root,
            backend,
            models,
            min_free_gb,
        } = args;
        if !(min_free_gb.is_finite() && *min_free_gb >= 0.0) {
            return Err(InputError(format!("--min-free-gb {min_free_gb}: not a size")));
        }
        Ok(Self {
            root: root.root.clone(),
            backend: (*backend).into(),
            models: models.clone(),
            min_free_bytes: (min_free_gb * 1e9) as u64,
        })
    }
}

/// `ml2b status`.
#[derive(Clone, Debug)]
pub struct StatusSettings {
    /// A plan's hash or hex prefix (8 to 64 lowercase hex digits); none: every plan.
    pub plan: Option<String>,
    /// The benchmark root (the `runs` view's).
    pub root: std::path::PathBuf,
}

impl StatusSettings {
    pub fn resolve(args: &cli::StatusArgs) -> Result<Self, InputError> {
        let cli::StatusArgs { plan, root } = args;
        let hex = |p: &str| (8..=64).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_hexdigit());
        match plan {
            Some(p) if !hex(p) => Err(InputError(format!(
                "--plan {p}: not a plan hash or a prefix of one (8 to 64 hex digits)"
            ))),
            _ => Ok(Self {
                plan: plan.as_ref().map(|p| p.to_ascii_lowercase()),
                root: root.root.clone(),
            }),
        }
    }
}
impl GradeSettings {
    pub fn resolve(args: &cli::GradeArgs) -> Result<Self, InputError> {
        let cli::GradeArgs { root, since } = args;
        Ok(Self {
            root: root.root.clone(),
            since: parse_since(since.as_deref())?,
        })
    }
}
impl AnalyzeSettings {
    pub fn resolve(args: &cli::AnalyzeArgs) -> Result<Self, InputError> {
        let cli::AnalyzeArgs { root, tables } = args;
        for t in tables {
            if crate::query::catalog::table(t).is_none() {
                let names: Vec<_> = crate::query::catalog::TABLES.iter().map(|q| q.name).collect();
                return Err(InputError(format!(
                    "--table {t}: no such table; queries/ has {}",
                    names.join(", ")
                )));
            }
        }
        Ok(Self {
            root: root.root.clone(),
            tables: tables.clone(),
        })
    }
}

/// Parses a `--since` hash.
fn parse_since(since: Option<&str>) -> Result<Option<Hash>, InputError> {
    since
        .map(|h| {
            h.parse()
                .map_err(|_| InputError(format!("--since {h}: not a 64-digit hash")))
        })
        .transpose()
}
impl BenchmarkSettings {
    /// Every model over the same selection and formats.
    fn grid(selection: Selection, models: &[String], formats: Vec<Format>) -> Vec<Entry> {
        models
            .iter()
            .map(|model| Entry {
                model: model.clone(),
                selection: selection.clone(),
                formats: formats.clone(),
            })
            .collect()
    }
}

/// The models `ml2b run` generates with unless `--model` names others.
pub const RUN_MODELS: [&str; 2] = ["reference", "smollm2-135m"];

/// The tour's share of the grid for the embedded model: one competition in every language,
/// MODULAR_PREDICT only (14 generations, a few minutes on 2 cores).
pub const TOUR_COMPETITIONS: [&str; 1] = ["concrete-strength"];

/// What a run covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// No selection given: the reference solution on the whole grid, the embedded model
    /// on [`TOUR_COMPETITIONS`] in every language (the newcomer's first run).
    Tour,
    /// `--full`, or a selection given: every model on the whole selection.
    Grid,
}

/// `ml2b run`.
#[derive(Clone, Debug)]
pub struct RunSettings {
    pub scope: Scope,
    pub benchmark: BenchmarkSettings,
    /// Exit 0 even when planned samples have no verdict.
    pub accept_incomplete: bool,
}

impl RunSettings {
    pub fn resolve(args: &cli::RunArgs) -> Result<Self, InputError> {
        let cli::RunArgs {
            root,
            models,
            languages,
            competitions,
            seeds,
            formats,
            full,
            requests,
            sandbox,
            agent,
            engine,
            accept_incomplete,
            skip_preflight,
        } = args;
        let chosen =
            models.is_some() || !languages.is_empty() || !competitions.is_empty() || !formats.is_empty();
        let scope = if *full || chosen { Scope::Grid } else { Scope::Tour };
        let selection = Selection {
            root: root.root.clone(),
            competitions: competitions.clone(),
            languages: languages.clone(),
        };
        let models = models
            .clone()
            .unwrap_or_else(|| RUN_MODELS.map(String::from).to_vec());
        let entries = match scope {
            Scope::Grid => BenchmarkSettings::grid(selection.clone(), &models, both_if_none(formats)),
            Scope::Tour => tour(&selection),
        };
        Ok(Self {
            scope,
            benchmark: BenchmarkSettings {
                selection,
                entries,
                seeds: *seeds,
                agent: AgentSettings::resolve(agent)?,
                sandbox: SandboxSettings::resolve(sandbox, &root.root)?,
                engine: EngineSettings::resolve_waiting(engine, &root.root, "ml2b run")?,
                preflight: !skip_preflight,
                requests: requests.resolve(),
            },
            accept_incomplete: *accept_incomplete,
        })
    }
}

/// The tour's entries over the whole `selection`.
fn tour(selection: &Selection) -> Vec<Entry> {
    let [reference, embedded] = RUN_MODELS;
    vec![
        Entry {
            model: reference.into(),
            selection: selection.clone(),
            formats: both_if_none(&[]),
        },
        Entry {
            model: embedded.into(),
            selection: Selection {
                competitions: TOUR_COMPETITIONS.map(String::from).to_vec(),
                ..selection.clone()
            },
            formats: vec![Format::Modular],
        },
    ]
}

/// `ml2b baselines`: the baseline models in English (baseline code does not depend on the
/// language), MODULAR_PREDICT only.
#[derive(Clone, Debug)]
pub struct BaselinesSettings {
    pub benchmark: BenchmarkSettings,
}

impl BaselinesSettings {
    pub fn resolve(args: &cli::BaselinesArgs) -> Result<Self, InputError> {
        let cli::BaselinesArgs {
            root,
            competitions,
            models,
            seeds,
            sandbox,
            engine,
            skip_preflight,
        } = args;
        let selection = Selection {
            root: root.root.clone(),
            competitions: competitions.clone(),
            languages: vec!["en".into()],
        };
        Ok(Self {
            benchmark: BenchmarkSettings {
                entries: BenchmarkSettings::grid(selection.clone(), models, vec![Format::Modular]),
                selection,
                seeds: *seeds,
                agent: AgentSettings::OneShot,
                sandbox: SandboxSettings::resolve(sandbox, &root.root)?,
                engine: EngineSettings::resolve_waiting(engine, &root.root, "ml2b baselines")?,
                preflight: !skip_preflight,
                requests: LimitOverrides::default(),
            },
        })
    }
}

/// Parses a flag's value, or fails as an input error naming the flag.
fn parse_flag<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, InputError>
where
    T::Err: std::fmt::Display,
{
    value
        .parse()
        .map_err(|e| InputError(format!("invalid value for {flag}: {e}")))
}

/// `ml2b bleu`.
#[derive(Clone, Debug)]
pub struct BleuSettings {
    pub hyp: PathBuf,
    pub refs: Vec<PathBuf>,
    pub options: crate::metrics::bleu::BleuOptions,
    /// Score every segment separately.
    pub sentence: bool,
    /// Also chrF.
    pub chrf: bool,
}

impl BleuSettings {
    pub fn resolve(args: &cli::BleuArgs) -> Result<Self, InputError> {
        let cli::BleuArgs {
            hyp,
            refs,
            tokenize,
            lowercase,
            smooth,
            smooth_value,
            effective_order,
            sentence,
            chrf,
        } = args;
        let mut options = if *sentence {
            crate::metrics::bleu::BleuOptions::sentence()
        } else {
            crate::metrics::bleu::BleuOptions::default()
        };
        options.tokenizer = parse_flag("--tokenize", tokenize)?;
        options.lowercase = *lowercase;
        if let Some(smooth) = smooth {
            options.smooth = parse_flag("--smooth", smooth)?;
        }
        options.smooth_value = *smooth_value;
        options.effective_order |= *effective_order;
        Ok(Self {
            hyp: hyp.clone(),
            refs: refs.clone(),
            options,
            sentence: *sentence,
            chrf: *chrf,
        })
    }
}

/// `ml2b agreement`.
#[derive(Clone, Debug)]
pub struct AgreementSettings {
    pub ratings: PathBuf,
    pub categories: Option<Vec<String>>,
    pub weights: crate::metrics::agreement::Weights,
}

impl AgreementSettings {
    pub fn resolve(args: &cli::AgreementArgs) -> Result<Self, InputError> {
        let cli::AgreementArgs {
            ratings,
            categories,
            weights,
        } = args;
        Ok(Self {
            ratings: ratings.clone(),
            categories: categories.clone(),
            weights: parse_flag("--weights", weights)?,
        })
    }
}

/// `ml2b aup`.
#[derive(Clone, Debug)]
pub struct AupSettings {
    pub ratios: PathBuf,
    pub convention: crate::metrics::aup::Convention,
}

impl AupSettings {
    pub fn resolve(args: &cli::AupArgs) -> Result<Self, InputError> {
        let cli::AupArgs { ratios, convention } = args;
        Ok(Self {
            ratios: ratios.clone(),
            convention: parse_flag("--convention", convention)?,
        })
    }
}

/// `ml2b score`.
#[derive(Clone, Debug)]
pub struct ScoreSettings {
    pub metric: String,
    pub answers: PathBuf,
    pub predictions: PathBuf,
    pub id_col: String,
    /// The answers' target columns; `None`: every answers column but the id.
    pub targets: Option<Vec<String>>,
}

impl ScoreSettings {
    pub fn resolve(args: &cli::ScoreArgs) -> Self {
        let cli::ScoreArgs {
            metric,
            answers,
            predictions,
            id_col,
            target,
        } = args;
        let targets: Vec<String> = target
            .iter()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect();
        Self {
            metric: metric.clone(),
            answers: answers.clone(),
            predictions: predictions.clone(),
            id_col: id_col.clone(),
            targets: (!targets.is_empty()).then_some(targets),
        }
    }
}

/// `ml2b check`.
#[derive(Clone, Debug)]
pub struct CheckSettings {
    pub file: PathBuf,
    pub format: Format,
}

impl CheckSettings {
    pub fn resolve(args: &cli::CheckArgs) -> Self {
        let cli::CheckArgs { file, format } = args;
        Self {
            file: file.clone(),
            format: (*format).into(),
        }
    }
}

/// `ml2b grade-file`.
#[derive(Clone, Debug)]
pub struct GradeFileSettings {
    pub root: PathBuf,
    pub file: PathBuf,
    pub competition: String,
    pub format: Format,
    pub sandbox: SandboxSettings,
    /// Keep the predictions and the result record here.
    pub out: Option<PathBuf>,
}

impl GradeFileSettings {
    pub fn resolve(args: &cli::GradeFileArgs) -> Result<Self, InputError> {
        let cli::GradeFileArgs {
            root,
            file,
            competition,
            format,
            backend,
            timeout,
            memory,
            environment,
            out,
        } = args;
        Ok(Self {
            root: root.root.clone(),
            file: file.clone(),
            competition: competition.clone(),
            format: (*format).into(),
            sandbox: SandboxSettings::new(*backend, *timeout, *memory, 1)
                .with_environment(environment, &root.root)?,
            out: out.clone(),
        })
    }
}

/// `ml2b annotate`.
#[derive(Clone, Debug)]
pub enum AnnotateSettings {
    Import {
        root: PathBuf,
        language: String,
        file: PathBuf,
    },
    Export {
        root: PathBuf,
        language: String,
    },
    Serve {
        root: PathBuf,
        /// Only these languages (empty: every language with a translation).
        languages: Vec<String>,
        /// Where to listen: always 127.0.0.1.
        address: std::net::SocketAddr,
    },
}

impl AnnotateSettings {
    pub fn resolve(args: &cli::AnnotateArgs) -> Self {
        match &args.action {
            cli::AnnotateCommand::Import { file, language, root } => Self::Import {
                root: root.root.clone(),
                language: language.clone(),
                file: file.clone(),
            },
            cli::AnnotateCommand::Export { language, root } => Self::Export {
                root: root.root.clone(),
                language: language.clone(),
            },
            cli::AnnotateCommand::Serve {
                languages,
                port,
                root,
            } => Self::Serve {
                root: root.root.clone(),
                languages: languages.clone(),
                address: std::net::SocketAddr::from(([127, 0, 0, 1], *port)),
            },
        }
    }
}

/// `ml2b grade-sample`.
#[derive(Clone, Debug)]
pub struct GradeSampleSettings {
    pub root: PathBuf,
    pub submission: PathBuf,
    pub competition: String,
}

impl GradeSampleSettings {
    pub fn resolve(args: &cli::GradeSampleArgs) -> Self {
        let cli::GradeSampleArgs {
            root,
            submission,
            competition,
        } = args;
        Self {
            root: root.root.clone(),
            submission: submission.clone(),
            competition: competition.clone(),
        }
    }
}

/// The layouts `ml2b import` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportLayout {
    Ml2b,
    MleBench,
}

/// `ml2b import`.
#[derive(Clone, Debug)]
pub struct ImportSettings {
    pub root: PathBuf,
    pub layout: ImportLayout,
    pub dir: PathBuf,
    pub only: Vec<String>,
    pub metric: Option<String>,
    pub licence: String,
    pub repo: Option<PathBuf>,
    pub split: Option<String>,
    pub refusals: Refusals,
}

/// What `ml2b import` does when a competition is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusals {
    /// Import the others; exit 1.
    Fail,
    /// Import the others; exit 0 (`--allow-refused`).
    Allow,
    /// Import nothing; exit 1 (`--strict`).
    Strict,
}

impl ImportSettings {
    pub fn resolve(args: &cli::ImportArgs) -> Self {
        let cli::ImportArgs {
            root,
            format,
            dir,
            only,
            metric,
            licence,
            repo,
            split,
            strict,
            allow_refused,
        } = args;
        Self {
            root: root.root.clone(),
            layout: match format {
                cli::ImportFormat::Ml2b => ImportLayout::Ml2b,
                cli::ImportFormat::MleBench => ImportLayout::MleBench,
            },
            dir: dir.clone(),
            only: only.clone(),
            metric: metric.clone(),
            licence: licence.clone(),
            repo: repo.clone(),
            split: split.clone(),
            refusals: match (strict, allow_refused) {
                (true, _) => Refusals::Strict,
                (false, true) => Refusals::Allow,
                (false, false) => Refusals::Fail,
            },
        }
    }
}

/// `ml2b prepare`.
#[derive(Clone, Debug)]
pub struct PrepareSettings {
    pub root: PathBuf,
    pub ids: Vec<String>,
    /// Write nothing; compare only.
    pub check: bool,
    pub update_manifest: bool,
}

impl PrepareSettings {
    pub fn resolve(args: &cli::PrepareArgs) -> Self {
        let cli::PrepareArgs {
            root,
            ids,
            check,
            update_manifest,
        } = args;
        Self {
            root: root.root.clone(),
            ids: ids.clone(),
            check: *check,
            update_manifest: *update_manifest,
        }
    }
}

/// What `ml2b query` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryOutput {
    Table,
    Csv,
    Json,
    Parquet,
}

/// `ml2b query`.
#[derive(Clone, Debug)]
pub struct QuerySettings {
    /// A statement, or a path to a `.sql` file.
    pub query: String,
    pub root: PathBuf,
    pub format: QueryOutput,
    pub out: Option<PathBuf>,
}

impl QuerySettings {
    /// Resolves the flags; the format defaults to JSON with `--json`, else a table.
    pub fn resolve(args: &cli::QueryArgs, json: bool) -> Self {
        let cli::QueryArgs {
            query,
            root,
            format,
            out,
        } = args;
        let format = match format {
            Some(cli::QueryFormat::Table) => QueryOutput::Table,
            Some(cli::QueryFormat::Csv) => QueryOutput::Csv,
            Some(cli::QueryFormat::Json) => QueryOutput::Json,
            Some(cli::QueryFormat::Parquet) => QueryOutput::Parquet,
            None if json => QueryOutput::Json,
            None => QueryOutput::Table,
        };
        Self {
            query: query.clone(),
            root: root.root.clone(),
            format,
            out: out.clone(),
        }
    }
}

/// `ml2b report`.
#[derive(Clone, Debug)]
pub struct ReportSettings {
    pub root: PathBuf,
    pub out: PathBuf,
    /// Exit 0 even when planned samples have no verdict.
    pub accept_incomplete: bool,
    /// The viewer the table cells link to (none: no links), ending in `/`.
    pub viewer_url: Option<String>,
}

impl ReportSettings {
    pub fn resolve(args: &cli::ReportArgs) -> Self {
        let cli::ReportArgs {
            root,
            out,
            accept_incomplete,
            viewer_url,
        } = args;
        let viewer_url = match viewer_url.trim() {
            "" => None,
            url if url.ends_with('/') => Some(url.to_string()),
            url => Some(format!("{url}/")),
        };
        Self {
            root: root.root.clone(),
            out: out.clone(),
            accept_incomplete: *accept_incomplete,
            viewer_url,
        }
    }
}

/// `ml2b view`.
#[derive(Clone, Debug)]
pub struct ViewSettings {
    pub root: PathBuf,
    /// Where to listen (port 0: any free port).
    pub address: std::net::SocketAddr,
    /// Write the pages as files here instead of serving.
    pub bundle: Option<PathBuf>,
}

impl ViewSettings {
    pub fn resolve(args: &cli::ViewArgs) -> Self {
        let cli::ViewArgs {
            root,
            port,
            bind,
            bundle,
        } = args;
        Self {
            root: root.root.clone(),
            address: std::net::SocketAddr::new(*bind, *port),
            bundle: bundle.clone(),
        }
    }
}

/// `ml2b journal`.
#[derive(Clone, Debug)]
pub struct JournalSettings {
    /// A search key or a unique prefix of one.
    pub search: Option<String>,
    pub out: Option<PathBuf>,
}

impl JournalSettings {
    pub fn resolve(args: &cli::JournalArgs) -> Self {
        let cli::JournalArgs { search, out } = args;
        Self {
            search: search.clone(),
            out: out.clone(),
        }
    }
}

/// `ml2b trajectory`.
#[derive(Clone, Debug)]
pub struct TrajectorySettings {
    /// A search key or a unique prefix of one.
    pub search: Option<String>,
}

impl TrajectorySettings {
    pub fn resolve(args: &cli::TrajectoryArgs) -> Self {
        let cli::TrajectoryArgs { search } = args;
        Self {
            search: search.clone(),
        }
    }
}

/// `ml2b show`.
#[derive(Clone, Debug)]
pub struct ShowSettings {
    /// The event to show; none lists the latest runs.
    pub id: Option<String>,
    pub root: PathBuf,
    pub raw: Option<crate::record::Artefact>,
    pub filters: crate::record::Filters,
}

impl ShowSettings {
    pub fn resolve(args: &cli::ShowArgs) -> Self {
        let cli::ShowArgs {
            id,
            root,
            raw,
            model,
            language,
            competition,
            outcome,
            limit,
        } = args;
        Self {
            id: id.clone(),
            root: root.root.clone(),
            raw: *raw,
            filters: crate::record::Filters {
                model: model.clone(),
                language: language.clone(),
                competition: competition.clone(),
                outcome: outcome.clone(),
                limit: *limit,
            },
        }
    }
}

/// `ml2b verify`.
#[derive(Clone, Debug)]
pub struct VerifySettings {
    /// Also re-derive the pure stages from the benchmark at `root`.
    pub rerun: bool,
    pub root: PathBuf,
}

impl VerifySettings {
    pub fn resolve(args: &cli::VerifyArgs) -> Self {
        let cli::VerifyArgs { rerun, root } = args;
        Self {
            rerun: *rerun,
            root: root.root.clone(),
        }
    }
}
