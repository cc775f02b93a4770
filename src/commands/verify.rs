//! `ml2b verify`: re-hash every segment and object, check every chain.
//!
//! Prints one line per problem on stdout and exits 1 when there is any.

use super::{ExitStatus, ProgressReporter};
use crate::log::verify::{Report, verify_store};
use crate::settings::GlobalSettings;

/// Runs `ml2b verify`.
pub fn verify(settings: &GlobalSettings) -> anyhow::Result<ExitStatus> {
    let reporter = ProgressReporter::new(&settings.printer);
    let report = verify_store(&settings.store, &reporter)?;
    if settings.printer.json {
        settings.printer.json(&serde_json::json!({
            "ok": report.ok(), "stages": report.stages, "objects": report.objects, "problems": report.problems,
        }))?;
    } else {
        print_report(&report);
    }
    if report.ok() {
        return Ok(ExitStatus::Success);
    }
    eprintln!(
        "error: verification failed: {} damaged or missing file(s)",
        report.problems.len()
    );
    Ok(ExitStatus::Failure)
}

fn print_report(report: &Report) {
    for p in &report.problems {
        println!("damaged: {}: {}", p.path.display(), p.message);
    }
    for s in &report.stages {
        let head = s.head.map_or_else(|| "-".to_string(), |h| h.to_hex());
        println!(
            "{}: {} segments, {} events, head {head}",
            s.stage, s.segments, s.events
        );
    }
    println!("objects: {} checked", report.objects);
    if report.ok() {
        println!("ok");
    }
}
