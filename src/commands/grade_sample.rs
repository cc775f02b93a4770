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
use std::path::Path;

use serde::Serialize;

use super::{ExitStatus, InputError};
use crate::competition::grading::score_file_graded;
use crate::competition::{Benchmark, Competition, Side};
use crate::manifest::competition::BaselineRole;
use crate::metrics::aup::run_ratio;
use crate::metrics::grading::{Direction, Rules, Score};
use crate::metrics::medals::{Rank, round5};
use crate::settings::{GlobalSettings, GradeSampleSettings};
use crate::store::Hash;

/// MLE-bench's fields of a rank.
#[derive(Serialize)]
struct Medals {
    gold_threshold: f64,
    silver_threshold: f64,
    bronze_threshold: f64,
    median_threshold: f64,
    any_medal: bool,
    gold_medal: bool,
    silver_medal: bool,
    bronze_medal: bool,
    above_median: bool,
    is_lower_better: bool,
    medal: &'static str,
}

impl Medals {
    fn of(rank: &Rank) -> Self {
        use crate::metrics::medals::Medal;
        let t = rank.thresholds;
        Self {
            gold_threshold: t.gold,
            silver_threshold: t.silver,
            bronze_threshold: t.bronze,
            median_threshold: t.median,
            any_medal: rank.medal.is_medal(),
            gold_medal: rank.medal == Medal::Gold,
            silver_medal: rank.medal == Medal::Silver,
            bronze_medal: rank.medal == Medal::Bronze,
            above_median: rank.above_median,
            is_lower_better: rank.lower_is_better,
            medal: rank.medal.as_str(),
        }
    }
}

#[derive(Serialize)]
struct Report {
    competition_id: String,
    submission_path: String,
    submission_exists: bool,
    valid_submission: bool,
    /// Rounded to 5 decimals, as MLE-bench reports it.
    score: Option<f64>,
    #[serde(flatten)]
    medals: Option<Medals>,
    leaderboard_blake3: Option<Hash>,
    exact_score: Option<f64>,
    metric: String,
    direction: Direction,
    reason: Option<String>,
    r_p: Option<f64>,
    baseline_score: Option<f64>,
    r_p_automl: Option<f64>,
    automl_score: Option<f64>,
    grader_blake3: Option<Hash>,
    /// Where this verdict departs from MLE-bench's `grade.py`, in a sentence.
    mle_bench_departure: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
}

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

/// The report of `submission` for `c`.
fn grade(c: &Competition, submission: &Path) -> anyhow::Result<Report> {
    let m = &c.manifest;
    let ranking = c.leaderboard()?;
    let exists = submission.is_file()
        && submission
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let mut departure = None;
    let scored = if exists {
        let graded = score_file_graded(c, submission, Rules::default())?;
        departure = graded.departure;
        match graded.score {
            Score::Valid { score, .. } => Ok(score),
            Score::Invalid { reason } => Err(reason.to_string()),
        }
    } else if submission.is_file() {
        Err("the submission is not a .csv file (MLE-bench grades CSV submissions only)".into())
    } else {
        Err(format!("{}: no such file", submission.display()))
    };
    let score = scored.as_ref().ok().copied();
    let recorded = |role| {
        m.baseline
            .as_ref()
            .and_then(|b| b.recorded(role))
            .map(|r| r.score)
    };
    let ratio = |baseline: Option<f64>| {
        baseline.map(|b| score.map_or(0.0, |s| run_ratio(Some(s), b, m.metric.direction)))
    };
    let (baseline_score, automl_score) = (recorded(BaselineRole::Reference), recorded(BaselineRole::Automl));
    let rank = ranking.as_ref().map(|r| r.leaderboard.rank(score));
    let mut notes = Vec::new();
    match (&ranking, &rank) {
        (None, _) => notes.push(format!(
            "competition `{}` has no MLE-bench leaderboard: no medals",
            c.id()
        )),
        (Some(r), Some(rank)) => {
            let scores = r.leaderboard.scores();
            let minimize = m.metric.direction == Direction::Minimize;
            if scores[0] != scores[scores.len() - 1] && rank.lower_is_better != minimize {
                notes.push(format!(
                    "the leaderboard ranks {} scores first although the metric is {}d; medals follow the leaderboard, as MLE-bench's",
                    if rank.lower_is_better { "lower" } else { "higher" },
                    crate::events::serde_name(&m.metric.direction),
                ));
            }
        }
        (Some(_), None) => {}
    }
    Ok(Report {
        competition_id: c.id().to_string(),
        submission_path: submission.display().to_string(),
        submission_exists: exists,
        valid_submission: score.is_some(),
        score: score.map(round5),
        medals: rank.as_ref().map(Medals::of),
        leaderboard_blake3: ranking.as_ref().map(|r| r.blake3),
        exact_score: score,
        metric: m.metric.name.clone(),
        direction: m.metric.direction,
        reason: scored.err(),
        r_p: ratio(baseline_score),
        baseline_score,
        r_p_automl: ratio(automl_score),
        automl_score,
        grader_blake3: c.grader_blake3(),
        mle_bench_departure: departure,
        notes,
    })
}

fn print(settings: &GlobalSettings, r: &Report) -> anyhow::Result<()> {
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
