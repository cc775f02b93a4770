//! Every command-line type of `ml2b` (clap). Doc comments are the help text.
//!
//! Commands resolve these types into `crate::settings` first; nothing below the command
//! layer sees them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// ML2B: can an LLM, given an ML task in any of 14 languages, write a correct pipeline?
///
/// Every stage appends immutable Parquet event segments to a store; any result
/// can be traced, re-derived and cited by one hash.
#[derive(Debug, Parser)]
#[command(name = "ml2b", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command accepts.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// The store: a directory, or s3://BUCKET/PREFIX
    ///
    /// An S3 store is set up from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
    /// AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL and AWS_ALLOW_HTTP.
    #[arg(
        long,
        global = true,
        env = "ML2B_STORE",
        hide_env_values = true,
        default_value = "store",
        value_name = "STORE"
    )]
    pub store: PathBuf,
    /// Print machine-readable JSON on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Hide progress bars and informational messages.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// More diagnostics on stderr (-v info, -vv debug, -vvv trace; or RUST_LOG).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the benchmark: every available stage in order, then print the run's hash.
    Run(RunArgs),
    /// Run one stage of the pipeline.
    Stage(StageArgs),
    /// Translate the task texts competitions lack with a model, and back with another.
    ///
    /// Every missing `data/<id>/tasks/<code>.toml`, from English, then every missing
    /// `back/<code>.toml`, into English; each leg of each pair an event of the `translate`
    /// log, each text written where no file exists.
    Translate(TranslateArgs),
    /// Native speakers' ratings of translations: import them from CSV, or export them.
    ///
    /// The CSV layout is manifests/annotations/'s; each rating is an event of the `rating`
    /// log, and translate-validate computes AC1 over those of the texts it validates.
    Annotate(AnnotateArgs),
    /// Run the baselines (reference solution, AutoGluon) and check their scores' ranges.
    Baselines(BaselinesArgs),
    /// List committed segments: version, hash, parent, event count, time.
    Log(LogArgs),
    /// The aide agent's searches; one search as AIDE's journal.json.
    Journal(JournalArgs),
    /// The react agent's searches; one search step by step (thoughts, tool calls,
    /// observations), as text or with --json.
    Trajectory(TrajectoryArgs),
    /// One event and all it names (a run's prompt, response, code, findings, score); or the
    /// latest runs.
    Show(ShowArgs),
    /// Re-hash every segment and object, check every hash chain and what events name.
    Verify(VerifyArgs),
    /// Run a read-only SQL query over the stage logs (one table per stage).
    Query(QueryArgs),
    /// Render the paper's tables and plots: Markdown, CSV, LaTeX, SVG and index.html.
    Report(ReportArgs),
    /// Browse the store in a local, read-only web viewer: runs, code, searches, tables.
    View(ViewArgs),
    /// Score hypotheses against references: sacreBLEU-exact BLEU (and chrF).
    Bleu(BleuArgs),
    /// Inter-rater agreement of a ratings table: Gwet's AC1/AC2 and friends.
    Agreement(AgreementArgs),
    /// Grade one prediction file against its answers with a competition metric.
    ///
    /// Columns are resolved by name: a predictions column that is neither the id nor a target
    /// or class column (pandas' `Unnamed: 0`, say) is ignored with a warning, on stderr and in
    /// the `warnings` list of `--json`. Ids are compared by value: an integer-valued float id
    /// such as `311.0` is the id `311`. A problem with the answers is an error naming the
    /// answers file (exit 2); an invalid submission names the predictions file (exit 1).
    Score(ScoreArgs),
    /// Performance-profile statistics (AUP, win rate) from performance ratios.
    Aup(AupArgs),
    /// Rebuild every competition's public and private files from its source.
    Prepare(PrepareArgs),
    /// Execute one solution file in the sandbox and grade it.
    GradeFile(GradeFileArgs),
    /// Grade one submission CSV made anywhere: validity, score, r_p and MLE-bench's medal
    /// (like MLE-bench's grade-sample).
    GradeSample(GradeSampleArgs),
    /// Static checks and leakage detection on a solution file, without running it.
    Check(CheckArgs),
    /// Import competitions: the original ML2B release or MLE-bench-style folders.
    Import(ImportArgs),
    /// Run one shard of a frozen cluster plan: what each Slurm array task runs.
    Worker(WorkerArgs),
    /// Where the store stands: its samples, open faults and cluster plans.
    ///
    /// Read from the store (the logs, the plans, `cluster/<P>/`). Without --plan: every
    /// planned sample per model and format (complete, or missing by the stage it waits on),
    /// the open faults per stage, then every submitted plan, newest first (--json: the
    /// plans). With --plan: the plan's committed / planned / failed units and Slurm jobs
    /// and, once Slurm says they ended, how their tasks ended (exit 1 when one left its
    /// shard undone).
    Status(StatusArgs),
    /// Check what runs need, each check a line with what to do when it fails.
    ///
    /// The Python environment, the sandbox (one canary solution through the real harness),
    /// the competitions' data against their manifests and their grading programs, each HTTP
    /// model's key and endpoint (a model list, no tokens), and the disk space where the
    /// store is. Nothing is written to the store. Exit 1 when a check failed.
    Doctor(DoctorArgs),
}

