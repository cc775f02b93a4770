//! One module per command. Each takes resolved settings and returns an exit status.

mod agreement;
mod annotate;
mod aup;
mod baselines;
mod bleu;
mod check;
mod common;
mod doctor;
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
mod translate;
mod verify;
mod view;
mod worker;

use crate::cli::{Cli, Command};
use crate::settings::GlobalSettings;

pub use crate::config::InputError;
pub use common::{ExitStatus, status_of};
pub(crate) use common::{judge_completeness, print_report, runtime};
pub use progress::ProgressBars;

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
        Command::Translate(args) => translate::translate(&settings, &s::TranslateSettings::resolve(&args)),
        Command::Annotate(args) => annotate::annotate(&settings, &s::AnnotateSettings::resolve(&args)),
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
        Command::GradeFile(args) => grade_file::grade_file(&settings, &s::GradeFileSettings::resolve(&args)?),
        Command::GradeSample(args) => {
            grade_sample::grade_sample(&settings, &s::GradeSampleSettings::resolve(&args))
        }
        Command::Check(args) => check::check(&settings, &s::CheckSettings::resolve(&args)),
        Command::Import(args) => import::import(&settings, &s::ImportSettings::resolve(&args)),
        Command::Worker(args) => worker::worker(&settings, &s::WorkerSettings::resolve(&args)?),
        Command::Status(args) => status::status(&settings, &s::StatusSettings::resolve(&args)?),
        Command::Doctor(args) => doctor::doctor(&settings, &s::DoctorSettings::resolve(&args)?),
    }
}
