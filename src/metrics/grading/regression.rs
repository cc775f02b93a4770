//! Regression metrics (scikit-learn 1.9.1 semantics) over aligned `f64` slices.
//!
//! Inputs must be finite (scikit-learn raises on NaN and ±inf); `rmsle` also needs every value
//! above −1. Means use compensated summation so that ten million rows agree with numpy's
//! pairwise sums to ~1e-15 relative. Multi-target metrics are the plain mean of the per-column
//! values (`multioutput="uniform_average"`, as ML2B's multitarget grader).
//!
//! [`score_values`] and [`score_multi`] also dispatch the other metrics that read numeric
//! columns: `pearson` and `spearman_columns` (`correlation`), `pf1` and `roc_auc_columns`
//! (`probabilistic`).

use super::metric_error::{MetricError, check_lengths};
use super::registry::Metric;
use super::sum::{Neumaier, mean, sum};
use super::{correlation, probabilistic};

/// A single-target regression metric folded over aligned row chunks.
///
/// Each chunk is checked before it is summed (answers finite, predictions finite, the domain
/// of `rmsle`, then the weights), with rows numbered from the first chunk, and every sum is
/// one sequential [`Neumaier`]: the score of a column fed in chunks is bit-identical to the
/// score of the whole column. `r2` needs the mean of the answers first and has no fold.
#[derive(Debug, Clone)]
pub struct Fold {
    metric: Metric,
    rows: usize,
    errors: Neumaier,
    weights: Neumaier,
}

impl Fold {
    /// The fold of `metric`; `None` for a metric that is not a one-pass regression sum.
    pub fn new(metric: Metric) -> Option<Self> {
        let metric = match metric {
            Metric::RmseMulti => Metric::Rmse,
            Metric::RmsleMulti => Metric::Rmsle,
            Metric::Rmse | Metric::Rmsle | Metric::Mse | Metric::Mae | Metric::Wmae | Metric::WmaeMl2b => {
                metric
            }
            _ => return None,
        };
        Some(Self {
            metric,
            rows: 0,
            errors: Neumaier::default(),
            weights: Neumaier::default(),
        })
    }

    fn name(&self) -> &'static str {
        match self.metric {
            Metric::Rmse => "rmse",
            Metric::Rmsle => "rmsle",
            Metric::Mse => "mse",
            Metric::Mae => "mae",
            Metric::Wmae => "wmae",
            _ => "wmae_ml2b",
        }
    }

    fn weighted(&self) -> bool {
        matches!(self.metric, Metric::Wmae | Metric::WmaeMl2b)
    }

    /// Checks and adds the next rows; `weights` only for the weighted metrics.
    pub fn add(
        &mut self,
        y_true: &[f64],
        y_pred: &[f64],
        weights: Option<&[f64]>,
    ) -> Result<(), MetricError> {
        self.check(y_true, y_pred, weights)?;
        match (self.metric, weights) {
            (Metric::Rmse | Metric::Mse, _) => y_true
                .iter()
                .zip(y_pred)
                .for_each(|(t, p)| self.errors.add((t - p) * (t - p))),
            (Metric::Rmsle, _) => y_true
                .iter()
                .zip(y_pred)
                .for_each(|(t, p)| self.errors.add((t.ln_1p() - p.ln_1p()).powi(2))),
            (Metric::Mae, _) => y_true
                .iter()
                .zip(y_pred)
                .for_each(|(t, p)| self.errors.add((t - p).abs())),
            (_, Some(w)) => {
                w.iter().for_each(|&w| self.weights.add(w));
                y_true
                    .iter()
                    .zip(y_pred)
                    .zip(w)
                    .for_each(|((t, p), w)| self.errors.add(w * (t - p).abs()));
            }
            (_, None) => unreachable!("checked: a weighted fold has weights"),
        }
        self.rows += y_true.len();
        Ok(())
    }

    fn check(&self, y_true: &[f64], y_pred: &[f64], weights: Option<&[f64]>) -> Result<(), MetricError> {
        if y_true.len() != y_pred.len() {
            return Err(MetricError::Length {
                expected: y_true.len(),
                got: y_pred.len(),
            });
        }
        let at = |row: usize| self.rows + row + 1;
        check_values_finite(self.name(), y_true, y_pred, self.rows)?;
        if self.metric == Metric::Rmsle {
            let reason = |row: usize| {
                format!(
                    "value at row {} is ≤ −1, outside the domain of log(1 + x)",
                    at(row)
                )
            };
            if let Some(row) = y_true.iter().position(|&v| v <= -1.0) {
                return Err(MetricError::bad_answers("rmsle", reason(row)));
            }
            if let Some(row) = y_pred.iter().position(|&v| v <= -1.0) {
                return Err(MetricError::bad_prediction("rmsle", reason(row)));
            }
        }
        if !self.weighted() {
            return Ok(());
        }
        let weights = weights.ok_or_else(|| MetricError::bad_answers("wmae", "no weight column"))?;
        if weights.len() != y_true.len() {
            return Err(MetricError::Length {
                expected: y_true.len(),
                got: weights.len(),
            });
        }
        match weights.iter().position(|w| !w.is_finite()) {
            Some(row) => Err(MetricError::bad_answers(
                "wmae",
                format!("non-finite weight at row {}", at(row)),
            )),
            None => Ok(()),
        }
    }

    /// The score over every row added.
    pub fn finish(self) -> Result<f64, MetricError> {
        if self.rows == 0 {
            return Err(MetricError::Empty);
        }
        let mean = self.errors.value() / self.rows as f64;
        Ok(match self.metric {
            Metric::Rmse | Metric::Rmsle => mean.sqrt(),
            Metric::Wmae => {
                let total = self.weights.value();
                if total == 0.0 {
                    return Err(MetricError::undefined("wmae", "the weights sum to zero"));
                }
                self.errors.value() / total
            }
            _ => mean,
        })
    }
}

