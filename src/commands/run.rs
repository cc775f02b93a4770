//! `ml2b run`: the benchmark end to end.
//!
//! translate-validate → generate (each of `--model`, `--seeds` samples, `--format`s) →
//! execute (the `--backend` sandbox, `-j`) → grade → analyze, over the benchmark root
//! (`--root`, default: the bundled competitions) and the `--competition` / `--language`
//! selection; then verifies the store, prints the headline table (AUP / pass rate per
//! model, averaged over languages, with its samples still missing) and the hash that names
//! the whole run; when no planned sample has a verdict (every unit failed), it says so
//! instead of printing a table of zeros. The environment is checked first (`crate::preflight`; `--skip-preflight`).
//! Every stage skips what the store already holds, so a run killed at any point resumes
//! where it stopped when started again. Exit 1 when a unit failed, a planned sample has no
//! verdict (unless `--accept-incomplete`) or the store does not verify.

use std::io::Write;

use super::{ExitStatus, ProgressBars};
use crate::competition::Benchmark;
use crate::config::{AnalyzeSettings, Entry, TranslateValidateSettings};
use crate::events::Provider;
use crate::log::run_hash;
use crate::log::verify::{Problem, verify_store};
use crate::manifest::Models;
use crate::pipeline::Pipeline;
use crate::settings::{GlobalSettings, Printer, RunSettings, Scope};

/// Runs `ml2b run`.
pub(super) fn run(settings: &GlobalSettings, run: &RunSettings) -> anyhow::Result<ExitStatus> {
    let progress = ProgressBars::new(&settings.printer);
    let pipeline = Pipeline::new(&settings.store, &progress);
    settings.printer.info(plan(run, &pipeline)?);
    if run.benchmark.preflight {
        pipeline.preflight(&run.benchmark)?;
    }
    let selection = run.benchmark.selection.clone();
    let root = selection.root.clone();
    let (tv, checks) = pipeline.translate_validate(&TranslateValidateSettings { selection })?;
    let failing = checks.iter().filter(|c| !c.passed).count();
    settings.printer.info(format!(
        "translate_validate: {} checks ({} new), {failing} fail their gate",
        checks.len(),
        tv.appended()
    ));
    let mut summaries = pipeline.benchmark(&run.benchmark)?;
    summaries.push(pipeline.analyze(&AnalyzeSettings {
        root,
        tables: Vec::new(),
    })?);
    let mut failed = 0;
    for s in &summaries {
        settings
            .printer
            .info(format!("{}: {} new events", s.stage, s.appended()));
        if let Some(r) = &s.requests {
            settings.printer.info(super::stage::requests_line(r));
        }
        for (label, error) in &s.failed {
            settings
                .printer
                .warn(format!("{} {label} failed: {error}", s.stage));
        }
        // A unit of these stages that failed is a recorded fault, and its sample counts as
        // missing in the tables: accepting incomplete tables accepts it.
        let faults = ["generate", "execute", "grade"].contains(&s.stage.as_str());
        if !(faults && run.accept_incomplete) {
            failed += s.failed.len();
        }
    }
    let report = verify_store(&settings.store, crate::events::lookup_columns, &progress)?;
    let heads: Vec<_> = report.stages.iter().map(|s| (s.stage.clone(), s.head)).collect();
    let hash = run_hash(&heads);
    let completeness = super::report::stored_completeness(settings)?;
    if settings.printer.json {
        settings
            .printer
            .json(&serde_json::json!({ "run": hash, "stages": report.stages, "problems": report.problems, "translate_validate": { "checks": checks.len(), "failing": failing }, "completeness": completeness }))?;
    } else {
        for s in &report.stages {
            writeln!(
                settings.printer.stdout(),
                "{}: {} events in {} segments",
                s.stage,
                s.events,
                s.segments
            )?;
        }
        let no_verdict = completeness
            .as_ref()
            .is_some_and(|c| c.planned > 0 && c.missing == c.planned);
        match headline(settings)?.filter(|_| !no_verdict) {
            Some(table) => {
                write!(settings.printer.stdout(), "{table}")?;
                writeln!(settings.printer.stdout(), "run {hash}")?;
            }
            // Every planned sample failed or is still missing: no table of zeros.
            None => {
                writeln!(
                    settings.printer.stdout(),
                    "no headline: no planned sample has a verdict (the failures are listed above; `ml2b query \"SELECT * FROM fault\"` says why each unit failed)"
                )?;
                writeln!(settings.printer.stdout(), "run {hash} (no verdict)")?;
            }
        }
    }
    let complete = super::judge_completeness(&settings.printer, completeness.as_ref(), run.accept_incomplete);
    let verified = outcome(&settings.printer, &report.problems, failed);
    Ok(if complete == ExitStatus::Success {
        verified
    } else {
        complete
    })
}

/// Exit 1, saying why on stderr, when a unit failed or the store does not verify.
fn outcome(printer: &Printer, problems: &[Problem], failed: usize) -> ExitStatus {
    for p in problems {
        printer.warn(format_args!("damaged: {}: {}", p.path.display(), p.message));
    }
    if !problems.is_empty() {
        printer.error(format_args!(
            "the store does not verify: {} problem(s), listed above (`ml2b verify` lists them too)",
            problems.len()
        ));
    }
    if failed > 0 {
        printer.error(format_args!("{failed} unit(s) failed, listed above"));
    }
    if problems.is_empty() && failed == 0 {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    }
}

