//! `ml2b annotate import FILE.csv --language CODE` and `ml2b annotate export --language
//! CODE`: native speakers' ratings of the language's translations, as events of the
//! `rating` log (`stages::ratings`), from and to the CSV layout of `manifests/annotations/`.
//!
//! `import` prints how many ratings the file held and how many were new (`--json`: the
//! `Imported`); a bad row is an error naming the file and line (exit 2), and nothing of the
//! file is committed. `export` prints the CSV of the latest rating of each annotator of each
//! field of the current texts. translate-validate then computes AC1 over them for each
//! pair at least two annotators rated.

use std::io::Write;

use super::{ExitStatus, InputError};
use crate::competition::Benchmark;
use crate::settings::{AnnotateSettings, GlobalSettings};
use crate::stages::ratings;

/// Runs `ml2b annotate`.
pub(super) fn annotate(settings: &GlobalSettings, args: &AnnotateSettings) -> anyhow::Result<ExitStatus> {
    let (AnnotateSettings::Import { root, language, .. } | AnnotateSettings::Export { root, language }) =
        args;
    let bench = Benchmark::load(root)?;
    if language == "en" || bench.languages.resolve(language).is_none() {
        let codes: Vec<&str> = bench
            .languages
            .all()
            .iter()
            .map(|l| l.code.as_str())
            .filter(|c| *c != "en")
            .collect();
        return Err(InputError(format!(
            "`{language}` is no language of a translation (the codes: {})",
            codes.join(", ")
        ))
        .into());
    }
    match args {
        AnnotateSettings::Import { file, .. } => {
            let imported = ratings::import_csv(&settings.store, &bench, language, file)?;
            if settings.printer.json {
                settings.printer.json(&imported)?;
            } else {
                writeln!(
                    settings.printer.stdout(),
                    "{}: {} ratings of {} subjects by {} ({} new)",
                    file.display(),
                    imported.ratings,
                    imported.subjects,
                    imported.annotators.join(", "),
                    imported.new
                )?;
            }
        }
        AnnotateSettings::Export { .. } => {
            let csv = ratings::export_csv(&settings.store, &bench, language)?;
            write!(settings.printer.stdout(), "{csv}")?;
        }
    }
    Ok(ExitStatus::Success)
}
