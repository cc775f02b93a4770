//! Mean average precision over ranked label lists.
//!
//! * [`MapForm::Kaggle`] (`map@K`): `ml_metrics.mapk`. The list is cut at k; a label counts
//!   once, at its first position; AP = Σ hits_i / i over hits, divided by
//!   min(len(actual), k) (duplicates in `actual` count, as in the reference); an empty
//!   `actual` scores 0; an empty prediction scores 0.
//! * [`MapForm::Ml2b`] (`map_ml2b`): ML2B's `apk`: 1 / rank of the single true label anywhere
//!   in the list, 0 if absent; k is ignored. Each answer must hold exactly one label.

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