/// Output tokens per second of the embedded demo model on 2 cores (SmolLM2-135M, measured
/// on the bundled prompts); an estimate for the plan, never a result.
const LOCAL_TOKENS_PER_SECOND: f64 = 45.0;
/// Seconds to read a prompt into the embedded model, about.
const LOCAL_PROMPT_SECONDS: f64 = 4.0;
/// Seconds one bundled solution takes in the sandbox, about (most take a few; a failing
/// one, one or two).
const RUN_SECONDS: f64 = 8.0;

/// What the run will do and about how long it takes, said before it starts.
fn plan(run: &RunSettings, pipeline: &Pipeline) -> anyhow::Result<String> {
    let b = &run.benchmark;
    let bench = pipeline.bench(&b.selection.root)?;
    b.selection.check(&bench)?;
    let models = Models::load(&b.selection.root.join("manifests/models.toml"))?;
    let mut text = match run.scope {
        Scope::Tour => "the tour: the reference solution everywhere, the embedded model on a few \
                        competitions in every language (`ml2b run --full`: every model everywhere)\n"
            .to_string(),
        Scope::Grid => String::new(),
    };
    let (mut seconds, mut runs) = (0.0, 0usize);
    for entry in &b.entries {
        let samples = samples(&bench, entry)? * b.seeds.max(1) as usize;
        let model = models.get(&entry.model);
        let provider = model.map(|m| m.provider);
        let (what, distinct) = match provider {
            Some(Provider::Reference | Provider::Template) => {
                let c = bench
                    .select(&entry.selection.competitions)
                    .map_err(super::InputError)?;
                ("no model calls".to_string(), c.len() * entry.formats.len())
            }
            Some(Provider::Local) => {
                let tokens = model
                    .and_then(|m| m.max_tokens)
                    .unwrap_or(crate::stages::generate::MAX_TOKENS);
                let s = samples as f64 * (f64::from(tokens) / LOCAL_TOKENS_PER_SECOND + LOCAL_PROMPT_SECONDS);
                seconds += s;
                (
                    format!(
                        "about {} of generation (≤{tokens} tokens each at ~{LOCAL_TOKENS_PER_SECOND} tokens/s on 2 cores)",
                        minutes(s)
                    ),
                    samples,
                )
            }
            _ => ("as fast as its endpoint answers".to_string(), samples),
        };
        runs += distinct;
        text.push_str(&format!(
            "  {}: {}; {samples} samples, {what}\n",
            entry.model,
            scope_of(entry)
        ));
    }
    let run_seconds = runs as f64 * RUN_SECONDS / b.sandbox.jobs.max(1) as f64;
    text.push_str(&format!(
        "  then about {runs} sandbox runs (about {} with -j {}), grading and the tables: about {} in all",
        minutes(run_seconds),
        b.sandbox.jobs.max(1),
        minutes(seconds + run_seconds + 60.0)
    ));
    Ok(text)
}

/// The samples of one seed an entry plans (before translate-validate's gate).
fn samples(bench: &Benchmark, entry: &Entry) -> anyhow::Result<usize> {
    let competitions = bench
        .select(&entry.selection.competitions)
        .map_err(super::InputError)?;
    let wanted = |code: &&str| {
        entry.selection.languages.is_empty() || entry.selection.languages.iter().any(|l| l == code)
    };
    let pairs: usize = competitions
        .iter()
        .map(|c| c.languages(&bench.languages).into_iter().filter(wanted).count())
        .sum();
    Ok(pairs * entry.formats.len())
}

/// "12 competitions × 14 languages × 2 formats", or the competition's name when one.
fn scope_of(entry: &Entry) -> String {
    let s = &entry.selection;
    let list = |v: &[String], all: &str| {
        if v.is_empty() {
            all.to_string()
        } else {
            v.join(",")
        }
    };
    let formats: Vec<_> = entry.formats.iter().map(|f| f.harness_mode()).collect();
    format!(
        "{} × {} × {}",
        list(&s.competitions, "every competition"),
        list(&s.languages, "every language"),
        formats.join("+")
    )
}

fn minutes(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{} s", seconds.round())
    } else {
        format!("{} min", (seconds / 60.0).round())
    }
}

/// The headline: every model's average over languages from the latest `aup` table; none
/// when there is no such table.
fn headline(settings: &GlobalSettings) -> anyhow::Result<Option<String>> {
    let Some(e) = crate::stages::analyze::latest(&settings.store)?
        .into_iter()
        .find(|e| e.body.name == "aup")
    else {
        return Ok(None);
    };
    let (schema, batches) = crate::stages::analyze::load(&settings.store, &e.body)?;
    let all = arrow::compute::concat_batches(&schema, &batches)?;
    let language = all
        .column_by_name("language")
        .and_then(|c| c.as_any().downcast_ref::<arrow::array::StringArray>())
        .ok_or_else(|| anyhow::anyhow!("the aup table has no language column"))?;
    let keep = arrow::array::BooleanArray::from_iter(language.iter().map(|l| Some(l == Some("Avg."))));
    let avg = arrow::compute::filter_record_batch(&all, &keep)?;
    let columns = [
        "model",
        "format",
        "aup",
        "aup_invln",
        "win_rate",
        "pass_rate",
        "missing",
    ];
    let indices: Vec<usize> = columns.iter().filter_map(|c| schema.index_of(c).ok()).collect();
    let avg = avg.project(&indices)?;
    Ok(Some(format!(
        "{}\n",
        arrow::util::pretty::pretty_format_batches(&[avg])?
    )))
}
