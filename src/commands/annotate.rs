//! `ml2b annotate import FILE.csv --language CODE`, `ml2b annotate export --language
//! CODE` and `ml2b annotate serve [--language CODE,…] [--port P]`: native speakers' ratings
//! of the language's translations, as events of the `rating` log (`competition::ratings`), from
//! and to the CSV layout of `manifests/annotations/`, or rated on a local page
//! (`viewer::annotate`).
//!
//! `serve` binds 127.0.0.1 (the page writes to the store), says so on stderr, prints the
//! URL on stdout as one line (with `--port 0`, the port the system chose) and serves until
//! stopped.
//!
//! `import` prints how many ratings the file held and how many were new (`--json`: the
//! `Imported`); a bad row is an error naming the file and line (exit 2), and nothing of the
//! file is committed. `export` prints the CSV of the latest rating of each annotator of each
//! field of the current texts. translate-validate then computes AC1 over them for each
//! pair at least two annotators rated.

use std::io::Write;
use std::net::SocketAddr;

use anyhow::Context;

use super::{ExitStatus, InputError};
use crate::competition::Benchmark;
use crate::competition::ratings;
use crate::settings::{AnnotateSettings, GlobalSettings};
use crate::viewer::Annotation;

/// Runs `ml2b annotate`.
pub(super) fn annotate(settings: &GlobalSettings, args: &AnnotateSettings) -> anyhow::Result<ExitStatus> {
    let (AnnotateSettings::Import { root, .. }
    | AnnotateSettings::Export { root, .. }
    | AnnotateSettings::Serve { root, .. }) = args;
    let bench = Benchmark::load(root)?;
    match args {
        AnnotateSettings::Import { language, .. } | AnnotateSettings::Export { language, .. } => {
            translated(&bench, language)?;
        }
        AnnotateSettings::Serve { languages, .. } => {
            for language in languages {
                translated(&bench, language)?;
            }
        }
    }
    match args {
        AnnotateSettings::Import { file, language, .. } => {
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
        AnnotateSettings::Export { language, .. } => {
            let csv = ratings::export_csv(&settings.store, &bench, language)?;
            write!(settings.printer.stdout(), "{csv}")?;
        }
        AnnotateSettings::Serve {
            languages, address, ..
        } => {
            let page = Annotation::new(settings.store.clone(), bench, languages.clone());
            super::runtime()?.block_on(serve(settings, page, *address))?;
        }
    }
    Ok(ExitStatus::Success)
}

/// Refuses `language` unless it is a language of a translation (not English).
fn translated(bench: &Benchmark, language: &str) -> Result<(), InputError> {
    if language != "en" && bench.languages.resolve(language).is_some() {
        return Ok(());
    }
    let codes: Vec<&str> = bench
        .languages
        .all()
        .iter()
        .map(|l| l.code.as_str())
        .filter(|c| *c != "en")
        .collect();
    Err(InputError(format!(
        "`{language}` is no language of a translation (the codes: {})",
        codes.join(", ")
    )))
}

async fn serve(settings: &GlobalSettings, page: Annotation, address: SocketAddr) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| InputError(format!("cannot listen on {address}: {e}")))?;
    let address = listener.local_addr()?;
    settings.printer.info(format!(
        "annotation page for {} on {address}, loopback only; it records ratings and nothing else (stop with Ctrl-C)",
        settings.store.root().display()
    ));
    let mut stdout = settings.printer.stdout();
    writeln!(stdout, "http://{address}/")?;
    stdout.flush()?;
    page.serve(listener)
        .await
        .context("the annotation page stopped")?;
    Ok(())
}