/// `ml2b status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// One plan: its hash or a unique prefix of 8+ hex digits (as `--engine slurm` printed).
    #[arg(long, value_name = "P")]
    pub plan: Option<String>,
    /// The benchmark root the store's runs are of (for the samples' progress).
    #[command(flatten)]
    pub root: RootArgs,
}

/// `ml2b doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// The sandbox backend to check.
    #[arg(long, value_enum, default_value_t = Backend::Local)]
    pub backend: Backend,
    /// Check these models (a name of manifests/models.toml; repeatable or comma-separated).
    /// Default: every HTTP model, those whose key is not set reported as not set up.
    #[arg(
        long = "model",
        visible_alias = "models",
        value_delimiter = ',',
        value_name = "NAME"
    )]
    pub models: Vec<String>,
    /// Fail when the store's disk has less free space than this (GB).
    #[arg(long, default_value_t = 5.0, value_name = "GB")]
    pub min_free_gb: f64,
}

/// `ml2b worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The plan's hash (an object of the store, written by `--engine slurm`).
    #[arg(long, value_name = "HASH")]
    pub plan: String,
    /// The shard to run: 0 ≤ SHARD < the plan's shards (Slurm's SLURM_ARRAY_TASK_ID).
    #[arg(long, value_name = "SHARD")]
    pub shard: u32,
}

/// Where a stage's units run.
#[derive(Debug, Args)]
pub struct EngineArgs {
    /// `local`: here; `slurm`: a Slurm job array over a store every node reaches, on a shared
    /// filesystem or S3: the units are planned here, frozen as a plan object and sharded by
    /// unit key, each array task runs `ml2b worker` on its shard, and progress is read from
    /// the store. On generate, for a searching agent (aide, react) only.
    #[arg(long, value_enum, default_value_t = Engine::Local)]
    pub engine: Engine,
    /// slurm: shards (array tasks) of the plan (default: manifests/cluster.toml's `shards`,
    /// else 8 × --max-running; at most one per planned unit).
    #[arg(long, value_name = "B")]
    pub shards: Option<u32>,
    /// slurm: array tasks running at once (sbatch --array=…%K; default: manifests/cluster.toml's
    /// `max_running`, else 4).
    #[arg(long, value_name = "K")]
    pub max_running: Option<u32>,
    /// slurm: an argument passed to sbatch verbatim, after manifests/cluster.toml's
    /// `sbatch_args` (repeatable: --slurm-arg=--partition=gpu).
    #[arg(long = "slurm-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub slurm_args: Vec<String>,
    /// slurm: return once submitted, printing the job id and the plan's hash.
    #[arg(long)]
    pub no_wait: bool,
}

/// Engines that run a stage's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    /// In this process.
    Local,
    /// As a Slurm job array (`sbatch`), on a store every node reaches (the same path, or S3).
    Slurm,
}

/// Where the benchmark's manifests and data live.
#[derive(Debug, Args)]
pub struct RootArgs {
    /// The benchmark root: holds `manifests/` and `data/`.
    #[arg(long, env = "ML2B_ROOT", default_value = ".", value_name = "DIR")]
    pub root: PathBuf,
}

