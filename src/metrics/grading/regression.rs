//! Regression metrics (scikit-learn 1.9.1 semantics) over aligned `f64` slices.
//!
//! Inputs must be finite (scikit-learn raises on NaN and ±inf); `rmsle` also needs every value
//! above −1. Means use compensated summation so that ten million rows agree with numpy's
//! pairwise sums to ~1e-15 relative. Multi-target metrics are the plain mean of the per-column
//! values (`multioutput="uniform_average"`, as ML2B's multitarget grader).

use super::registry::Metric;
use super::sum::{mean, sum};
use super::{MetricError, check_lengths};

fn check_finite(metric: &'static str, y_true: &[f64], y_pred: &[f64]) -> Result<(), MetricError> {
    check_lengths(y_true.len(), y_pred.len())?;
    if let Some(row) = y_true.iter().position(|v| !v.is_finite()) {
        return Err(MetricError::bad_answers(
            metric,
            format!("non-finite value at row {}", row + 1),
        ));
    }
    if let Some(row) = y_pred.iter().position(|v| !v.is_finite()) {
        return Err(MetricError::bad_prediction(
            metric,
            format!("non-finite value at row {}", row + 1),
        ));
    }
    Ok(())
}

fn squared_errors<'a>(y_true: &'a [f64], y_pred: &'a [f64]) -> impl Iterator<Item = f64> + 'a {
    y_true.iter().zip(y_pred).map(|(t, p)| (t - p) * (t - p))
}

/// `mean_squared_error`.
pub fn mse(y_true: &[f64], y_pred: &[f64]) -> Result<f64, MetricError> {
    check_finite("mse", y_true, y_pred)?;
    Ok(mean(squared_errors(y_true, y_pred), y_true.len()))
}

/// `root_mean_squared_error`.
pub fn rmse(y_true: &[f64], y_pred: &[f64]) -> Result<f64, MetricError> {
    check_finite("rmse", y_true, y_pred)?;
    Ok(mean(squared_errors(y_true, y_pred), y_true.len()).sqrt())
}

fn check_above_minus_one(y_true: &[f64], y_pred: &[f64]) -> Result<(), MetricError> {
    let reason = |row: usize| {
        format!(
            "value at row {} is ≤ −1, outside the domain of log(1 + x)",
            row + 1
        )
    };
    if let Some(row) = y_true.iter().position(|&v| v <= -1.0) {
        return Err(MetricError::bad_answers("rmsle", reason(row)));
    }
    match y_pred.iter().position(|&v| v <= -1.0) {
        Some(row) => Err(MetricError::bad_prediction("rmsle", reason(row))),
        None => Ok(()),
    }
}

/// `root_mean_squared_log_error`: RMSE of `ln(1 + x)`; values ≤ −1 are an error.
pub fn rmsle(y_true: &[f64], y_pred: &[f64]) -> Result<f64, MetricError> {
    check_finite("rmsle", y_true, y_pred)?;
    check_above_minus_one(y_true, y_pred)?;
    let logs = y_true
        .iter()
        .zip(y_pred)
        .map(|(t, p)| (t.ln_1p() - p.ln_1p()).powi(2));
    Ok(mean(logs, y_true.len()).sqrt())
}

/// `mean_absolute_error`.
pub fn mae(y_true: &[f64], y_pred: &[f64]) -> Result<f64, MetricError> {
    check_finite("mae", y_true, y_pred)?;
    Ok(mean(
        y_true.iter().zip(y_pred).map(|(t, p)| (t - p).abs()),
        y_true.len(),
    ))
}

fn check_weights(weights: &[f64], n: usize) -> Result<(), MetricError> {
    check_lengths(n, weights.len())?;
    match weights.iter().position(|w| !w.is_finite()) {
        Some(row) => Err(MetricError::bad_answers(
            "wmae",
            format!("non-finite weight at row {}", row + 1),
        )),
        None => Ok(()),
    }
}

fn weighted_abs<'a>(y_true: &'a [f64], y_pred: &'a [f64], w: &'a [f64]) -> impl Iterator<Item = f64> + 'a {
    y_true
        .iter()
        .zip(y_pred)
        .zip(w)
        .map(|((t, p), w)| w * (t - p).abs())
}

/// `mean_absolute_error(sample_weight=w)` = Σ w·|y − ŷ| / Σ w.
pub fn wmae(y_true: &[f64], y_pred: &[f64], weights: &[f64]) -> Result<f64, MetricError> {
    check_finite("wmae", y_true, y_pred)?;
    check_weights(weights, y_true.len())?;
    let total = sum(weights.iter().copied());
    if total == 0.0 {
        return Err(MetricError::undefined("wmae", "the weights sum to zero"));
    }
    Ok(sum(weighted_abs(y_true, y_pred, weights)) / total)
}

/// ML2B's `calculate_wmae`: mean(w·|y − ŷ|) (divides by n, not Σ w; ratios to a baseline are
/// the same as with [`wmae`]).
pub fn wmae_ml2b(y_true: &[f64], y_pred: &[f64], weights: &[f64]) -> Result<f64, MetricError> {
    check_finite("wmae_ml2b", y_true, y_pred)?;
    check_weights(weights, y_true.len())?;
    Ok(mean(weighted_abs(y_true, y_pred, weights), y_true.len()))
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
        other => unreachable!("{other} is not a regression metric"),
    }
}

/// Mean over target columns of the per-column `rmse` / `rmsle` (`RmseMulti`, `RmsleMulti`).
pub fn score_multi(metric: Metric, y_true: &[&[f64]], y_pred: &[&[f64]]) -> Result<f64, MetricError> {
    check_lengths(y_true.len(), y_pred.len())?;
    let per_column: Result<Vec<f64>, _> = y_true
        .iter()
        .zip(y_pred)
        .map(|(t, p)| score_values(metric, t, p, None))
        .collect();
    let per_column = per_column?;
    Ok(per_column.iter().sum::<f64>() / per_column.len() as f64)
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