fn fold(metric: Metric, y_true: &[f64], y_pred: &[f64], weights: Option<&[f64]>) -> Result<f64, MetricError> {
    let mut fold = Fold::new(metric).expect("a fold metric");
    fold.add(y_true, y_pred, weights)?;
    fold.finish()
}

/// `mean_squared_error`.
pub fn mse(y_true: &[f64], y_pred: &[f64]) -> Result<f64, MetricError> {
    fold(Metric::Mse, y_true, y_pred, None)
}

/// `root_mean_squared_error`.
pub fn rmse(y_true: &[f64], y_pred: &[f64]) -> Result<f64, MetricError> {
    fold(Metric::Rmse, y_true, y_pred, None)
}

/// `root_mean_squared_log_error`: RMSE of `ln(1 + x)`; values ≤ −1 are an error.
pub fn rmsle(y_true: &[f64], y_pred: &[f64]) -> Result<f64, MetricError> {
    fold(Metric::Rmsle, y_true, y_pred, None)
}

/// `mean_absolute_error`.
pub fn mae(y_true: &[f64], y_pred: &[f64]) -> Result<f64, MetricError> {
    fold(Metric::Mae, y_true, y_pred, None)
}

/// `mean_absolute_error(sample_weight=w)` = Σ w·|y − ŷ| / Σ w.
pub fn wmae(y_true: &[f64], y_pred: &[f64], weights: &[f64]) -> Result<f64, MetricError> {
    fold(Metric::Wmae, y_true, y_pred, Some(weights))
}

/// ML2B's `calculate_wmae`: mean(w·|y − ŷ|) (divides by n, not Σ w; ratios to a baseline are
/// the same as with [`wmae`]).
pub fn wmae_ml2b(y_true: &[f64], y_pred: &[f64], weights: &[f64]) -> Result<f64, MetricError> {
    fold(Metric::WmaeMl2b, y_true, y_pred, Some(weights))
}

fn check_finite(metric: &'static str, y_true: &[f64], y_pred: &[f64]) -> Result<(), MetricError> {
    check_lengths(y_true.len(), y_pred.len())?;
    check_values_finite(metric, y_true, y_pred, 0)
}

/// The answers, then the predictions, hold only finite values; rows are numbered from
/// `first_row` (0 for a whole column).
fn check_values_finite(
    metric: &'static str,
    y_true: &[f64],
    y_pred: &[f64],
    first_row: usize,
) -> Result<(), MetricError> {
    let reason = |row: usize| format!("non-finite value at row {}", first_row + row + 1);
    if let Some(row) = y_true.iter().position(|v| !v.is_finite()) {
        return Err(MetricError::bad_answers(metric, reason(row)));
    }
    match y_pred.iter().position(|v| !v.is_finite()) {
        Some(row) => Err(MetricError::bad_prediction(metric, reason(row))),
        None => Ok(()),
    }
}