#[derive(Debug, Args)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Only these competitions (default: all).
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// Rebuild in memory and compare with the manifests and the files on disk; write nothing.
    #[arg(long, conflicts_with = "update_manifest")]
    pub check: bool,
    /// Record the rebuilt files' checksums and measurements in the manifests.
    #[arg(long)]
    pub update_manifest: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The solution's Python file.
    #[arg(value_name = "FILE.py")]
    pub file: PathBuf,
    /// Its submission format.
    #[arg(long, value_enum, default_value = "modular")]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct GradeFileArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// The solution's Python file.
    #[arg(value_name = "FILE.py")]
    pub file: PathBuf,
    /// The competition it solves.
    #[arg(long, value_name = "ID")]
    pub competition: String,
    /// Its submission format.
    #[arg(long, value_enum, default_value = "modular")]
    pub format: Format,
    /// Where to run it.
    #[arg(long, value_enum, default_value_t = Backend::Local)]
    pub backend: Backend,
    /// Wall-clock limit in seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub timeout: u64,
    /// Address-space limit in bytes.
    #[arg(long, default_value_t = 8 << 30, value_name = "BYTES")]
    pub memory: u64,
    #[command(flatten)]
    pub environment: EnvironmentArgs,
    /// Keep the predictions and the harness's result record in this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GradeSampleArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// The submission: a CSV in the competition's sample_submission.csv shape.
    #[arg(value_name = "SUBMISSION.csv")]
    pub submission: PathBuf,
    /// The competition it is for.
    #[arg(long, value_name = "ID")]
    pub competition: String,
}

/// The layouts `ml2b import` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ImportFormat {
    /// The original release: competitions/competitions.json, tasks/<Language>.csv, data/<id>/.
    Ml2b,
    /// MLE-bench: the prepared data <id>/prepared/{public,private}/ and (--repo) its checkout.
    MleBench,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// The layout of DIR.
    #[arg(value_enum)]
    pub format: ImportFormat,
    /// The folder to import from.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Only these competitions (default: every one found).
    #[arg(long = "only", value_name = "ID")]
    pub only: Vec<String>,
    /// mle-bench: the MLE-bench checkout (`mlebench/competitions/<id>/{config.yaml,
    /// description.md,leaderboard.csv,grade.py}`, `experiments/splits/`); DIR then holds
    /// `<id>/prepared/{public,private}` as `mlebench prepare` writes them.
    #[arg(long, value_name = "CHECKOUT")]
    pub repo: Option<PathBuf>,
    /// mle-bench: only the competitions of a split: `lite` (MLE-bench's low-complexity
    /// split), a split name of the checkout's experiments/splits/, or a file of ids.
    #[arg(long, value_name = "FILE|lite")]
    pub split: Option<String>,
    /// mle-bench: the metric (a key of `ml2b score --metric`) of the one competition
    /// imported, overriding its grader; default: config.yaml's `grader.name`, graded
    /// natively where one of ml2b's metrics computes it, else by MLE-bench's own grade.py.
    #[arg(long, value_name = "M")]
    pub metric: Option<String>,
    /// Licence to record for the imported data (the source rarely says).
    #[arg(
        long,
        default_value = "unknown: see the original competition's rules",
        value_name = "TEXT"
    )]
    pub licence: String,
    /// Import nothing when any competition is refused (by default the others are imported,
    /// each refusal is listed with its reason, and the import exits 1).
    #[arg(long, conflicts_with = "allow_refused")]
    pub strict: bool,
    /// Exit 0 when some competitions are refused: they are still listed with their reason,
    /// and the others imported.
    #[arg(long)]
    pub allow_refused: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// The models to generate with (manifests/models.toml), comma-separated [default:
    /// reference,smollm2-135m].
    #[arg(
        long = "model",
        visible_alias = "models",
        value_delimiter = ',',
        value_name = "A,B"
    )]
    pub models: Option<Vec<String>>,
    /// Only these language codes (repeatable or comma-separated; default: all 14).
    #[arg(
        long = "language",
        visible_aliases = ["langs", "languages"],
        value_delimiter = ',',
        value_name = "EN,KK"
    )]
    pub languages: Vec<String>,
    /// Only these competitions (repeatable or comma-separated; default: all).
    #[arg(
        long = "competition",
        visible_alias = "competitions",
        value_delimiter = ',',
        value_name = "X,Y"
    )]
    pub competitions: Vec<String>,
    /// Samples per (competition, language, format); seeds 0..N.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seeds: u32,
    /// Submission formats (repeatable; default: both).
    #[arg(long = "format", value_enum)]
    pub formats: Vec<Format>,
    /// Every model on every competition, language and format. Without it and without a
    /// selection (--model, --competition, --language, --format), the run is the tour: the
    /// reference solution everywhere, the embedded model on one competition in every
    /// language (minutes, not hours, on 2 cores).
    #[arg(long)]
    pub full: bool,
    #[command(flatten)]
    pub requests: RequestArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    #[command(flatten)]
    pub agent: AgentArgs,
    // Where execute's units run (translate-validate, generate, grade and analyze run here).
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Exit 0 even when planned samples have no verdict (never generated, executed or
    /// graded: a fault of the environment); they count as failures in every table.
    #[arg(long)]
    pub accept_incomplete: bool,
    /// Start without checking the environment first (each HTTP model's key and endpoint,
    /// the sandbox and its Python, the grading programs).
    #[arg(long)]
    pub skip_preflight: bool,
}

