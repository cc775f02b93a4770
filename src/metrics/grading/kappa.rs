//! Quadratic weighted kappa.
//!
//! κ = 1 − Σ (i−j)² O_ij / Σ (i−j)² E_ij with E = outer(hist_a, hist_b) / N. Both sums reduce
//! to first and second moments of the positions, so they are computed exactly in integers
//! without a K×K matrix:
//! Σ (i−j)² O_ij = Σ_rows (a−b)² and N·Σ (i−j)² E_ij = N·ΣA² + N·ΣB² − 2·ΣA·ΣB.
//!
//! * [`KappaForm::Kaggle`] (default `qwk`): positions are the integer ratings minus the
//!   smallest rating seen on either side, i.e. the full range min..=max as in
//!   `ml_metrics.quadratic_weighted_kappa`; labels must be integers.
//! * [`KappaForm::Sklearn`] (`qwk_sklearn`): positions are indices into the sorted observed
//!   labels, as `cohen_kappa_score(weights="quadratic")`; a rating nobody used then closes
//!   the gap, which changes the value.
//!
//! A zero expected disagreement (one shared label) is [`MetricError::Undefined`]
//! (scikit-learn returns NaN, `ml_metrics` divides by zero).

use super::classification::ClassCounts;
use super::labels::{Label, LabelPairs};
use super::metric_error::MetricError;
use super::registry::KappaForm;

fn positions(pairs: &LabelPairs, form: KappaForm) -> Result<Vec<i128>, MetricError> {
    match form {
        KappaForm::Sklearn => Ok((0..pairs.n_classes() as i128).collect()),
        KappaForm::Kaggle => {
            let ints: Option<Vec<i128>> = pairs
                .classes
                .iter()
                .map(|l| match l {
                    Label::Int(v) => Some(i128::from(*v)),
                    Label::Text(_) => None,
                })
                .collect();
            let ints = ints.ok_or_else(|| MetricError::bad_answers("qwk", "ratings must be integers"))?;
            let lo = ints.first().copied().unwrap_or(0);
            Ok(ints.into_iter().map(|v| v - lo).collect())
        }
    }
}

/// Quadratic weighted kappa of aligned label pairs.
pub fn quadratic_weighted_kappa(pairs: &LabelPairs, form: KappaForm) -> Result<f64, MetricError> {
    let counts = ClassCounts::of(pairs)?;
    let pos = positions(pairs, form)?;
    let n = pairs.y_true.len() as i128;
    let observed: i128 = pairs
        .y_true
        .iter()
        .zip(&pairs.y_pred)
        .map(|(&a, &b)| (pos[a as usize] - pos[b as usize]).pow(2))
        .sum();
    let moment = |hist: &[u64], power: u32| -> i128 {
        hist.iter()
            .zip(&pos)
            .map(|(&h, &p)| h as i128 * p.pow(power))
            .sum()
    };
    let (s1a, s2a) = (moment(&counts.true_support, 1), moment(&counts.true_support, 2));
    let (s1b, s2b) = (moment(&counts.pred_support, 1), moment(&counts.pred_support, 2));
    let expected = n * s2a + n * s2b - 2 * s1a * s1b;
    if expected == 0 {
        return Err(MetricError::undefined(
            "qwk",
            "a single shared label: the expected disagreement is zero",
        ));
    }
    Ok(1.0 - (n * observed) as f64 / expected as f64)
}
