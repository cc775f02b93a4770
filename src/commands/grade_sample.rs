//! `ml2b grade-sample SUBMISSION.csv --competition ID`: grade one submission file made
//! anywhere, as MLE-bench's `grade-sample` does, with what a grade event records.
//!
//! The submission is scored by the function the `grade` stage scores predictions with
//! (`competition::grading::score_file`: the same validation and metric), after the
//! competition's private files and its leaderboard are checked against its manifest; r_p is
//! against the manifest's recorded baseline scores (`[baseline]`, `[baseline.autogluon]`;
//! 0 for an invalid submission); a competition with an MLE-bench leaderboard ranks the score
//! on it by MLE-bench's rule (`metrics::medals`). As MLE-bench, a path that is not a file
//! ending in `.csv` is a missing submission (`submission_exists: false`), invalid.
//!
//! `--json` prints MLE-bench's report fields (`competition_id`, `submission_path`,
//! `submission_exists`, `valid_submission`, `score`, and with a leaderboard
//! `gold_threshold`, `silver_threshold`, `bronze_threshold`, `median_threshold`,
//! `any_medal`, `gold_medal`, `silver_medal`, `bronze_medal`, `above_median`,
//! `is_lower_better`), where `score` is rounded to 5 decimals as MLE-bench's grader reports
//! it, then ml2b's own: `medal`, `leaderboard_blake3` (null: no leaderboard, and then none of
//! the medal fields), `exact_score` (the unrounded score, which r_p is computed from),
//! `metric`, `direction`, `reason` (why the submission is invalid), `r_p`,
//! `baseline_score`, `r_p_automl`, `automl_score`, `grader_blake3`,
//! `mle_bench_departure` and `notes`. Without `--json`, the same in a few lines.
//!
//! On an MLE-bench competition ml2b's validity, score and medal are MLE-bench's, except
//! where its `grade.py` is demonstrably wrong (`metrics::grading::rules`, README's grading
//! section): there `mle_bench_departure` (text: a `departs from MLE-bench:` line) says what
//! `grade.py` does with this file instead, so that a medal table can mark the result; it is
//! null where the two agree. Exit 0 for a valid submission, 1 for an invalid one
//! (or data that does not match its manifest), 2 for an unknown competition.

use std::io::Write;

use super::{ExitStatus, InputError};
use crate::competition::sample::{SampleReport, grade_sample as grade};
use crate::competition::{Benchmark, Side};
use crate::settings::{GlobalSettings, GradeSampleSettings};

/// Runs `ml2b grade-sample`.
pub(super) fn grade_sample(
    settings: &GlobalSettings,
    args: &GradeSampleSettings,
) -> anyhow::Result<ExitStatus> {
    let bench = Benchmark::load(&args.root)?;
    let c = bench
        .select(std::slice::from_ref(&args.competition))
        .map_err(InputError)?[0];
    c.verify_files(Side::Private)?;
    let report = grade(c, &args.submission)?;
    if settings.printer.json {
        settings.printer.json(&report)?;
    } else {
        print(settings, &report)?;
    }
    Ok(if report.valid_submission {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

fn print(settings: &GlobalSettings, r: &SampleReport) -> anyhow::Result<()> {
    let mut out = settings.printer.stdout();
    let num = |v: Option<f64>| v.map_or("-".to_string(), |v| v.to_string());
    writeln!(out, "competition: {}", r.competition_id)?;
    writeln!(out, "submission: {}", r.submission_path)?;
    match &r.reason {
        None => writeln!(out, "valid: yes")?,
        Some(reason) => writeln!(out, "valid: no: {reason}")?,
    }
    let direction = crate::events::serde_name(&r.direction);
    writeln!(
        out,
        "score: {} ({}, {direction}; unrounded {})",
        num(r.score),
        r.metric,
        num(r.exact_score)
    )?;
    if let Some(b) = r.baseline_score {
        writeln!(
            out,
            "r_p: {} against the reference solution (score {b})",
            num(r.r_p)
        )?;
    }
    if let Some(b) = r.automl_score {
        writeln!(
            out,
            "r_p automl: {} against AutoGluon (score {b})",
            num(r.r_p_automl)
        )?;
    }
    if let Some(m) = &r.medals {
        let cmp = if m.is_lower_better { "≤" } else { "≥" };
        writeln!(out, "medal: {}", m.medal)?;
        writeln!(
            out,
            "above median: {} (median {})",
            if m.above_median { "yes" } else { "no" },
            m.median_threshold
        )?;
        writeln!(
            out,
            "thresholds: gold {cmp} {}, silver {cmp} {}, bronze {cmp} {} ({} is better)",
            m.gold_threshold,
            m.silver_threshold,
            m.bronze_threshold,
            if m.is_lower_better { "lower" } else { "higher" }
        )?;
    }
    if let Some(departure) = &r.mle_bench_departure {
        writeln!(out, "departs from MLE-bench: {departure}")?;
    }
    for note in &r.notes {
        writeln!(out, "note: {note}")?;
    }
    Ok(())
}
