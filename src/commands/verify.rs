//! `ml2b verify`: re-hash every segment and object, check every chain; with `--rerun`, also
//! re-derive every grade event from its execute event and the answers under `--root`, and
//! every translate-validate event of the current texts, every analyze event of the current log heads from the logs and the manifests, and
//! require the same event ids bit for bit.
//!
//! Checks too that everything an event names still exists (`crate::log::references`), and
//! rebuilds each sound log's row index (`crate::log::rows`), naming any index file it
//! removed (a cache: not a problem).
//! Prints one line per problem on stdout, its cause included, and exits 1 when there is any.
//! A store path that does not exist, or is not a folder, is an input error (exit 2): there
//! is nothing to verify, which must not read as a store that verified. An existing empty
//! store verifies.

use std::io::Write;

use super::query::require_store;
use super::{ExitStatus, ProgressBars};
use crate::log::verify::{Report, verify_store};
use crate::pipeline::{Pipeline, Rederived};
use crate::settings::{GlobalSettings, Printer, VerifySettings};

/// Runs `ml2b verify`.
pub(super) fn verify(settings: &GlobalSettings, args: &VerifySettings) -> anyhow::Result<ExitStatus> {
    require_store(&settings.store)?;
    let reporter = ProgressBars::new(&settings.printer);
    let report = verify_store(&settings.store, crate::events::lookup_columns, &reporter)?;
    let rerun = if args.rerun && report.ok() {
        Some(rerun(settings, args)?)
    } else {
        None
    };
    let rerun_differs: usize = rerun.iter().flatten().map(|(_, _, d)| d.len()).sum();
    if settings.printer.json {
        settings.printer.json(&serde_json::json!({
            "ok": report.ok() && rerun_differs == 0, "stages": report.stages, "objects": report.objects,
            "problems": report.problems, "index": report.index.iter().map(|(stage, c)| (stage.clone(), serde_json::json!(c))).collect::<serde_json::Map<_, _>>(),
            "rerun": rerun.as_ref().map(|stages| stages.iter().map(|(stage, n, d)| (stage.to_string(), serde_json::json!({
                "events": n, "differ": d.iter().map(|(id, why)| serde_json::json!({"id": id, "reason": why})).collect::<Vec<_>>()
            }))).collect::<serde_json::Map<_, _>>()),
        }))?;
    } else {
        print_report(&report, &settings.printer)?;
        for (stage, n, differ) in rerun.iter().flatten() {
            writeln!(
                settings.printer.stdout(),
                "rerun: {stage}: {n} events re-derived, {} differ",
                differ.len()
            )?;
            for (id, why) in differ {
                writeln!(settings.printer.stdout(), "differs: {stage} event {id}: {why}")?;
            }
        }
    }
    if report.ok() && rerun_differs == 0 {
        return Ok(ExitStatus::Success);
    }
    if rerun_differs > 0 {
        settings.printer.error(format_args!(
            "re-derivation failed: {rerun_differs} event(s) differ"
        ));
        return Ok(ExitStatus::Failure);
    }
    settings.printer.error(format_args!(
        "verification failed: {} problem(s), listed above",
        report.problems.len()
    ));
    Ok(ExitStatus::Failure)
}

/// Re-derives the pure stages: translate-validate, grade, analyze.
fn rerun(settings: &GlobalSettings, args: &VerifySettings) -> anyhow::Result<Rederived> {
    let progress = ProgressBars::new(&settings.printer);
    let pipeline = Pipeline::new(&settings.store, &progress);
    Ok(pipeline.rederive(&args.root)?)
}

fn print_report(report: &Report, printer: &Printer) -> std::io::Result<()> {
    for p in &report.problems {
        writeln!(printer.stdout(), "damaged: {}: {}", p.path.display(), p.message)?;
    }
    for s in &report.stages {
        let head = s.head.map_or_else(|| "-".to_string(), |h| h.to_hex());
        writeln!(
            printer.stdout(),
            "{}: {} segments, {} events, head {head}",
            s.stage,
            s.segments,
            s.events
        )?;
    }
    writeln!(printer.stdout(), "objects: {} checked", report.objects)?;
    for (stage, checked) in &report.index {
        for path in &checked.removed {
            writeln!(
                printer.stdout(),
                "index: {stage}: removed {} (stale or damaged; rebuilt from the log)",
                path.display()
            )?;
        }
    }
    if report.ok() {
        writeln!(printer.stdout(), "ok")?;
    }
    Ok(())
}