/// Where solutions run and under which limits: `ml2b run`, `stage generate` (the searching
/// agents' attempts) and `stage execute` take the same flags. The prompt states the limits.
#[derive(Clone, Debug, Args)]
pub struct SandboxArgs {
    /// Sandbox backend.
    #[arg(long, value_enum, default_value_t = Backend::Local)]
    pub backend: Backend,
    /// Sandbox runs at once (default: as many as the cores hold at 2 a run, and as fit at
    /// --memory each in the memory available; ml2b says what it chose).
    #[arg(short = 'j', long = "jobs", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Wall-clock limit per sandbox run, in seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub timeout: u64,
    /// Address-space limit per sandbox run, in bytes (the prompt states it too).
    #[arg(long, default_value_t = 8 << 30, value_name = "BYTES")]
    pub memory: u64,
    #[command(flatten)]
    pub environment: EnvironmentArgs,
}

/// What a run may reach and is given besides its files: the network, pretrained weights,
/// GPUs (`ml2b grade-file` and every command that runs solutions).
#[derive(Clone, Debug, Args)]
pub struct EnvironmentArgs {
    /// A run's network: none (a loopback of its own), or proxy (an allowlisting squid, as
    /// ML2B runs: the domains of manifests/network.toml, Hugging Face, PyTorch and S3 by
    /// default; every request recorded with the run).
    #[arg(long, value_enum, default_value_t = NetworkMode::None)]
    pub network: NetworkMode,
    /// A domain the proxy also allows (`.example.org`: it and its subdomains; repeatable).
    #[arg(long = "allow-domain", value_name = "DOMAIN")]
    pub allow_domains: Vec<String>,
    /// A folder of pretrained weights every run sees read-only at /cache (HF_HOME=
    /// /cache/huggingface, TORCH_HOME=/cache/torch); its listing is part of the unit key.
    #[arg(long, value_name = "DIR")]
    pub model_cache: Option<PathBuf>,
    /// NVIDIA GPUs each run gets (a number, or all); asking where there are none (or
    /// fewer) is an error, never a CPU run. On Slurm, each task asks for --gres=gpu:N.
    #[arg(long, value_name = "N|all", value_parser = parse_gpus)]
    pub gpus: Option<crate::sandbox::Gpus>,
}

fn parse_gpus(s: &str) -> Result<crate::sandbox::Gpus, String> {
    s.parse()
}

/// A run's network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum NetworkMode {
    /// No network: a loopback of its own only.
    #[default]
    None,
    /// Through the allowlisting proxy only.
    Proxy,
}

/// A model's request limits, over its entry in manifests/models.toml; every stage and
/// search asking the model shares them.
#[derive(Clone, Debug, Default, Args)]
pub struct RequestArgs {
    /// Requests to the model in flight at once (default: its `max_in_flight`, else 32
    /// for an HTTP API, 1 for the embedded model); lowered while the server answers 429.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_in_flight: Option<u32>,
    /// Requests to the model started per minute at most (default: its
    /// `requests_per_minute`, else no limit).
    #[arg(long = "rpm", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub requests_per_minute: Option<u32>,
    /// Tokens (prompt and answer) per minute at most (default: its `tokens_per_minute`,
    /// else no limit).
    #[arg(long = "tpm", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub tokens_per_minute: Option<u64>,
}

/// How LLM models turn a prompt into a submission.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Agent {
    /// One answer per unit.
    #[default]
    OneShot,
    /// AIDE's tree search: drafts, debugs and improvements, each run on a validation split
    /// of the training data; the best attempt is submitted, every attempt is in `journal`.
    Aide,
    /// ReAct: the model calls tools (list, read, write and run files, validate on a split of
    /// the training data) until it submits a file; every step is in `trajectory`.
    React,
    /// An external agent of `manifests/agents.toml`, its requests through ml2b's gateway.
    External(String),
}

