//! `ml2b stage <name>`: run one stage over the store and report what it found.
//!
//! `translate-validate` prints one line per (competition, language) with BLEU (0–1), chrF,
//! AC1 (or `-` without ratings) and the verdict, then every failing pair with its reasons;
//! with `--json`, `{"summary": RunSummary, "checks": [TranslationCheck…]}`. Exit 1 when a
//! pair fails its gate (DESIGN.md: a gate failing is the work failing).
//! `generate`, `execute`, `grade` and `analyze` print their run summary (`--json`: the
//! `RunSummary`) and, for execute and grade, a count per outcome, for analyze the rows of
//! each table; they exit 1 when a unit could not run.

use std::sync::Arc;

use super::{ExitStatus, ProgressReporter, runtime};
use crate::cli::Agent;
use crate::cli::{
    AnalyzeArgs, ExecuteArgs, GenerateArgs, GradeArgs, StageArgs, StageCommand, TranslateValidateArgs,
};
use crate::competition::Benchmark;
use crate::log::{EventBody, StageLog};
use crate::manifest::models::Provider;
use crate::manifest::{Model, Models};
use crate::sandbox::{Format, Limits};
use crate::settings::GlobalSettings;
use crate::stages::analyze::Analyze;
use crate::stages::execute::{Execute, Execution, Runner};
use crate::stages::generate::Generate;
use crate::stages::generate::aide::{self, Aide};
use crate::stages::generate::provider::is_floating_alias;
use crate::stages::generate::responder::{Responder, client_config};
use crate::stages::grade::{Grade, GradeStage};
use crate::stages::translate_validate::{TranslateValidate, TranslationCheck};
use crate::stages::{RunOptions, RunSummary, Stage, run_stage};

/// Runs `ml2b stage`.
pub fn stage(settings: &GlobalSettings, args: &StageArgs) -> anyhow::Result<ExitStatus> {
    match &args.stage {
        StageCommand::TranslateValidate(a) => {
            let (summary, checks) = translate_validate(settings, a)?;
            report(settings, &summary, &checks)
        }
        StageCommand::Generate(a) => summarize(settings, &generate(settings, a)?, None),
        StageCommand::Execute(a) => {
            let summary = execute(settings, a)?;
            let outcomes = count_latest::<Execution>(settings, |x| x.outcome.clone())?;
            summarize(settings, &summary, Some(outcomes))
        }
        StageCommand::Analyze(a) => {
            let summary = analyze(settings, a)?;
            let rows = crate::stages::analyze::latest(&settings.store)?
                .into_iter()
                .map(|e| (e.body.name, e.body.rows))
                .collect();
            summarize(settings, &summary, Some(rows))
        }
        StageCommand::Grade(a) => {
            let summary = grade(settings, a)?;
            let verdicts =
                count_latest::<Grade>(
                    settings,
                    |g| if g.valid { "valid".into() } else { "invalid".into() },
                )?;
            summarize(settings, &summary, Some(verdicts))
        }
    }
}

fn run<S: Stage>(settings: &GlobalSettings, stage: S, concurrency: usize) -> anyhow::Result<RunSummary> {
    let reporter = ProgressReporter::new(&settings.printer);
    let options = RunOptions {
        concurrency,
        ..RunOptions::default()
    };
    Ok(runtime()?.block_on(run_stage(&settings.store, Arc::new(stage), &options, &reporter))?)
}

/// Runs generate.
pub(crate) fn generate(settings: &GlobalSettings, args: &GenerateArgs) -> anyhow::Result<RunSummary> {
    let root = &args.select.root.root;
    let models = Models::load(&root.join("manifests/models.toml"))?;
    let model = models
        .get(&args.model)
        .ok_or_else(|| super::InputError(format!("no model `{}` in manifests/models.toml", args.model)))?
        .clone();
    let model = Model {
        max_tokens: args.max_tokens.or(model.max_tokens),
        ..model
    };
    if matches!(model.provider, Provider::Openai | Provider::Anthropic) && is_floating_alias(&model.model) {
        settings.printer.warn(format!(
            "model `{}`: `{}` is a floating alias (no dated snapshot); its answers may change over time",
            model.name, model.model
        ));
    }
    let formats = if args.formats.is_empty() {
        vec![Format::Modular, Format::Mono]
    } else {
        args.formats.clone()
    };
    let timeout = std::time::Duration::from_secs(args.request_timeout);
    let responder = Responder::for_model(&model, client_config(&model, timeout))
        .map_err(|e| super::InputError(e.to_string()))?;
    let stage = Generate {
        model,
        formats,
        seeds: args.seeds,
        translations: TranslateValidate {
            bench: Benchmark::load(root)?,
            competitions: args.select.competitions.clone(),
            languages: args.select.languages.clone(),
        },
        force: args.force,
        store: settings.store.clone(),
        responder,
        limits: crate::stages::generate::prompt::Limits {
            timeout_s: args.timeout,
            memory_gib: 8.0,
            cpus: 2,
        },
        aide: aide(settings, args)?,
    };
    run(settings, stage, 4)
}

