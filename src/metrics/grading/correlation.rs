//! Correlation metrics: Pearson's r (`scipy.stats.pearsonr`) and the mean column-wise
//! Spearman ρ (`scipy.stats.spearmanr` per column, then `np.mean`), scipy 1.17.1 semantics.
//!
//! * `pearson`: r = Σ (x−x̄)/‖x−x̄‖ · (y−ȳ)/‖y−ȳ‖, clipped to [−1, 1]; the norms are scaled by
//!   the largest deviation first, as scipy does, so that huge values do not overflow. Fewer
//!   than two rows is an error (scipy raises); a constant column makes r undefined (scipy
//!   warns and returns NaN): constant answers are [`MetricError::Undefined`], constant
//!   predictions [`MetricError::BadPrediction`].
//! * `spearman_columns`: ρ of each target column with its prediction column (average ranks
//!   for ties, [`crate::metrics::spearman`]), then the plain mean; a constant column is
//!   undefined as for `pearson`.
//!
//! Invariant: inputs are finite and aligned (the caller checks); sums are compensated.

use super::metric_error::{MetricError, check_lengths};
use super::sum::{mean, sum};
use crate::metrics::spearman;

fn check_finite(metric: &'static str, y_true: &[f64], y_pred: &[f64]) -> Result<(), MetricError> {
    check_lengths(y_true.len(), y_pred.len())?;
    if let Some(row) = y_true.iter().position(|v| !v.is_finite()) {
        return Err(MetricError::bad_answers(
            metric,
            format!("non-finite value at row {}", row + 1),
        ));
    }
    match y_pred.iter().position(|v| !v.is_finite()) {
        Some(row) => Err(MetricError::bad_prediction(
            metric,
            format!("non-finite value at row {}", row + 1),
        )),
        None => Ok(()),
    }
}

fn is_constant(v: &[f64]) -> bool {
    v.iter().all(|&a| a == v[0])
}

/// A correlation is undefined for a constant column: the answers' fault or the predictions'.
fn check_not_constant(metric: &'static str, y_true: &[f64], y_pred: &[f64]) -> Result<(), MetricError> {
    if y_true.len() < 2 {
        return Err(MetricError::undefined(
            metric,
            "a correlation needs at least two rows",
        ));
    }
    if is_constant(y_true) {
        return Err(MetricError::undefined(
            metric,
            "the answers are constant (the correlation is not defined)",
        ));
    }
    if is_constant(y_pred) {
        return Err(MetricError::bad_prediction(
            metric,
            "the predictions are constant (the correlation is not defined)",
        ));
    }
    Ok(())
}

/// Deviations from the mean and their Euclidean norm (scaled by the largest deviation).
fn centred(v: &[f64]) -> (Vec<f64>, f64) {
    let centre = mean(v.iter().copied(), v.len());
    let deviations: Vec<f64> = v.iter().map(|x| x - centre).collect();
    let largest = deviations.iter().fold(0.0f64, |m, d| m.max(d.abs()));
    let norm = largest * sum(deviations.iter().map(|d| (d / largest) * (d / largest))).sqrt();
    (deviations, norm)
}

/// `scipy.stats.pearsonr(y_true, y_pred).statistic`.
pub fn pearson(y_true: &[f64], y_pred: &[f64]) -> Result<f64, MetricError> {
    check_finite("pearson", y_true, y_pred)?;
    check_not_constant("pearson", y_true, y_pred)?;
    let (dx, nx) = centred(y_true);
    let (dy, ny) = centred(y_pred);
    let r = sum(dx.iter().zip(&dy).map(|(a, b)| (a / nx) * (b / ny)));
    Ok(r.clamp(-1.0, 1.0))
}

/// `scipy.stats.spearmanr(y_true, y_pred).correlation` of one column.
pub fn spearman_rho(y_true: &[f64], y_pred: &[f64]) -> Result<f64, MetricError> {
    check_finite("spearman_columns", y_true, y_pred)?;
    check_not_constant("spearman_columns", y_true, y_pred)?;
    let rho = spearman::spearman(y_pred, y_true)
        .map_err(|e| MetricError::Length {
            expected: e.y,
            got: e.x,
        })?
        .rho;
    if rho.is_nan() {
        return Err(MetricError::undefined(
            "spearman_columns",
            "ρ is not defined here",
        ));
    }
    Ok(rho)
}

/// Mean over target columns of Spearman's ρ (google-quest-challenge's metric).
pub fn spearman_columns(y_true: &[&[f64]], y_pred: &[&[f64]]) -> Result<f64, MetricError> {
    check_lengths(y_true.len(), y_pred.len())?;
    let per_column: Result<Vec<f64>, _> = y_true
        .iter()
        .zip(y_pred)
        .map(|(t, p)| spearman_rho(t, p))
        .collect();
    let per_column = per_column?;
    Ok(per_column.iter().sum::<f64>() / per_column.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pearson_of_a_line_is_one() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let y = [3.0, 5.0, 7.0, 9.0];
        assert!((pearson(&x, &y).unwrap() - 1.0).abs() < 1e-15);
        let neg: Vec<f64> = y.iter().map(|v| -v).collect();
        assert!((pearson(&x, &neg).unwrap() + 1.0).abs() < 1e-15);
    }

    #[test]
    fn pearson_survives_huge_values() {
        let x = [-5e210, 5e210, 3e200, -3e200];
        // x is [-1, 1, 0, 0]·5e210 up to 1e-10: r = 2 / (√2·√2.5).
        let r = pearson(&x, &[-1.0, 1.0, 0.5, -0.5]).unwrap();
        assert!((r - 2.0 / 5.0f64.sqrt()).abs() < 1e-9, "{r}");
    }

    #[test]
    fn constant_columns_are_undefined_or_bad_predictions() {
        let x = [1.0, 2.0, 3.0];
        assert!(matches!(
            pearson(&[2.0, 2.0, 2.0], &x),
            Err(MetricError::Undefined { .. })
        ));
        assert!(matches!(
            pearson(&x, &[2.0, 2.0, 2.0]),
            Err(MetricError::BadPrediction { .. })
        ));
        assert!(matches!(
            spearman_columns(&[&x], &[&[1.0, 1.0, 1.0]]),
            Err(MetricError::BadPrediction { .. })
        ));
    }

    #[test]
    fn spearman_columns_averages() {
        let t: [&[f64]; 2] = [&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]];
        let p: [&[f64]; 2] = [&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]];
        assert_eq!(spearman_columns(&t, &p).unwrap(), 0.0);
    }
}
