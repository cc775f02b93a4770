//! `ml2b run`: the benchmark end to end.
//!
//! Runs every stage this build provides, in pipeline order, over the benchmark
//! root (`--root`, default: the bundled competitions), then verifies the store and
//! prints the hash that names the whole run. Stages that later
//! releases add (translate-validate, generate, execute, grade, analyze) slot
//! into [`PIPELINE`]; until one exists `run` says so rather than pretending.

use super::{ExitStatus, ProgressReporter};
use crate::cli::{RunArgs, TranslateValidateArgs};
use crate::log::run_hash;
use crate::log::verify::verify_store;
use crate::settings::GlobalSettings;

/// The pipeline's stages, in order, with whether this build provides them.
pub const PIPELINE: [(&str, bool); 5] = [
    ("translate_validate", true),
    ("generate", false),
    ("execute", false),
    ("grade", false),
    ("analyze", false),
];

/// Runs `ml2b run`.
pub fn run(settings: &GlobalSettings, args: &RunArgs) -> anyhow::Result<ExitStatus> {
    let tv_args = TranslateValidateArgs {
        root: crate::cli::RootArgs {
            root: args.root.root.clone(),
        },
        competitions: Vec::new(),
        languages: Vec::new(),
    };
    let (tv, checks) = super::stage::translate_validate(settings, &tv_args)?;
    let failing = checks.iter().filter(|c| !c.passed).count();
    settings.printer.info(format!(
        "translate_validate: {} checks ({} new), {failing} fail their gate",
        checks.len(),
        tv.appended()
    ));
    let missing: Vec<&str> = PIPELINE.iter().filter(|(_, has)| !has).map(|(n, _)| *n).collect();
    if !missing.is_empty() {
        settings.printer.warn(format!(
            "this build does not provide these stages yet: {}",
            missing.join(", ")
        ));
    }
    let reporter = ProgressReporter::new(&settings.printer);
    let report = verify_store(&settings.store, &reporter)?;
    let heads: Vec<_> = report.stages.iter().map(|s| (s.stage.clone(), s.head)).collect();
    let run = run_hash(&heads);
    if settings.printer.json {
        settings
            .printer
            .json(&serde_json::json!({ "run": run, "stages": report.stages, "problems": report.problems, "translate_validate": { "checks": checks.len(), "failing": failing } }))?;
    } else {
        for s in &report.stages {
            println!("{}: {} events in {} segments", s.stage, s.events, s.segments);
        }
        println!("run {run}");
    }
    Ok(if report.ok() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
