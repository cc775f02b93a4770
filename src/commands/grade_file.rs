//! `ml2b grade-file FILE.py --competition ID`: execute one solution in the sandbox against
//! the competition's public files and grade its predictions on the private answers.
//!
//! Prints the outcome, score and performance ratio r_p against each baseline (today the
//! reference solution), or with `--json` `{"outcome", "score", "r_p", "findings",
//! "stdout_tail", "stderr_tail", "detail", "wall_seconds", "invalid_reason"}` (and, with
//! `--network proxy`, `"requests"`: every request the proxy saw); `findings`
//! are the static checks' and the leakage detector's (`crate::check`), found before the run. Exit 0 when the solution ran and its
//! predictions were valid, 1 otherwise. The predictions are scored as the grade stage scores
//! them (`competition::grading::score_file`); `ml2b grade-sample` grades a submission file
//! without running anything.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::Serialize;

use super::{ExitStatus, InputError};
use crate::competition::grading::score_file;
use crate::competition::spec::Spec;
use crate::competition::{Benchmark, Competition, Side};
use crate::events::Outcome;
use crate::metrics::aup::run_ratio;
use crate::metrics::grading::Score;
use crate::sandbox::{Job, ProxyRequest, Run, assets};
use crate::settings::{GlobalSettings, GradeFileSettings};

#[derive(Serialize)]
struct Report {
    outcome: Outcome,
    score: Option<f64>,
    r_p: BTreeMap<String, f64>,
    findings: serde_json::Value,
    stdout_tail: String,
    stderr_tail: String,
    detail: Option<String>,
    wall_seconds: f64,
    invalid_reason: Option<String>,
    /// What the proxy saw (`--network proxy` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    requests: Option<Vec<ProxyRequest>>,
}

/// Runs `ml2b grade-file`.
pub(super) fn grade_file(settings: &GlobalSettings, args: &GradeFileSettings) -> anyhow::Result<ExitStatus> {
    let bench = Benchmark::load(&args.root)?;
    let c = competition(&bench, args)?;
    let findings = crate::check::check(&read_source(args)?, args.format);
    let progress = super::ProgressBars::new(&settings.printer);
    let pipeline = crate::pipeline::Pipeline::new(&settings.store, &progress);
    let runner = pipeline.runner(&args.sandbox, &args.root)?;
    let job = Job {
        python: runner.python.clone(),
        harness: assets::materialize("harness.py", assets::HARNESS)?,
        code: args.file.clone(),
        format: args.format,
        public_dir: c.dir.join("public"),
        spec: Spec::of(&c.manifest),
        limits: args.sandbox.limits.clone(),
        proxy: runner.proxy.clone(),
        model_cache: runner.model_cache.clone(),
        gpus: runner.gpus.clone(),
    };
    let scratch = crate::sandbox::scratch_dir()?;
    let out_dir = match &args.out {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir.clone()
        }
        None => scratch.path().to_path_buf(),
    };
    let run = runner.backend.run(&job, &out_dir)?;
    let predictions = run.predictions.clone();
    let mut report = Report::of(run, serde_json::to_value(&findings)?);
    if let Some(predictions) = &predictions {
        report.grade(c, predictions)?;
    }
    print(settings, &report)?;
    Ok(if report.outcome == Outcome::Ok {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

/// The competition `args` names, its data files checked against its manifest.
fn competition<'a>(bench: &'a Benchmark, args: &GradeFileSettings) -> anyhow::Result<&'a Competition> {
    let c = bench
        .select(std::slice::from_ref(&args.competition))
        .map_err(InputError)?[0];
    c.verify_files(Side::Public)?;
    c.verify_files(Side::Private)?;
    Ok(c)
}

/// The solution's source.
fn read_source(args: &GradeFileSettings) -> Result<String, InputError> {
    if !args.file.is_file() {
        return Err(InputError(format!("{}: no such file", args.file.display())));
    }
    std::fs::read_to_string(&args.file)
        .map_err(|e| InputError(format!("cannot read {}: {e}", args.file.display())))
}

impl Report {
    /// The report of `run`, before its predictions are graded.
    fn of(run: Run, findings: serde_json::Value) -> Self {
        let first_error = || {
            run.result
                .get("errors")
                .and_then(|e| e.get(0))
                .and_then(|e| e.as_str())
                .map(str::to_string)
        };
        Self {
            outcome: run.outcome,
            score: None,
            r_p: BTreeMap::new(),
            findings,
            detail: run.detail.or_else(first_error),
            stdout_tail: run.stdout_tail,
            stderr_tail: run.stderr_tail,
            wall_seconds: run.wall_seconds,
            invalid_reason: None,
            requests: run.requests,
        }
    }

    /// Scores `predictions` on `c`'s private answers: the score and r_p, or the reason they
    /// are invalid (the outcome then is `bad_predictions`).
    fn grade(&mut self, c: &Competition, predictions: &Path) -> anyhow::Result<()> {
        let m = &c.manifest;
        match score_file(c, predictions)? {
            Score::Valid { score, .. } => {
                self.score = Some(score);
                if let Some(b) = &m.baseline {
                    let ratio = run_ratio(Some(score), b.score, m.metric.direction);
                    self.r_p.insert("reference".into(), ratio);
                }
            }
            Score::Invalid { reason } => {
                self.outcome = Outcome::BadPredictions;
                self.invalid_reason = Some(reason.to_string());
            }
        }
        Ok(())
    }
}

fn print(settings: &GlobalSettings, r: &Report) -> anyhow::Result<()> {
    if settings.printer.json {
        return settings.printer.json(r);
    }
    let outcome = serde_json::to_value(r.outcome)?;
    writeln!(
        settings.printer.stdout(),
        "outcome: {}",
        outcome.as_str().unwrap_or_default()
    )?;
    if let Some(score) = r.score {
        writeln!(settings.printer.stdout(), "score: {score}")?;
    }
    for (baseline, ratio) in &r.r_p {
        writeln!(settings.printer.stdout(), "r_p vs {baseline}: {ratio:.4}")?;
    }
    if let Some(d) = r.detail.as_ref().or(r.invalid_reason.as_ref()) {
        // The run's own words (its exception): shown, not obeyed, by a terminal.
        writeln!(
            settings.printer.stdout(),
            "detail: {}",
            crate::terminal::visible(d)
        )?;
    }
    writeln!(settings.printer.stdout(), "wall: {:.2} s", r.wall_seconds)?;
    for q in r.requests.iter().flatten() {
        let verdict = if q.allowed { "allowed" } else { "REFUSED" };
        writeln!(
            settings.printer.stdout(),
            "proxy: {} {}:{} {} {verdict} ({} B sent, {} B received)",
            crate::terminal::visible(&q.method),
            crate::terminal::visible(&q.host),
            q.port,
            q.status,
            q.sent,
            q.received
        )?;
    }
    Ok(())
}
