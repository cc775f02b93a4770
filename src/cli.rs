//! Every command-line type of `ml2b` (clap). Doc comments are the help text.
//!
//! Commands never see these types: `crate::settings` resolves them first.

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
    /// The store directory.
    #[arg(
        long,
        global = true,
        env = "ML2B_STORE",
        hide_env_values = true,
        default_value = "store",
        value_name = "DIR"
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
    /// List committed segments: version, hash, parent, event count, time.
    Log(LogArgs),
    /// Re-hash every segment and object and check every hash chain.
    Verify(VerifyArgs),
    /// Run a read-only SQL query over the stage logs (one table per stage).
    Query(QueryArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only this stage's log.
    #[arg(long, value_name = "STAGE")]
    pub stage: Option<String>,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {}

#[derive(Debug, Args)]
pub struct QueryArgs {
    /// A SQL statement, or a path to a `.sql` file holding one.
    #[arg(value_name = "SQL | FILE.sql")]
    pub query: String,
    /// Output format (default: table, or json with --json).
    #[arg(long, value_enum)]
    pub format: Option<QueryFormat>,
    /// Write the result to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Output formats of `ml2b query`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum QueryFormat {
    Table,
    Csv,
    Json,
    Parquet,
}
