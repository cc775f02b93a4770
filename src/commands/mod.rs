//! One module per command. Each takes resolved settings and returns an exit status.

use std::io::Write;

mod agreement;
mod aup;
mod baselines;
mod bleu;
mod check;
mod grade_file;
mod grade_sample;
mod import;
mod journal;
mod log;
mod prepare;
mod progress;
mod query;
mod report;
mod run;
mod score;
mod show;
mod stage;
mod status;
mod trajectory;
mod verify;
mod view;
mod worker;

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::error::IsInputError;
use crate::settings::GlobalSettings;

pub use crate::config::InputError;
pub use progress::ProgressBars;

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

/// The exit status an error maps to: 2 when its chain holds an input error, else 1.
/// Each error type says whether it is one ([`IsInputError`], implemented beside it); this
/// is the edge, where errors are type-erased, so it lists the types it asks.
pub fn status_of(err: &anyhow::Error) -> ExitStatus {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err.as_ref());
    while let Some(e) = cause {
        if is_input_error(e) {
            return ExitStatus::Usage;
        }
        cause = e.source();
    }
    ExitStatus::Failure
}

/// Whether `e`, when its type is one that knows, says it is the user's input.
fn is_input_error(e: &(dyn std::error::Error + 'static)) -> bool {
    macro_rules! ask {
        ($($t:ty),* $(,)?) => {
            $(if let Some(e) = e.downcast_ref::<$t>() {
                return e.is_input_error();
            })*
        };
    }
    ask!(
        crate::config::InputError,
        crate::pipeline::PipelineError,
        crate::stages::StageError,
        crate::manifest::ManifestError,
        crate::sandbox::SandboxError,
        crate::competition::import::ImportError,
        crate::competition::prepare::PrepareError,
        crate::query::QueryError,
        crate::record::RecordError,
        crate::metrics::aup::AupError,
        crate::metrics::text_files::TextStatsError,
        crate::metrics::grading::GradeError,
    );
    false
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    use crate::settings as s;
    // The commands that never touch the store do not open one (on S3, opening probes it).
    let uses_store = !matches!(
        cli.command,
        Command::Prepare(_)
            | Command::GradeSample(_)
            | Command::Check(_)
            | Command::Import(_)
            | Command::Bleu(_)
            | Command::Agreement(_)
            | Command::Score(_)
            | Command::Aup(_)
    );
    let settings = GlobalSettings::resolve(&cli.global, uses_store)?;
    match cli.command {
        Command::Run(args) => run::run(&settings, &s::RunSettings::resolve(&args)?),
        Command::Stage(args) => stage::stage(&settings, &args),
        Command::Baselines(args) => baselines::baselines(&settings, &s::BaselinesSettings::resolve(&args)?),
        Command::Log(args) => log::log(&settings, args.stage.as_deref()),
        Command::Journal(args) => journal::journal(&settings, &s::JournalSettings::resolve(&args)),
        Command::Trajectory(args) => {
            trajectory::trajectory(&settings, &s::TrajectorySettings::resolve(&args))
        }
        Command::Show(args) => show::show(&settings, &s::ShowSettings::resolve(&args)),
        Command::Verify(args) => verify::verify(&settings, &s::VerifySettings::resolve(&args)),
        Command::Query(args) => {
            let query = s::QuerySettings::resolve(&args, settings.printer.json);
            query::query(&settings, &query)
        }
        Command::Report(args) => report::report(&settings, &s::ReportSettings::resolve(&args)),
        Command::View(args) => view::view(&settings, &s::ViewSettings::resolve(&args)),
        Command::Bleu(args) => bleu::bleu(&settings, &s::BleuSettings::resolve(&args)?),
        Command::Agreement(args) => agreement::agreement(&settings, &s::AgreementSettings::resolve(&args)?),
        Command::Score(args) => score::score(&settings, &s::ScoreSettings::resolve(&args)),
        Command::Aup(args) => aup::aup(&settings, &s::AupSettings::resolve(&args)?),
        Command::Prepare(args) => prepare::prepare(&settings, &s::PrepareSettings::resolve(&args)),
        Command::GradeFile(args) => grade_file::grade_file(&settings, &s::GradeFileSettings::resolve(&args)),
        Command::GradeSample(args) => {
            grade_sample::grade_sample(&settings, &s::GradeSampleSettings::resolve(&args))
        }
        Command::Check(args) => check::check(&settings, &s::CheckSettings::resolve(&args)),
        Command::Import(args) => import::import(&settings, &s::ImportSettings::resolve(&args)),
        Command::Worker(args) => worker::worker(&settings, &s::WorkerSettings::resolve(&args)?),
        Command::Status(args) => status::status(&settings, &s::StatusSettings::resolve(&args)?),
    }
}

/// A tokio runtime for commands that need one.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}
