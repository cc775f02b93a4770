//! Mean average precision over ranked label lists.
//!
//! * [`MapForm::Kaggle`] (`map@K`): `ml_metrics.mapk`. The list is cut at k; a label counts
//!   once, at its first position; AP = Σ hits_i / i over hits, divided by
//!   min(len(actual), k) (duplicates in `actual` count, as in the reference); an empty
//!   `actual` scores 0; an empty prediction scores 0.
//! * [`MapForm::Ml2b`] (`map_ml2b`): ML2B's `apk(actual, predicted)` as its default grader
//!   calls it, on the two cells' text (`python/grade_functions.py`): `actual in predicted` is
//!   Python's substring test, and a hit scores 1 / (1 + the character index where `actual`
//!   starts), so `apk("DAP", "Urea DAP 20-20")` is 1/6, not 1/2; k is ignored
//!   ([`ml2b_apk`], grading rules V2). Grade events of rules V1 scored 1 / rank of the single
//!   true label among the space-separated tokens ([`reciprocal_rank`]), which is not what the
//!   original computes on strings.

use super::labels::LabelLists;
use super::metric_error::{MetricError, check_lengths};
use super::registry::MapForm;

/// Kaggle's average precision at `k` of one row.
pub fn apk(actual: &[u32], predicted: &[u32], k: usize) -> f64 {
    if actual.is_empty() {
        return 0.0;
    }
    let predicted = &predicted[..predicted.len().min(k)];
    let (mut hits, mut score) = (0.0f64, 0.0f64);
    for (i, p) in predicted.iter().enumerate() {
        if actual.contains(p) && !predicted[..i].contains(p) {
            hits += 1.0;
            score += hits / (i as f64 + 1.0);
        }
    }
    score / actual.len().min(k) as f64
}

/// ML2B's reciprocal rank of the single true label.
pub fn reciprocal_rank(actual: u32, predicted: &[u32]) -> f64 {
    match predicted.iter().position(|&p| p == actual) {
        Some(i) => 1.0 / (i as f64 + 1.0),
        None => 0.0,
    }
}

/// ML2B's `apk(actual, predicted)` on strings: 1 / (1 + the character index of the first
/// occurrence of `actual` inside `predicted`), 0 when it does not occur.
pub fn ml2b_apk(actual: &str, predicted: &str) -> f64 {
    match predicted.find(actual) {
        Some(byte) => 1.0 / (predicted[..byte].chars().count() as f64 + 1.0),
        None => 0.0,
    }
}

/// The mean of [`ml2b_apk`] over aligned answer and prediction cells.
pub fn ml2b_map(actual: &[String], predicted: &[String]) -> Result<f64, MetricError> {
    check_lengths(actual.len(), predicted.len())?;
    let total: f64 = actual.iter().zip(predicted).map(|(a, p)| ml2b_apk(a, p)).sum();
    Ok(total / actual.len() as f64)
}

fn ml2b_row(row: usize, actual: &[u32], predicted: &[u32]) -> Result<f64, MetricError> {
    match actual {
        [single] => Ok(reciprocal_rank(*single, predicted)),
        _ => Err(MetricError::bad_answers(
            "map_ml2b",
            format!("row {} must hold exactly one true label", row + 1),
        )),
    }
}

/// Mean average precision of aligned answer and prediction lists.
pub fn mean_average_precision(lists: &LabelLists, form: MapForm) -> Result<f64, MetricError> {
    check_lengths(lists.y_true.len(), lists.y_pred.len())?;
    let rows = lists.y_true.iter().zip(&lists.y_pred);
    let per_row: Result<Vec<f64>, _> = match form {
        MapForm::Kaggle { k } => Ok(rows.map(|(t, p)| apk(t, p, k)).collect()),
        MapForm::Ml2b => rows.enumerate().map(|(i, (t, p))| ml2b_row(i, t, p)).collect(),
    };
    let per_row = per_row?;
    Ok(per_row.iter().sum::<f64>() / per_row.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The original's `"DAP" in "Urea DAP 20-20"` and `.index`: character 5, so 1/6.
    #[test]
    fn ml2b_apk_is_the_originals_substring_test() {
        assert_eq!(ml2b_apk("DAP", "Urea DAP 20-20"), 1.0 / 6.0);
        assert_eq!(ml2b_apk("Urea", "Urea DAP 20-20"), 1.0);
        assert_eq!(ml2b_apk("AP", "Urea DAP"), 1.0 / 7.0);
        assert_eq!(ml2b_apk("10-26-26", "Urea DAP"), 0.0);
        // Character, not byte, positions.
        assert_eq!(ml2b_apk("b", "éb"), 0.5);
    }
}
