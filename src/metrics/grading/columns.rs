//! Which columns of the answers and the predictions a metric reads, and the per-competition
//! settings that name them.
//!
//! Both grading paths resolve columns here, the in-memory one (`submission`) and the streamed
//! one (`stream`): the streamed path may only score what the in-memory path would, so the two
//! must never pick different columns. Names are matched exactly (case and whitespace count).

use super::registry::{InputKind, Metric};
use super::rules::{MleBenchChecks, Rules};

/// Column names and other per-competition settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GradeOptions {
    /// The id column of both files.
    pub id_col: String,
    /// The weight column of the answers (weighted metrics only).
    pub weight_col: String,
    /// The target columns of the answers; `None`: every answers column but the id (and weight).
    pub targets: Option<Vec<String>>,
    /// The version of the validation rules (`rules`).
    pub rules: Rules,
    /// An MLE-bench competition graded natively: its `grade.py`'s checks (applied under
    /// [`Rules::V2`] only).
    pub mle_bench: Option<MleBenchChecks>,
}

impl GradeOptions {
    /// The MLE-bench checks in force: none under [`Rules::V1`].
    pub fn mle_bench(&self) -> Option<&MleBenchChecks> {
        self.mle_bench.as_ref().filter(|_| self.rules >= Rules::V2)
    }
}

impl Default for GradeOptions {
    fn default() -> Self {
        Self {
            id_col: "id".into(),
            weight_col: "weight".into(),
            targets: None,
            rules: Rules::default(),
            mle_bench: None,
        }
    }
}

/// The answers' target columns for `metric`: `options.targets`, else every column but the id
/// (and the weight, for a weighted metric).
pub(super) fn target_names(metric: Metric, answers: &[String], options: &GradeOptions) -> Vec<String> {
    if let Some(targets) = &options.targets {
        return targets.clone();
    }
    let weighted = metric.input_kind() == InputKind::WeightedValues;
    let skip = |n: &String| *n == options.id_col || (weighted && *n == options.weight_col);
    answers.iter().filter(|n| !skip(n)).cloned().collect()
}

/// The prediction column for `target`: the column of that name, else (but on an MLE-bench
/// competition, whose `grade.py` reads columns by name) the only non-id one.
pub(super) fn prediction_name<'n>(
    target: &str,
    predictions: &'n [String],
    options: &GradeOptions,
) -> Option<&'n str> {
    if let Some(name) = predictions.iter().find(|n| *n == target) {
        return Some(name);
    }
    if options.mle_bench().is_some() {
        return None;
    }
    let id_col = &options.id_col;
    let mut others = predictions.iter().filter(|n| *n != id_col);
    match (others.next(), others.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}
