//! `ml2b run`: the benchmark end to end.
//!
//! Runs every stage this build provides, in pipeline order, over the benchmark
//! root (`--root`, default: the bundled competitions), then verifies the store and
//! prints the hash that names the whole run: translate-validate, generate (with `--model`,
//! default the reference solutions), execute (local sandbox, `-j`), grade. Stages later
//! releases add (analyze) slot into [`PIPELINE`]; until one exists `run` says so rather
//! than pretending. Exit 1 when a unit failed or the store does not verify.

use super::{ExitStatus, ProgressReporter};
use crate::cli::{ExecuteArgs, GenerateArgs, GradeArgs, RootArgs, RunArgs, TranslateValidateArgs};
use crate::log::run_hash;
use crate::log::verify::verify_store;
use crate::settings::GlobalSettings;

/// The pipeline's stages, in order, with whether this build provides them.
pub const PIPELINE: [(&str, bool); 5] = [
    ("translate_validate", true),
    ("generate", true),
    ("execute", true),
    ("grade", true),
    ("analyze", false),
];

/// Runs `ml2b run`.
pub fn run(settings: &GlobalSettings, args: &RunArgs) -> anyhow::Result<ExitStatus> {
    let root = || RootArgs {
        root: args.root.root.clone(),
    };
    let tv_args = TranslateValidateArgs {
        root: root(),
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
    let generated = super::stage::generate(
        settings,
        &GenerateArgs {
            select: tv_args,
            model: args.model.clone(),
            formats: Vec::new(),
            force: false,
        },
    )?;
    let executed = super::stage::execute(
        settings,
        &ExecuteArgs {
            root: root(),
            jobs: args.jobs,
            timeout: args.timeout,
            memory: 8 << 30,
            since: None,
        },
    )?;
    let graded = super::stage::grade(
        settings,
        &GradeArgs {
            root: root(),
            since: None,
        },
    )?;
    let mut failed = 0;
    for s in [&generated, &executed, &graded] {
        settings
            .printer
            .info(format!("{}: {} new events", s.stage, s.appended()));
        for (label, error) in &s.failed {
            settings
                .printer
                .warn(format!("{} {label} failed: {error}", s.stage));
        }
        failed += s.failed.len();
    }
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
    Ok(if report.ok() && failed == 0 {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
