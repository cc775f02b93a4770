//! `ml2b stage <name>`: run one stage over the store and report what it found.
//!
//! `translate-validate` prints one line per (competition, language) with BLEU (0–1), chrF,
//! AC1 (or `-` without ratings) and the verdict, then every failing pair with its reasons;
//! with `--json`, `{"summary": RunSummary, "checks": [TranslationCheck…]}`. Exit 1 when a
//! pair fails its gate (DESIGN.md: a gate failing is the work failing).

use std::sync::Arc;

use super::{ExitStatus, ProgressReporter, runtime};
use crate::cli::{StageArgs, StageCommand, TranslateValidateArgs};
use crate::competition::Benchmark;
use crate::log::{EventBody, StageLog, State};
use crate::settings::GlobalSettings;
use crate::stages::translate_validate::{TranslateValidate, TranslationCheck};
use crate::stages::{RunOptions, RunSummary, Stage, run_stage};

/// Runs `ml2b stage`.
pub fn stage(settings: &GlobalSettings, args: &StageArgs) -> anyhow::Result<ExitStatus> {
    match &args.stage {
        StageCommand::TranslateValidate(a) => {
            let (summary, checks) = translate_validate(settings, a)?;
            report(settings, &summary, &checks)
        }
    }
}

/// Runs translate-validate and returns the checks of the current texts, in plan order.
pub(crate) fn translate_validate(
    settings: &GlobalSettings,
    args: &TranslateValidateArgs,
) -> anyhow::Result<(RunSummary, Vec<TranslationCheck>)> {
    let stage = Arc::new(TranslateValidate {
        bench: Benchmark::load(&args.root.root)?,
        competitions: args.competitions.clone(),
        languages: args.languages.clone(),
    });
    let reporter = ProgressReporter::new(&settings.printer);
    let summary = runtime()?.block_on(run_stage(
        &settings.store,
        stage.clone(),
        &RunOptions::default(),
        &reporter,
    ))?;
    if !summary.failed.is_empty() {
        let list: Vec<String> = summary.failed.iter().map(|(l, e)| format!("{l}: {e}")).collect();
        anyhow::bail!(
            "{} translation checks could not run:\n  {}",
            list.len(),
            list.join("\n  ")
        );
    }
    let log = StageLog::new(&settings.store, TranslationCheck::STAGE)?;
    let mut state = State::default();
    state.apply(log.read_events::<TranslationCheck>(0)?);
    let checks = stage
        .plan(&settings.store)?
        .iter()
        .filter_map(|p| state.get(&p.key).map(|e| e.body.clone()))
        .collect();
    Ok((summary, checks))
}

fn fmt(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.digits$}"))
}

pub(crate) fn report(
    settings: &GlobalSettings,
    summary: &RunSummary,
    checks: &[TranslationCheck],
) -> anyhow::Result<ExitStatus> {
    let failing: Vec<&TranslationCheck> = checks.iter().filter(|c| !c.passed).collect();
    if settings.printer.json {
        settings
            .printer
            .json(&serde_json::json!({ "summary": summary, "checks": checks }))?;
    } else {
        println!(
            "{:<28} {:<4} {:>6} {:>6} {:>6}  verdict",
            "competition", "lang", "BLEU", "chrF", "AC1"
        );
        for c in checks {
            let verdict = if c.passed { "pass" } else { "FAIL" };
            println!(
                "{:<28} {:<4} {:>6} {:>6} {:>6}  {verdict}",
                c.competition,
                c.language,
                fmt(c.bleu, 3),
                fmt(c.chrf, 1),
                fmt(c.ac1, 3)
            );
        }
        println!(
            "{} checks ({} new, {} already in the log); {} fail their gate",
            checks.len(),
            summary.appended(),
            summary.skipped,
            failing.len()
        );
        if checks.iter().all(|c| c.ac1.is_none()) && !checks.is_empty() {
            settings
                .printer
                .info("no human ratings under manifests/annotations/: the AC1 gate was not applied");
        }
        for c in &failing {
            println!("FAIL {}/{}: {}", c.competition, c.language, c.reasons.join("; "));
        }
    }
    Ok(if failing.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
