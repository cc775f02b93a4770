//! What every command shares: how it ends ([`ExitStatus`], and the one mapping of an
//! error to it), the printing of a report (`--json` or text) and of the completeness of
//! its tables, and the tokio runtime of the commands that need one. A leaf of
//! `commands/`: it calls no command.

use std::io::Write;
use std::process::ExitCode;

use crate::settings::GlobalSettings;

/// How a command ended (README.md, "Commands": 0 ok, 1 the work failed, 2 usage or input error).
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

/// Says on stderr what `completeness` lacks; the exit status of a command whose tables it
/// describes: 1 when samples are missing, unless `accepted` (`--accept-incomplete`).
pub(crate) fn judge_completeness(
    printer: &crate::settings::Printer,
    completeness: Option<&crate::report::Completeness>,
    accepted: bool,
) -> ExitStatus {
    let Some(c) = completeness.filter(|c| !c.is_complete()) else {
        return ExitStatus::Success;
    };
    for line in c.lines() {
        printer.warn(line);
    }
    if accepted {
        return ExitStatus::Success;
    }
    printer.error(format_args!(
        "{} planned sample(s) have no verdict: run the same command again to retry them (a fault of the environment is retried), or pass --accept-incomplete to keep them as failures",
        c.missing
    ));
    ExitStatus::Failure
}

/// Prints a report: JSON with `--json`, else its human form.
pub(crate) fn print_report<T: serde::Serialize + std::fmt::Display>(
    settings: &GlobalSettings,
    report: &T,
) -> anyhow::Result<()> {
    if settings.printer.json {
        settings.printer.json(report)
    } else {
        writeln!(settings.printer.stdout(), "{report}")?;
        Ok(())
    }
}

/// The exit status an error maps to: 2 when its chain holds an input error (each error
/// type says whether it is one, `crate::error::input_error`), else 1.
pub fn status_of(err: &anyhow::Error) -> ExitStatus {
    if crate::error::is_input_error(err.as_ref()) {
        ExitStatus::Usage
    } else {
        ExitStatus::Failure
    }
}

/// A tokio runtime for commands that need one.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}
