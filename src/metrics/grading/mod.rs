//! Competition grading metrics, computed columnar over Arrow arrays and slices.
//!
//! Every metric reproduces the pinned scikit-learn 1.9.1 (or Kaggle's `ml_metrics`) to 1e-9
//! on the inputs both accept. Where the reference returns NaN with a warning (ROC AUC with
//! one class, R² with fewer than two rows, kappa with a single shared label) or raises, the
//! metric returns [`MetricError`] instead, so that no NaN score leaves this module.
//!
//! Layout: [`registry`] names the metrics and their direction, [`labels`] turns label columns
//! into dense class codes, the family modules compute, and [`submission`] loads answer and
//! prediction files, validates a submission and scores it. For the regression metrics over
//! Parquet, `stream` first tries to prove the submission valid and score it in one pass over
//! small batches; whatever it cannot prove is graded in memory.
//!
//! Invariants: inputs handed to a family function are already aligned row by row and of equal
//! length (checked with [`MetricError::Length`]); class codes index the sorted class list.

pub mod align;
pub mod classification;
pub mod kappa;
pub mod labels;
pub mod probabilistic;
pub mod ranking;
pub mod registry;
pub mod regression;
mod stream;
pub mod submission;
mod sum;
pub mod table;

#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod submission_tests;

pub use registry::{Direction, InputKind, Metric, UnknownMetric};
pub use submission::{GradeError, GradeOptions, Invalid, Score, score_files, score_files_with};

/// Why a metric has no value for the given inputs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetricError {
    /// The metric is undefined on these answers (scikit-learn returns NaN or raises).
    #[error("{metric} is undefined here: {reason}")]
    Undefined { metric: &'static str, reason: String },
    /// The predictions are unusable for this metric (scikit-learn raises).
    #[error("predictions unusable for {metric}: {reason}")]
    BadPrediction { metric: &'static str, reason: String },
    /// The answers are unusable for this metric.
    #[error("answers unusable for {metric}: {reason}")]
    BadAnswers { metric: &'static str, reason: String },
    /// Two inputs that must be aligned have different lengths.
    #[error("length mismatch: {expected} answers, {got} predictions")]
    Length { expected: usize, got: usize },
    /// No rows at all.
    #[error("no rows to score")]
    Empty,
}

impl MetricError {
    pub(crate) fn undefined(metric: &'static str, reason: impl Into<String>) -> Self {
        Self::Undefined {
            metric,
            reason: reason.into(),
        }
    }

    pub(crate) fn bad_prediction(metric: &'static str, reason: impl Into<String>) -> Self {
        Self::BadPrediction {
            metric,
            reason: reason.into(),
        }
    }

    pub(crate) fn bad_answers(metric: &'static str, reason: impl Into<String>) -> Self {
        Self::BadAnswers {
            metric,
            reason: reason.into(),
        }
    }
}

/// Checks that two aligned inputs have the same, non-zero length.
pub(crate) fn check_lengths(expected: usize, got: usize) -> Result<(), MetricError> {
    if expected != got {
        return Err(MetricError::Length { expected, got });
    }
    if expected == 0 {
        return Err(MetricError::Empty);
    }
    Ok(())
}
