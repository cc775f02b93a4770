//! `ml2b import`: bring competitions from the original ML2B release or from MLE-bench
//! prepared folders into the benchmark root (`competition::import`). What can be imported
//! is; each competition that cannot is refused whole (nothing of it is written) and listed
//! with its reason on stderr. Exit status: 0 when everything was imported, 1 when something
//! was refused (0 with `--allow-refused`); with `--strict` a refusal imports nothing (exit
//! 1). A wrong selection or an unreadable source (no such `--only` id, no
//! `competitions.json`) is an input error (exit 2) and imports nothing.
//!
//! Output: one line per imported competition (id, how it is graded — `native` or
//! `program` —, metric, languages) and its import notes; with `--json`
//! `{"imported": [{"id", "languages", "metric", "grading", "notes"}], "refused": [{"id",
//! "reason"}]}`.

use std::io::Write;

use super::ExitStatus;

use crate::competition::import::{self, Policy, Report, ml2b, mle_bench};
use crate::manifest::Languages;
use crate::settings::{GlobalSettings, ImportLayout, ImportSettings, Printer, Refusals};

/// Runs `ml2b import`.
pub(super) fn import(settings: &GlobalSettings, args: &ImportSettings) -> anyhow::Result<ExitStatus> {
    let root = &args.root;
    let found = match args.layout {
        ImportLayout::Ml2b => {
            let languages = Languages::load(&root.join("manifests/languages.toml"))?;
            ml2b::read(&args.dir, &languages, &args.only, &args.licence)?
        }
        ImportLayout::MleBench => mle_bench::read(
            &args.dir,
            &mle_bench::Options {
                only: &args.only,
                metric: args.metric.as_deref(),
                licence: &args.licence,
                repo: args.repo.as_deref(),
                split: args.split.as_deref(),
            },
        )?,
    };
    let policy = match args.refusals {
        Refusals::Strict => Policy::Strict,
        Refusals::Fail | Refusals::Allow => Policy::Partial,
    };
    let report = import::install(root, found, policy);
    print(&settings.printer, &report)?;
    Ok(status(&settings.printer, &report, args.refusals))
}

fn print(printer: &Printer, report: &Report) -> anyhow::Result<()> {
    if printer.json {
        printer.json(report)?;
    } else {
        for c in &report.imported {
            writeln!(
                printer.stdout(),
                "{:<40} {:<8} {:<12} {}",
                c.id,
                c.grading,
                c.metric,
                c.languages.join(" ")
            )?;
            for note in &c.notes {
                writeln!(printer.stdout(), "  note: {note}")?;
            }
        }
    }
    for r in &report.refused {
        printer.error(format_args!("refused `{}`: {}", r.id, r.reason));
    }
    Ok(())
}

/// The exit status, and the summary line saying why it is not 0.
fn status(printer: &Printer, report: &Report, refusals: Refusals) -> ExitStatus {
    let refused = report.refused.len();
    if refused == 0 {
        return ExitStatus::Success;
    }
    match refusals {
        Refusals::Allow => {
            printer.warn(format_args!(
                "{refused} competition(s) refused, {} imported (--allow-refused)",
                report.imported.len()
            ));
            ExitStatus::Success
        }
        Refusals::Fail => {
            printer.error(format_args!(
                "{refused} competition(s) refused, {} imported (--allow-refused exits 0; \
                 --strict imports nothing unless everything can be)",
                report.imported.len()
            ));
            ExitStatus::Failure
        }
        Refusals::Strict => {
            printer.error(format_args!(
                "{refused} competition(s) refused, so nothing was imported (--strict)"
            ));
            ExitStatus::Failure
        }
    }
}
