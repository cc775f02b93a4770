//! `ml2b import`: bring competitions from the original ML2B release or from MLE-bench
//! prepared folders into the benchmark root (`competition::import`). All or nothing: a
//! competition that cannot be imported fails the whole import and nothing is written.
//! Output: one line per imported competition (id, how it is graded — `native` or
//! `program` —, metric, languages) and its import notes, or with `--json`
//! `[{"id", "languages", "metric", "grading", "notes"}]`.

use std::io::Write;

use super::ExitStatus;

use crate::competition::import::{self, ml2b, mle_bench};
use crate::manifest::Languages;
use crate::settings::{GlobalSettings, ImportLayout, ImportSettings};

/// Runs `ml2b import`.
pub(super) fn import(settings: &GlobalSettings, args: &ImportSettings) -> anyhow::Result<ExitStatus> {
    let root = &args.root;
    let drafts = match args.layout {
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
    let imported = import::install(root, drafts)?;
    if settings.printer.json {
        settings.printer.json(&imported)?;
    } else {
        for c in &imported {
            writeln!(
                settings.printer.stdout(),
                "{:<40} {:<8} {:<12} {}",
                c.id,
                c.grading,
                c.metric,
                c.languages.join(" ")
            )?;
            for note in &c.notes {
                writeln!(settings.printer.stdout(), "  note: {note}")?;
            }
        }
    }
    Ok(ExitStatus::Success)
}
