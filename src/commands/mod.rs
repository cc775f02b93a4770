//! One module per command. Each takes resolved settings and returns an exit status.

mod log;
mod query;
mod reporters;
mod run;
mod verify;

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::settings::GlobalSettings;

pub use reporters::ProgressReporter;

/// How a command ended (DESIGN.md: 0 ok, 1 the work failed, 2 usage or input error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    Success,
    Failure,
    Usage,
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> Self {
        ExitCode::from(match s {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Usage => 2,
        })
    }
}

/// Marks an error as the user's input being wrong (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// The exit status an error maps to.
pub fn status_of(err: &anyhow::Error) -> ExitStatus {
    let input = err.chain().any(|c| {
        c.is::<InputError>() || matches!(c.downcast_ref(), Some(crate::query::QueryError::Invalid(_)))
    });
    if input {
        ExitStatus::Usage
    } else {
        ExitStatus::Failure
    }
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    let settings = GlobalSettings::resolve(&cli.global);
    match cli.command {
        Command::Run(_) => run::run(&settings),
        Command::Log(args) => log::log(&settings, args.stage.as_deref()),
        Command::Verify(_) => verify::verify(&settings),
        Command::Query(args) => query::query(&settings, &args.query, args.format, args.out.as_deref()),
    }
}

/// A tokio runtime for commands that need one.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}
