//! `ml2b verify`: re-hash every segment and object, check every chain; with `--rerun`, also
//! re-derive every grade event from its execute event and the answers under `--root`, and
//! require the same event id bit for bit.
//!
//! Prints one line per problem on stdout and exits 1 when there is any.

use super::{ExitStatus, ProgressReporter, runtime};
use crate::cli::VerifyArgs;
use crate::log::verify::{Report, verify_store};
use crate::settings::GlobalSettings;

/// Runs `ml2b verify`.
pub fn verify(settings: &GlobalSettings, args: &VerifyArgs) -> anyhow::Result<ExitStatus> {
    let reporter = ProgressReporter::new(&settings.printer);
    let report = verify_store(&settings.store, &reporter)?;
    let rerun = if args.rerun && report.ok() {
        let stage = crate::stages::grade::GradeStage {
            bench: crate::competition::Benchmark::load(&args.root.root)?,
            store: settings.store.clone(),
            since: None,
        };
        Some(runtime()?.block_on(stage.rederive(&settings.store))?)
    } else {
        None
    };
    let rerun_differs = rerun.as_ref().map_or(0, |(_, d)| d.len());
    if settings.printer.json {
        settings.printer.json(&serde_json::json!({
            "ok": report.ok() && rerun_differs == 0, "stages": report.stages, "objects": report.objects,
            "problems": report.problems,
            "rerun": rerun.as_ref().map(|(n, d)| serde_json::json!({
                "grade": {"events": n, "differ": d.iter().map(|(id, why)| serde_json::json!({"id": id, "reason": why})).collect::<Vec<_>>()}
            })),
        }))?;
    } else {
        print_report(&report);
        if let Some((n, differ)) = &rerun {
            println!("rerun: grade: {n} events re-derived, {} differ", differ.len());
            for (id, why) in differ {
                println!("differs: grade event {id}: {why}");
            }
        }
    }
    if report.ok() && rerun_differs == 0 {
        return Ok(ExitStatus::Success);
    }
    if rerun_differs > 0 {
        eprintln!("error: re-derivation failed: {rerun_differs} grade event(s) differ");
        return Ok(ExitStatus::Failure);
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