impl std::str::FromStr for Agent {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "one-shot" => Ok(Self::OneShot),
            "aide" => Ok(Self::Aide),
            "react" => Ok(Self::React),
            _ => match s.strip_prefix("external:") {
                Some(name) if !name.is_empty() => Ok(Self::External(name.to_string())),
                _ => Err(format!(
                    "`{s}`: one of one-shot, aide, react, or external:NAME (an agent of manifests/agents.toml)"
                )),
            },
        }
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::OneShot => f.write_str("one-shot"),
            Self::Aide => f.write_str("aide"),
            Self::React => f.write_str("react"),
            Self::External(name) => write!(f, "external:{name}"),
        }
    }
}

#[derive(Clone, Debug, Args)]
pub struct AgentArgs {
    /// The agent of LLM models (the reference and template models have none): one-shot (one
    /// answer per unit), aide (AIDE's tree search, every attempt in `journal`), react (tool
    /// calls until it submits, every step in `trajectory`), or external:NAME (an agent of
    /// manifests/agents.toml run in the sandbox, every request through ml2b's recording
    /// gateway, in `gateway`).
    #[arg(long, default_value_t = Agent::OneShot, value_name = "AGENT")]
    pub agent: Agent,
    /// aide: attempts per unit at most (default 20); react: model turns (default 100).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub steps: Option<u32>,
    /// aide, react: seconds per unit at most, counted over the recorded answer and run times
    /// (default: aide 3600, react 10800).
    #[arg(long, value_name = "SECONDS")]
    pub time_budget: Option<u64>,
    /// react: wall-clock limit of one `run_python` call, in seconds.
    #[arg(long, default_value_t = REACT.tool_timeout_s, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub tool_timeout: u64,
    /// aide: drafts before debugging or improving.
    #[arg(long, default_value_t = AIDE.drafts, value_name = "N")]
    pub drafts: u32,
    /// aide: probability of debugging a buggy attempt at a step.
    #[arg(long, default_value_t = AIDE.debug_prob, value_name = "P")]
    pub debug_prob: f64,
    /// aide: longest chain of debugging attempts.
    #[arg(long, default_value_t = AIDE.max_debug_depth, value_name = "N")]
    pub max_debug_depth: u32,
    /// aide, react: share of the training rows held out to score attempts.
    #[arg(long, default_value_t = AIDE.validation_fraction, value_name = "F")]
    pub validation_fraction: f64,
}

/// The aide agent's defaults (AIDE's own), shown by `--help`.
const AIDE: crate::stages::generate::aide::Config = crate::stages::generate::aide::Config::AIDE;

/// The react agent's defaults (the ML2B repository's ReAct agent's), shown by `--help`.
const REACT: crate::stages::generate::react::Config = crate::stages::generate::react::Config::REACT;

impl Default for AgentArgs {
    fn default() -> Self {
        Self {
            agent: Agent::OneShot,
            steps: None,
            time_budget: None,
            tool_timeout: REACT.tool_timeout_s,
            drafts: AIDE.drafts,
            debug_prob: AIDE.debug_prob,
            max_debug_depth: AIDE.max_debug_depth,
            validation_fraction: AIDE.validation_fraction,
        }
    }
}

// The sandbox flags of every run, with the baselines' own defaults: one run at a time
// (AutoGluon trains on `num_cpus` cores per run), 30 minutes per run.
#[derive(Debug, Args)]
#[command(
    mut_arg("jobs", |a| a.default_value("1").help("Sandbox runs at once (AutoGluon trains on its num_cpus cores per run)")),
    mut_arg("timeout", |a| a.default_value("1800")),
)]
pub struct BaselinesArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Only these competitions (repeatable or comma-separated; default: all).
    #[arg(
        long = "competition",
        visible_alias = "competitions",
        value_delimiter = ',',
        value_name = "X,Y"
    )]
    pub competitions: Vec<String>,
    /// The baseline models (repeatable or comma-separated).
    #[arg(
        long = "model",
        visible_alias = "models",
        value_delimiter = ',',
        default_value = "reference,autogluon",
        value_name = "A,B"
    )]
    pub models: Vec<String>,
    /// Runs per baseline; seeds 0..N (AutoGluon's seed is the sample's).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seeds: u32,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    // Where execute's units run (grade runs here).
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Start without checking the environment first (the sandbox and its Python, the
    /// grading programs).
    #[arg(long)]
    pub skip_preflight: bool,
}

#[derive(Debug, Args)]
pub struct StageArgs {
    #[command(subcommand)]
    pub stage: StageCommand,
}

