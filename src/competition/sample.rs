//! MLE-bench's `grade-sample` for one submission file made anywhere, with what a grade
//! event records: validity, the score (rounded as MLE-bench reports it, and exact), r_p
//! against the manifest's recorded baselines, the medal on the competition's MLE-bench
//! leaderboard, and where the verdict departs from MLE-bench's `grade.py`.
//!
//! As MLE-bench, a path that is not a file ending in `.csv` is a missing submission
//! (`submission_exists: false`), invalid. [`SampleReport`] serialises to MLE-bench's report
//! fields (its rank's flattened in), then ml2b's own; `ml2b grade-sample` prints it.

use std::path::Path;

use serde::Serialize;

use super::Competition;
use super::grading::{LeaderboardUseError, ScoreFileError, score_file_graded};
use crate::manifest::competition::BaselineRole;
use crate::metrics::aup::run_ratio;
use crate::metrics::grading::{Direction, Rules, Score};
use crate::metrics::medals::{Rank, round5};
use crate::store::Hash;

/// Why a submission could not be graded at all (an invalid submission is a report).
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    #[error(transparent)]
    Leaderboard(#[from] LeaderboardUseError),
    #[error(transparent)]
    Score(#[from] ScoreFileError),
}

/// MLE-bench's fields of a rank.
#[derive(Serialize)]
pub struct Medals {
    pub gold_threshold: f64,
    pub silver_threshold: f64,
    pub bronze_threshold: f64,
    pub median_threshold: f64,
    pub any_medal: bool,
    pub gold_medal: bool,
    pub silver_medal: bool,
    pub bronze_medal: bool,
    pub above_median: bool,
    pub is_lower_better: bool,
    pub medal: &'static str,
}

impl Medals {
    pub fn of(rank: &Rank) -> Self {
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
pub struct SampleReport {
    pub competition_id: String,
    pub submission_path: String,
    pub submission_exists: bool,
    pub valid_submission: bool,
    /// Rounded to 5 decimals, as MLE-bench reports it.
    pub score: Option<f64>,
    #[serde(flatten)]
    pub medals: Option<Medals>,
    pub leaderboard_blake3: Option<Hash>,
    pub exact_score: Option<f64>,
    pub metric: String,
    pub direction: Direction,
    pub reason: Option<String>,
    pub r_p: Option<f64>,
    pub baseline_score: Option<f64>,
    pub r_p_automl: Option<f64>,
    pub automl_score: Option<f64>,
    pub grader_blake3: Option<Hash>,
    /// Where this verdict departs from MLE-bench's `grade.py`, in a sentence.
    pub mle_bench_departure: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// MLE-bench's report of `submission` for `c`, with ml2b's own fields.
pub fn grade_sample(c: &Competition, submission: &Path) -> Result<SampleReport, SampleError> {
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
    Ok(SampleReport {
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