/// The AIDE agent that `--agent aide` asks for, with its sandbox; `None` for one-shot.
fn aide(settings: &GlobalSettings, args: &GenerateArgs) -> anyhow::Result<Option<Arc<Aide>>> {
    let a = &args.agent;
    if a.agent != Agent::Aide {
        return Ok(None);
    }
    if !(0.0..=1.0).contains(&a.debug_prob) {
        return Err(super::InputError(format!("--debug-prob {}: not a probability", a.debug_prob)).into());
    }
    if !(a.validation_fraction > 0.0 && a.validation_fraction < 1.0) {
        return Err(super::InputError(format!(
            "--validation-fraction {}: must be between 0 and 1",
            a.validation_fraction
        ))
        .into());
    }
    let runner = Runner {
        python: super::reporters::python_env(&settings.printer)?,
        backend: super::reporters::sandbox(&settings.printer, args.backend)?,
        limits: Limits {
            wall: std::time::Duration::from_secs(args.timeout),
            ..Limits::default()
        },
    };
    Ok(Some(Arc::new(Aide {
        config: a.aide_config(),
        trials: aide::trial::Trials::new(runner, args.jobs)?,
    })))
}

/// Runs execute with the chosen sandbox.
pub(crate) fn execute(settings: &GlobalSettings, args: &ExecuteArgs) -> anyhow::Result<RunSummary> {
    let root = &args.root.root;
    let python = super::reporters::python_env(&settings.printer)?;
    let backend = super::reporters::sandbox(&settings.printer, args.backend)?;
    let stage = Execute {
        bench: Benchmark::load(root)?,
        runner: Runner {
            backend,
            python,
            limits: Limits {
                wall: std::time::Duration::from_secs(args.timeout),
                memory_bytes: args.memory,
                ..Limits::default()
            },
        },
        store: settings.store.clone(),
        since: parse_since(args.since.as_deref())?,
    };
    run(settings, stage, args.jobs.max(1))
}

/// Runs grade.
pub(crate) fn grade(settings: &GlobalSettings, args: &GradeArgs) -> anyhow::Result<RunSummary> {
    let since = parse_since(args.since.as_deref())?;
    let stage = GradeStage {
        bench: Benchmark::load(&args.root.root)?,
        store: settings.store.clone(),
        since,
    };
    run(settings, stage, 2)
}

/// Runs analyze.
pub(crate) fn analyze(settings: &GlobalSettings, args: &AnalyzeArgs) -> anyhow::Result<RunSummary> {
    for t in &args.tables {
        if crate::query::catalog::table(t).is_none() {
            let names: Vec<_> = crate::query::catalog::TABLES.iter().map(|q| q.name).collect();
            return Err(super::InputError(format!(
                "--table {t}: no such table; queries/ has {}",
                names.join(", ")
            ))
            .into());
        }
    }
    let stage = Analyze::new(
        Benchmark::load(&args.root.root)?,
        settings.store.clone(),
        args.tables.clone(),
    );
    run(settings, stage, 1)
}

/// Parses a `--since` hash.
fn parse_since(since: Option<&str>) -> Result<Option<crate::store::Hash>, super::InputError> {
    since
        .map(|h| {
            h.parse()
                .map_err(|_| super::InputError(format!("--since {h}: not a 64-digit hash")))
        })
        .transpose()
}

/// Counts the log's events by a key.
fn count_latest<B: EventBody>(
    settings: &GlobalSettings,
    key: impl Fn(&B) -> String,
) -> anyhow::Result<std::collections::BTreeMap<String, u64>> {
    let log = StageLog::new(&settings.store, B::STAGE)?;
    let state = log.state::<B>(0)?;
    let mut counts = std::collections::BTreeMap::new();
    for e in state.events() {
        *counts.entry(key(&e.body)).or_insert(0) += 1;
    }
    Ok(counts)
}

fn summarize(
    settings: &GlobalSettings,
    summary: &RunSummary,
    counts: Option<std::collections::BTreeMap<String, u64>>,
) -> anyhow::Result<ExitStatus> {
    if settings.printer.json {
        settings
            .printer
            .json(&serde_json::json!({ "summary": summary, "counts": counts }))?;
    } else {
        println!(
            "{}: {} planned, {} already in the log, {} new events",
            summary.stage,
            summary.planned,
            summary.skipped,
            summary.appended()
        );
        for (k, n) in counts.iter().flatten() {
            println!("  {k}: {n}");
        }
        for (label, error) in &summary.failed {
            println!("  FAILED {label}: {error}");
        }
    }
    Ok(if summary.failed.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
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
    let state = log.state::<TranslationCheck>(0)?;
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