/// The stages `ml2b stage` runs. Parsed once per process and matched at once: the sizes of
/// its variants (generate's flags are the most) cost nothing worth a box.
#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)]
pub enum StageCommand {
    /// Back-translation BLEU/chrF and human-rating AC1 of every translated task text, gated.
    TranslateValidate(TranslateValidateArgs),
    /// Code for every (competition, language, format) whose translation passed.
    Generate(GenerateArgs),
    /// Run every distinct generated solution in the sandbox.
    Execute(ExecuteArgs),
    /// Score every execution on the private answers; r_p against both baselines.
    Grade(GradeArgs),
    /// Compute the paper's tables (queries/*.sql) over the logs; one event per table.
    Analyze(AnalyzeArgs),
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Only this table of queries/ (repeatable; default: all).
    #[arg(long = "table", value_name = "NAME")]
    pub tables: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ViewArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// The port to serve on (0: any free port; the URL is printed on stdout).
    #[arg(long, default_value_t = 8700, value_name = "PORT")]
    pub port: u16,
    /// The address to bind. Anything but a loopback address lets every machine that can
    /// reach this one read the store.
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub bind: std::net::IpAddr,
    /// Write every page as static files into DIR instead of serving (open DIR/index.html
    /// from file://, or publish it beside a paper). DIR must not exist, or be empty.
    #[arg(long, value_name = "DIR")]
    pub bundle: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Where to write the report (created if missing; files in it are replaced).
    #[arg(long, default_value = "report", value_name = "DIR")]
    pub out: PathBuf,
    /// Exit 0 even when planned samples have no verdict (the report says so either way).
    #[arg(long)]
    pub accept_incomplete: bool,
    /// The viewer the report's table cells link to (each row to its runs): `ml2b view`'s
    /// address. Empty: no links.
    #[arg(long, default_value = "http://127.0.0.1:8700/", value_name = "URL")]
    pub viewer_url: String,
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    pub select: TranslateValidateArgs,
    /// The model of manifests/models.toml to generate with.
    #[arg(long, default_value = "reference", value_name = "NAME")]
    pub model: String,
    /// Submission formats (repeatable; default: both).
    #[arg(long = "format", value_enum)]
    pub formats: Vec<Format>,
    /// Samples per (competition, language, format); seeds 0..N.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seeds: u32,
    /// Limit per HTTP attempt, in seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub request_timeout: u64,
    /// The most tokens one response may have (default: the model's `max_tokens`, else 4096).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    /// Also generate for pairs whose translation failed its gate or was not checked.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub requests: RequestArgs,
    #[command(flatten)]
    pub agent: AgentArgs,
    /// The sandbox of the searching agents' attempts; its limits are the ones the prompt
    /// states (give execute the same).
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Args)]
pub struct TranslateArgs {
    #[command(flatten)]
    pub select: TranslateValidateArgs,
    /// The model of manifests/models.toml that translates from English.
    #[arg(long, value_name = "NAME")]
    pub model: String,
    /// The model that translates back into English (another model: the back-translation
    /// checks the first).
    #[arg(long, value_name = "NAME")]
    pub back_model: String,
    /// Let one model translate both ways (its back-translation then checks itself).
    #[arg(long)]
    pub same_model_both_ways: bool,
    /// Limit per HTTP attempt, in seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub request_timeout: u64,
    /// The most tokens one answer may have (default: the model's `max_tokens`, else 8192).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    #[command(flatten)]
    pub requests: RequestArgs,
}

#[derive(Debug, Args)]
pub struct AnnotateArgs {
    #[command(subcommand)]
    pub action: AnnotateCommand,
}

/// What `ml2b annotate` does.
#[derive(Debug, Subcommand)]
pub enum AnnotateCommand {
    /// Record a CSV's ratings (`subject` = `<competition>/<field>`, then one column per
    /// annotator, scores 1–5) of the language's current texts.
    Import {
        /// The ratings.
        #[arg(value_name = "FILE.csv")]
        file: PathBuf,
        /// The language whose texts were rated.
        #[arg(long, value_name = "CODE")]
        language: String,
        #[command(flatten)]
        root: RootArgs,
    },
    /// Serve the annotation page on loopback: an annotator names themself and rates each
    /// field of a translation beside its English text, 1–5; each rating is an event.
    Serve {
        /// Only these languages' translations (default: every language with one).
        #[arg(
            long = "language",
            visible_aliases = ["langs", "languages"],
            value_name = "CODE",
            value_delimiter = ','
        )]
        languages: Vec<String>,
        /// The port to serve on (0: any free port; the URL is printed on stdout). The page
        /// binds 127.0.0.1 only: it writes to the store.
        #[arg(long, default_value_t = 8710, value_name = "PORT")]
        port: u16,
        #[command(flatten)]
        root: RootArgs,
    },
    /// Print the latest ratings of the language's current texts, in the same layout.
    Export {
        /// The language whose ratings to print.
        #[arg(long, value_name = "CODE")]
        language: String,
        #[command(flatten)]
        root: RootArgs,
    },
}

