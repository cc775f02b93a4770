//! `ml2b grade-file FILE.py --competition ID`: execute one solution in the sandbox against
//! the competition's public files and grade its predictions on the private answers.
//!
//! Prints the outcome, score and performance ratio r_p against each baseline (today the
//! reference solution), or with `--json` `{"outcome", "score", "r_p", "findings",
//! "stdout_tail", "stderr_tail", "detail", "wall_seconds", "invalid_reason"}`; `findings`
//! are the static checks' and the leakage detector's (`crate::check`), found before the run. Exit 0 when the solution ran and its
//! predictions were valid, 1 otherwise.

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use super::{ExitStatus, InputError};
use crate::competition::spec::Spec;
use crate::competition::{Benchmark, Side};
use crate::metrics::aup::run_ratio;
use crate::metrics::grading::{Score, score_files_with};
use crate::sandbox::{Job, Outcome, assets};
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
}

/// Runs `ml2b grade-file`.
pub(super) fn grade_file(settings: &GlobalSettings, args: &GradeFileSettings) -> anyhow::Result<ExitStatus> {
    let root = &args.root;
    let bench = Benchmark::load(root)?;
    let c = bench
        .select(std::slice::from_ref(&args.competition))
        .map_err(InputError)?[0];
    c.verify_files(Side::Public)?;
    c.verify_files(Side::Private)?;
    if !args.file.is_file() {
        return Err(InputError(format!("{}: no such file", args.file.display())).into());
    }
    let source = std::fs::read_to_string(&args.file)
        .map_err(|e| InputError(format!("cannot read {}: {e}", args.file.display())))?;
    let findings = crate::check::check(&source, args.format);
    let progress = super::ProgressBars::new(&settings.printer);
    let pipeline = crate::pipeline::Pipeline {
        store: &settings.store,
        progress: &progress,
    };
    let python = pipeline.python()?;
    let backend = pipeline.sandbox(args.sandbox.backend)?;
    let job = Job {
        python,
        harness: assets::materialize("harness.py", assets::HARNESS)?,
        code: args.file.clone(),
        format: args.format,
        public_dir: c.dir.join("public"),
        spec: Spec::of(&c.manifest),
        limits: args.sandbox.limits.clone(),
    };
    let scratch = crate::sandbox::scratch_dir()?;
    let out_dir = match &args.out {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir.clone()
        }
        None => scratch.path().to_path_buf(),
    };
    let run = backend.run(&job, &out_dir)?;
    let mut report = Report {
        outcome: run.outcome,
        score: None,
        r_p: BTreeMap::new(),
        findings: serde_json::to_value(&findings)?,
        stdout_tail: run.stdout_tail,
        stderr_tail: run.stderr_tail,
        detail: run.detail.or_else(|| {
            run.result
                .get("errors")
                .and_then(|e| e.get(0))
                .and_then(|e| e.as_str())
                .map(str::to_string)
        }),
        wall_seconds: run.wall_seconds,
        invalid_reason: None,
    };
    if let Some(predictions) = &run.predictions {
        let m = &c.manifest;
        match score_files_with(
            &m.metric.name,
            &c.file(Side::Private, "answers.csv"),
            predictions,
            &c.grade_options(),
        )? {
            Score::Valid { score, .. } => {
                report.score = Some(score);
                if let Some(b) = &m.baseline {
                    report.r_p.insert(
                        "reference".into(),
                        run_ratio(Some(score), b.score, m.metric.direction),
                    );
                }
            }
            Score::Invalid { reason } => {
                report.outcome = Outcome::BadPredictions;
                report.invalid_reason = Some(reason.to_string());
            }
        }
    }
    print(settings, &report)?;
    Ok(if report.outcome == Outcome::Ok {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
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
        writeln!(settings.printer.stdout(), "detail: {d}")?;
    }
    writeln!(settings.printer.stdout(), "wall: {:.2} s", r.wall_seconds)?;
    Ok(())
}