fn squared_errors<'a>(y_true: &'a [f64], y_pred: &'a [f64]) -> impl Iterator<Item = f64> + 'a {
    y_true.iter().zip(y_pred).map(|(t, p)| (t - p) * (t - p))
}

/// `r2_score` with `force_finite=True`: constant answers give 1 if predicted exactly, else 0.
pub fn r2(y_true: &[f64], y_pred: &[f64]) -> Result<f64, MetricError> {
    check_finite("r2", y_true, y_pred)?;
    if y_true.len() < 2 {
        return Err(MetricError::undefined("r2", "R² needs at least two rows"));
    }
    let centre = mean(y_true.iter().copied(), y_true.len());
    let residual = sum(squared_errors(y_true, y_pred));
    let total = sum(y_true.iter().map(|t| (t - centre) * (t - centre)));
    Ok(match (total == 0.0, residual == 0.0) {
        (false, _) => 1.0 - residual / total,
        (true, true) => 1.0,
        (true, false) => 0.0,
    })
}

/// Scores a single-target regression metric (`weights` only for the weighted ones).
pub fn score_values(
    metric: Metric,
    y_true: &[f64],
    y_pred: &[f64],
    weights: Option<&[f64]>,
) -> Result<f64, MetricError> {
    let weights = || weights.ok_or_else(|| MetricError::bad_answers("wmae", "no weight column"));
    match metric {
        Metric::Rmse => rmse(y_true, y_pred),
        Metric::Rmsle => rmsle(y_true, y_pred),
        Metric::Mse => mse(y_true, y_pred),
        Metric::Mae => mae(y_true, y_pred),
        Metric::R2 => r2(y_true, y_pred),
        Metric::Wmae => wmae(y_true, y_pred, weights()?),
        Metric::WmaeMl2b => wmae_ml2b(y_true, y_pred, weights()?),
        Metric::RmseMulti => rmse(y_true, y_pred),
        Metric::RmsleMulti => rmsle(y_true, y_pred),
        Metric::Pearson => correlation::pearson(y_true, y_pred),
        Metric::Pf1 => probabilistic::pf1(y_true, y_pred),
        other => unreachable!("{other} is not a regression metric"),
    }
}

/// Mean over target columns of the per-column `rmse` / `rmsle` (`RmseMulti`, `RmsleMulti`),
/// ROC AUC (`RocAucColumns`) or Spearman ρ (`SpearmanColumns`).
pub fn score_multi(metric: Metric, y_true: &[&[f64]], y_pred: &[&[f64]]) -> Result<f64, MetricError> {
    match metric {
        Metric::RocAucColumns => return probabilistic::roc_auc_columns(y_true, y_pred),
        Metric::SpearmanColumns => return correlation::spearman_columns(y_true, y_pred),
        _ => {}
    }
    check_lengths(y_true.len(), y_pred.len())?;
    let per_column: Result<Vec<f64>, _> = y_true
        .iter()
        .zip(y_pred)
        .map(|(t, p)| score_values(metric, t, p, None))
        .collect();
    Ok(column_mean(&per_column?))
}

/// The multi-target score from the per-column ones (`multioutput="uniform_average"`).
pub fn column_mean(per_column: &[f64]) -> f64 {
    per_column.iter().sum::<f64>() / per_column.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_prediction_is_rejected() {
        let err = rmse(&[1.0, 2.0], &[1.0, f64::NAN]).unwrap_err();
        assert!(matches!(err, MetricError::BadPrediction { .. }), "{err}");
    }

    #[test]
    fn rmsle_rejects_minus_one() {
        assert!(rmsle(&[0.0], &[-1.0]).is_err());
        assert!(rmsle(&[0.0], &[-0.5]).is_ok());
    }

    #[test]
    fn r2_needs_two_rows() {
        assert!(matches!(r2(&[1.0], &[1.0]), Err(MetricError::Undefined { .. })));
    }

    #[test]
    fn empty_is_an_error() {
        assert_eq!(mae(&[], &[]), Err(MetricError::Empty));
    }
}