#[derive(Debug, Args)]
pub struct ExecuteArgs {
    #[command(flatten)]
    pub root: RootArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// Run only code generated after the generate segment with this hash.
    #[arg(long, value_name = "HASH")]
    pub since: Option<String>,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Args)]
pub struct GradeArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Grade only runs executed after the execute segment with this hash.
    #[arg(long, value_name = "HASH")]
    pub since: Option<String>,
}

#[derive(Debug, Args)]
pub struct TranslateValidateArgs {
    #[command(flatten)]
    pub root: RootArgs,
    /// Only these competitions (repeatable or comma-separated; default: all).
    #[arg(
        long = "competition",
        visible_alias = "competitions",
        value_delimiter = ',',
        value_name = "ID"
    )]
    pub competitions: Vec<String>,
    /// Only these language codes (repeatable or comma-separated; default: all).
    #[arg(
        long = "language",
        visible_aliases = ["langs", "languages"],
        value_delimiter = ',',
        value_name = "CODE"
    )]
    pub languages: Vec<String>,
}

#[derive(Debug, Args)]
pub struct JournalArgs {
    /// A search: its key (`generate.unit_key`) or a unique prefix of 8+ hex digits.
    #[arg(value_name = "SEARCH")]
    pub search: Option<String>,
    /// Write DIR/journal.json and DIR/best_solution.py instead of printing the journal.
    #[arg(long, value_name = "DIR", requires = "search")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TrajectoryArgs {
    /// A search: its key (`generate.unit_key`) or a unique prefix of 8+ hex digits.
    #[arg(value_name = "SEARCH")]
    pub search: Option<String>,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// An event id, a unit key or a unique hex prefix of one, from any log. Without it, the
    /// latest runs are listed.
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    #[command(flatten)]
    pub root: RootArgs,
    /// Write this artefact's bytes to stdout instead of the record: a generation's or
    /// attempt's prompt (JSON) and response (JSON), the code, the predictions (Parquet),
    /// the sandbox's stdout and stderr tails, an aide attempt's term-out, an analyze
    /// event's result (Parquet) and query (SQL), a translation check's english, text and
    /// back(-translation).
    #[arg(long, value_name = "KIND", requires = "id", value_parser = raw_artefact())]
    pub raw: Option<crate::record::Artefact>,
    /// List only this entrant's runs (`<model>+aide` for an aide search).
    #[arg(long, value_name = "MODEL", conflicts_with = "id")]
    pub model: Option<String>,
    /// List only runs in this language (its code, e.g. `kk`).
    #[arg(long, value_name = "CODE", conflicts_with = "id")]
    pub language: Option<String>,
    /// List only this competition's runs.
    #[arg(long, value_name = "ID", conflicts_with = "id")]
    pub competition: Option<String>,
    /// List only runs with this outcome (`ok`, `runtime_error`, `timeout`, `not_executed`, …).
    #[arg(long, value_name = "OUTCOME", conflicts_with = "id")]
    pub outcome: Option<String>,
    /// How many runs to list.
    #[arg(long, default_value_t = 20, value_name = "N", conflicts_with = "id")]
    pub limit: usize,
}

