//! The `grade` log: one execution scored on the private answers, with r_p against both
//! baselines and, for an MLE-bench competition, MLE-bench's medal.
//!
//! Written by `stages::grade`; read by `ml2b baselines`, the views and the report.
//!
//! Schema versions: 2 ended at `answers_blake3`; 3 added the eight nullable columns after
//! it (`grader_blake3` … `median_threshold`), which read as null in the segments of
//! version 2. [`GradeV2`] is the body of version 2, whose JSON the events written then
//! hash: `GradeStage::rederive` re-derives such an event as it was written. 4 keeps 3's
//! columns and changes the verdicts: its grades follow the grading rules V2
//! (`metrics::grading::rules`: the reference's rules, MLE-bench's `grade.py` checks), where
//! 2 and 3 followed V1; [`GradeV3`] hashes a body as version 3 did, so that
//! `GradeStage::rederive` re-derives a version-3 event, with rules V1, as it was written.

use serde::{Deserialize, Serialize};

use crate::events::{Format, Outcome};
use crate::log::EventBody;
use crate::store::Hash;

/// One grade.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grade {
    pub competition: String,
    pub format: Format,
    pub code_blake3: Hash,
    pub metric: String,
    /// `minimize` or `maximize`.
    pub direction: String,
    /// The execution's outcome.
    pub outcome: Outcome,
    pub valid: bool,
    pub score: Option<f64>,
    pub reason: Option<String>,
    /// The reference solution's score: its run's (`baseline_run`), else the manifest's.
    pub baseline_score: Option<f64>,
    /// The reference solution's execute event compared with (none: the manifest's score).
    pub baseline_run: Option<Hash>,
    /// r_p against the reference solution; 0 for a failed or invalid run.
    pub r_p: Option<f64>,
    /// The algorithmic baseline's (AutoGluon's) score, run and r_p, likewise.
    pub automl_score: Option<f64>,
    pub automl_run: Option<Hash>,
    pub r_p_automl: Option<f64>,
    /// Which baseline this run itself is (`reference`, `automl`), if any.
    pub role: Option<String>,
    /// A baseline's own run: whether it scored inside the manifest's expected range (none:
    /// the manifest records no range for it, or the run is invalid).
    pub in_expected_range: Option<bool>,
    pub answers_blake3: Hash,
    /// Since version 3. The grading program's files (metric `program`): one blake3 over
    /// the manifest's `[mle_bench.program]` (`Competition::grader_blake3`); none for a
    /// metric ml2b computes itself.
    #[serde(default)]
    pub grader_blake3: Option<Hash>,
    /// The MLE-bench leaderboard ranked against (none: the competition has none, and every
    /// field below is none too).
    #[serde(default)]
    pub leaderboard_blake3: Option<Hash>,
    /// `gold`, `silver`, `bronze` or `none` (`none` too for a failed or invalid run), by
    /// MLE-bench's rule (`metrics::medals`).
    #[serde(default)]
    pub medal: Option<String>,
    /// Strictly better than the leaderboard's median (false for a failed or invalid run).
    #[serde(default)]
    pub above_median: Option<bool>,
    /// The leaderboard's thresholds (filled for every run, as MLE-bench reports them).
    #[serde(default)]
    pub gold_threshold: Option<f64>,
    #[serde(default)]
    pub silver_threshold: Option<f64>,
    #[serde(default)]
    pub bronze_threshold: Option<f64>,
    #[serde(default)]
    pub median_threshold: Option<f64>,
}

impl EventBody for Grade {
    const STAGE: &'static str = "grade";
    const SCHEMA_VERSION: u32 = 4;
}

/// A grade of schema version 3: the same body as version 4 (graded under the rules of V1),
/// hashed with its own version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct GradeV3(pub Grade);

impl EventBody for GradeV3 {
    const STAGE: &'static str = "grade";
    const SCHEMA_VERSION: u32 = 3;
}

impl Grade {
    /// The medal in words, for `ml2b show` and the viewer: `gold, above the median
    /// (thresholds: gold 0.9, silver 0.85, bronze 0.8, median 0.7)`; none without a medal.
    pub fn medal_summary(&self) -> Option<String> {
        let medal = self.medal.as_deref()?;
        let num = |v: Option<f64>| v.map_or("-".into(), |v| v.to_string());
        Some(format!(
            "{medal}, {} the median (thresholds: gold {}, silver {}, bronze {}, median {})",
            if self.above_median == Some(true) {
                "above"
            } else {
                "not above"
            },
            num(self.gold_threshold),
            num(self.silver_threshold),
            num(self.bronze_threshold),
            num(self.median_threshold),
        ))
    }
}

