//! Why a metric has no value: [`MetricError`], which every family function returns instead
//! of a NaN score or a panic, and [`check_lengths`], which each of them runs first on its
//! aligned inputs. A leaf of the grading modules: the families and `submission` all use it.

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