/// The names `--raw` takes, parsed into the record's artefacts (which know no clap).
fn raw_artefact() -> impl clap::builder::TypedValueParser<Value = crate::record::Artefact> {
    use crate::record::Artefact;
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(Artefact::ALL.map(Artefact::name))
        .map(|name| Artefact::from_name(&name).expect("clap accepts only the artefacts' names"))
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only this stage's log.
    #[arg(long, value_name = "STAGE")]
    pub stage: Option<String>,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Also re-derive the pure stages (translate-validate, grade, analyze) and check their events come out bit-identical.
    #[arg(long)]
    pub rerun: bool,
    #[command(flatten)]
    pub root: RootArgs,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    /// A SQL statement, or a path to a `.sql` file holding one.
    #[arg(value_name = "SQL | FILE.sql")]
    pub query: String,
    #[command(flatten)]
    pub root: RootArgs,
    /// Output format (default: table, or json with --json).
    #[arg(long, value_enum)]
    pub format: Option<QueryFormat>,
    /// Write the result to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Which submission format the code follows (`crate::events::Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// MODULAR_PREDICT: `train(data)`, `prepare_val(train_output, X_val)`,
    /// `predict(train_output, prepare_val_output)`.
    Modular,
    /// MONO_PREDICT: `train_and_predict(data, X_val)`.
    Mono,
}

impl From<Format> for crate::events::Format {
    fn from(f: Format) -> Self {
        match f {
            Format::Modular => Self::Modular,
            Format::Mono => Self::Mono,
        }
    }
}

/// Sandbox backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// bubblewrap namespaces and rlimits on this machine.
    Local,
    /// One container per run from ml2b's runtime image (built on first use).
    Docker,
}

/// Output formats of `ml2b query`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum QueryFormat {
    Table,
    Csv,
    Json,
    Parquet,
}

#[derive(Debug, Args)]
pub struct BleuArgs {
    /// Hypotheses, one segment per line.
    #[arg(long, value_name = "FILE")]
    pub hyp: PathBuf,
    /// A reference stream, one segment per line; repeat for several references.
    #[arg(long = "ref", value_name = "FILE", required = true)]
    pub refs: Vec<PathBuf>,
    /// Tokenizer: 13a, intl, zh, char or none.
    #[arg(long, default_value = "13a", value_name = "T")]
    pub tokenize: String,
    /// Lowercase every segment first.
    #[arg(long)]
    pub lowercase: bool,
    /// Smoothing: exp, floor, add-k or none (default: exp for corpus BLEU).
    #[arg(long, value_name = "M")]
    pub smooth: Option<String>,
    /// The value for floor or add-k smoothing (default: sacreBLEU's).
    #[arg(long, value_name = "X")]
    pub smooth_value: Option<f64>,
    /// Average only over n-gram orders that have matches (always on with --sentence).
    #[arg(long)]
    pub effective_order: bool,
    /// Score every segment separately, in input order.
    #[arg(long)]
    pub sentence: bool,
    /// Also compute chrF.
    #[arg(long)]
    pub chrf: bool,
}

#[derive(Debug, Args)]
pub struct AgreementArgs {
    /// CSV with a header: subject id, then one column per rater; empty cell = missing.
    #[arg(long, value_name = "FILE.csv")]
    pub ratings: PathBuf,
    /// The full rating scale, comma-separated (default: the values seen).
    #[arg(long, value_delimiter = ',', value_name = "C,C,…")]
    pub categories: Option<Vec<String>>,
    /// Weights for AC2 and friends: identity, linear, quadratic, ordinal, …
    #[arg(long, default_value = "identity", value_name = "W")]
    pub weights: String,
}

#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// The metric, e.g. roc_auc, log_loss, rmse, f1_macro, qwk, map@3, rmse_multi.
    #[arg(long, value_name = "M")]
    pub metric: String,
    /// Answers (CSV or Parquet): the id column plus the target column(s), and any other
    /// columns when --target names the targets.
    #[arg(long, value_name = "FILE")]
    pub answers: PathBuf,
    /// Predictions (CSV or Parquet): the id column plus targets or class probabilities.
    #[arg(long, value_name = "FILE")]
    pub predictions: PathBuf,
    /// The id column in both files; ids are compared by value (`311.0` is `311`).
    #[arg(long, default_value = "id", value_name = "C")]
    pub id_col: String,
    /// The answers' target column(s), repeatable or comma-separated (default: every answers
    /// column but the id). Several for rmse_multi, roc_auc_columns, spearman_columns, and for
    /// log_loss over one-hot answers (one 0/1 column per class).
    #[arg(long = "target", value_name = "COL", value_delimiter = ',', num_args = 1..)]
    pub target: Vec<String>,
}

#[derive(Debug, Args)]
pub struct AupArgs {
    /// CSV with columns model, language, competition, r.
    #[arg(long, value_name = "FILE")]
    pub ratios: PathBuf,
    /// ml2b (this project's definitions) or ml2b-code (the original AUP_stats.py).
    #[arg(long, default_value = "ml2b", value_name = "C")]
    pub convention: String,
}