/// The body of a grade of schema version 2: [`Grade`] without the columns version 3 added,
/// in the same order, so that its JSON is the JSON the events of version 2 hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GradeV2 {
    pub competition: String,
    pub format: Format,
    pub code_blake3: Hash,
    pub metric: String,
    pub direction: String,
    pub outcome: Outcome,
    pub valid: bool,
    pub score: Option<f64>,
    pub reason: Option<String>,
    pub baseline_score: Option<f64>,
    pub baseline_run: Option<Hash>,
    pub r_p: Option<f64>,
    pub automl_score: Option<f64>,
    pub automl_run: Option<Hash>,
    pub r_p_automl: Option<f64>,
    pub role: Option<String>,
    pub in_expected_range: Option<bool>,
    pub answers_blake3: Hash,
}

impl EventBody for GradeV2 {
    const STAGE: &'static str = "grade";
    const SCHEMA_VERSION: u32 = 2;
}

impl From<Grade> for GradeV2 {
    fn from(g: Grade) -> Self {
        let Grade {
            competition,
            format,
            code_blake3,
            metric,
            direction,
            outcome,
            valid,
            score,
            reason,
            baseline_score,
            baseline_run,
            r_p,
            automl_score,
            automl_run,
            r_p_automl,
            role,
            in_expected_range,
            answers_blake3,
            grader_blake3: _,
            leaderboard_blake3: _,
            medal: _,
            above_median: _,
            gold_threshold: _,
            silver_threshold: _,
            bronze_threshold: _,
            median_threshold: _,
        } = g;
        Self {
            competition,
            format,
            code_blake3,
            metric,
            direction,
            outcome,
            valid,
            score,
            reason,
            baseline_score,
            baseline_run,
            r_p,
            automl_score,
            automl_run,
            r_p_automl,
            role,
            in_expected_range,
            answers_blake3,
        }
    }
}

/// A grade of version 2 read as version 3: not ranked on any leaderboard, graded by ml2b's
/// own metric (every column version 3 added is none).
impl From<GradeV2> for Grade {
    fn from(g: GradeV2) -> Self {
        let GradeV2 {
            competition,
            format,
            code_blake3,
            metric,
            direction,
            outcome,
            valid,
            score,
            reason,
            baseline_score,
            baseline_run,
            r_p,
            automl_score,
            automl_run,
            r_p_automl,
            role,
            in_expected_range,
            answers_blake3,
        } = g;
        Self {
            competition,
            format,
            code_blake3,
            metric,
            direction,
            outcome,
            valid,
            score,
            reason,
            baseline_score,
            baseline_run,
            r_p,
            automl_score,
            automl_run,
            r_p_automl,
            role,
            in_expected_range,
            answers_blake3,
            grader_blake3: None,
            leaderboard_blake3: None,
            medal: None,
            above_median: None,
            gold_threshold: None,
            silver_threshold: None,
            bronze_threshold: None,
            median_threshold: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grade() -> Grade {
        Grade {
            competition: "c".into(),
            format: Format::Modular,
            code_blake3: Hash::of(b"code"),
            metric: "rmse".into(),
            direction: "minimize".into(),
            outcome: Outcome::Ok,
            valid: true,
            score: Some(0.5),
            reason: None,
            baseline_score: Some(0.4),
            baseline_run: None,
            r_p: Some(0.8),
            automl_score: None,
            automl_run: None,
            r_p_automl: None,
            role: None,
            in_expected_range: None,
            answers_blake3: Hash::of(b"answers"),
            grader_blake3: None,
            leaderboard_blake3: Some(Hash::of(b"leaderboard")),
            medal: Some("gold".into()),
            above_median: Some(true),
            gold_threshold: Some(0.6),
            silver_threshold: Some(0.7),
            bronze_threshold: Some(0.8),
            median_threshold: Some(0.9),
        }
    }

    /// Version 2's JSON is version 3's up to `answers_blake3`: the same keys, in order.
    #[test]
    fn the_v2_body_is_the_v3_body_cut_at_answers_blake3() {
        let v3 = serde_json::to_string(&grade()).unwrap();
        let v2 = serde_json::to_string(&GradeV2::from(grade())).unwrap();
        let cut = v3.find(",\"grader_blake3\"").unwrap();
        assert_eq!(format!("{}}}", &v3[..cut]), v2);
    }

    /// Version 3's body is version 4's, hashed under its own version.
    #[test]
    fn the_v3_body_is_the_v4_body() {
        assert_eq!(
            serde_json::to_string(&GradeV3(grade())).unwrap(),
            serde_json::to_string(&grade()).unwrap()
        );
        assert_eq!(GradeV3::SCHEMA_VERSION + 1, Grade::SCHEMA_VERSION);
    }

    /// A body of version 2 reads as a grade with the new fields empty.
    #[test]
    fn a_v2_body_reads_with_the_new_fields_empty() {
        let v2 = serde_json::to_string(&GradeV2::from(grade())).unwrap();
        let read: Grade = serde_json::from_str(&v2).unwrap();
        assert_eq!(read.medal, None);
        assert_eq!(read.leaderboard_blake3, None);
        assert_eq!(GradeV2::from(read.clone()), GradeV2::from(grade()));
        // Converting the v2 body is reading its JSON.
        assert_eq!(Grade::from(GradeV2::from(grade())), read);
    }
}
