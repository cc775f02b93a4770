//! Metrics over predicted class probabilities or scores: ROC AUC and log loss
//! (scikit-learn 1.9.1 semantics).
//!
//! Input: the answers as codes into the sorted class list, and either one score column per
//! class (in class order) or, for a binary task, a single column holding the score of the
//! positive class (`classes[1]`, the larger label, as scikit-learn's `roc_auc_score` and
//! `log_loss` take a 1-D `y_score`).
//!
//! * Binary ROC AUC is the Mann–Whitney statistic P(s⁺ > s⁻) + ½·P(s⁺ = s⁻), computed exactly
//!   in integers from two sorted score lists; any finite score works. One class in the answers
//!   is [`MetricError::Undefined`] (scikit-learn ≥ 1.6 warns and returns NaN).
//! * Multiclass ROC AUC needs `ovr` or `ovo` (as scikit-learn) and rows summing to 1 within
//!   `np.allclose` (rtol 1e-5, atol 1e-8).
//! * Log loss clips to [ε, 1−ε] with ε = f64::EPSILON and does not renormalise rows; values
//!   outside [0, 1] are an error (scikit-learn ≥ 1.7). With one-hot answers (one 0/1 column
//!   per class, MLE-bench's layout) the caller passes the index of each row's 1 as its code:
//!   `log_loss` of the indicator matrix is −mean ln clip(p_true) as well, every column a class
//!   whether or not the answers hold it.
//! * `roc_auc_columns`: the binary ROC AUC of each target column (answers: two distinct
//!   values, the larger one positive, as `roc_auc_score` binarises them; predictions: any
//!   finite scores), then the plain mean (`np.average` of per-column `roc_auc_score`, which
//!   is `roc_auc_score(average="macro")` of a multi-label indicator matrix).
//! * `pf1`: Kaggle's probabilistic F1 (β = 1) as MLE-bench's rsna-breast-cancer-detection
//!   grader computes it: predictions clipped to [0, 1], a non-zero answer is positive,
//!   cP = Σ_pos p / Σ p, cR = Σ_pos p / #pos, pF1 = 2·cP·cR / (cP + cR), 0 when cP or cR is 0.

use super::metric_error::{MetricError, check_lengths};
use super::registry::{Average, Metric};
use super::sum::mean;

/// Answers and predicted scores for a probabilistic metric.
#[derive(Debug, Clone, Copy)]
pub struct ClassScores<'a> {
    /// Answers as codes into the class list.
    pub y_true: &'a [u32],
    /// Number of classes.
    pub n_classes: usize,
    /// One column per class, or one column (the positive class) for a binary task.
    pub columns: &'a [&'a [f64]],
}

/// An order-preserving integer key of a finite float (−0 and +0 tie).
fn key(x: f64) -> u64 {
    let bits = (x + 0.0).to_bits();
    if bits >> 63 == 1 { !bits } else { bits | (1 << 63) }
}

fn sorted_keys(scores: impl Iterator<Item = f64>) -> Vec<u64> {
    let mut keys: Vec<u64> = scores.map(key).collect();
    keys.sort_unstable();
    keys
}

/// Σ over positives of (2·#negatives below + #negatives equal), both lists sorted.
fn doubled_wins(pos: &[u64], neg: &[u64]) -> u64 {
    let (mut below, mut upto, mut total) = (0usize, 0usize, 0u64);
    for &p in pos {
        while below < neg.len() && neg[below] < p {
            below += 1;
        }
        upto = upto.max(below);
        while upto < neg.len() && neg[upto] == p {
            upto += 1;
        }
        total += (2 * below + (upto - below)) as u64;
    }
    total
}

/// Binary ROC AUC of `scores` where `is_positive(i)` marks the positive rows.
pub fn roc_auc_binary(scores: &[f64], is_positive: impl Fn(usize) -> bool) -> Result<f64, MetricError> {
    check_scores_finite("roc_auc", scores)?;
    let pos = sorted_keys((0..scores.len()).filter(|&i| is_positive(i)).map(|i| scores[i]));
    let neg = sorted_keys((0..scores.len()).filter(|&i| !is_positive(i)).map(|i| scores[i]));
    if pos.is_empty() || neg.is_empty() {
        return Err(MetricError::undefined(
            "roc_auc",
            "only one class present in the answers",
        ));
    }
    let pairs = 2.0 * pos.len() as f64 * neg.len() as f64;
    Ok(doubled_wins(&pos, &neg) as f64 / pairs)
}

fn check_scores_finite(metric: &'static str, scores: &[f64]) -> Result<(), MetricError> {
    match scores.iter().position(|v| !v.is_finite()) {
        Some(row) => Err(MetricError::bad_prediction(
            metric,
            format!("non-finite score at row {}", row + 1),
        )),
        None => Ok(()),
    }
}

fn check_shape(metric: &'static str, input: &ClassScores) -> Result<(), MetricError> {
    for column in input.columns {
        check_lengths(input.y_true.len(), column.len())?;
    }
    let single = input.columns.len() == 1 && input.n_classes == 2;
    if !single && input.columns.len() != input.n_classes {
        let reason = format!(
            "{} classes but {} score columns",
            input.n_classes,
            input.columns.len()
        );
        return Err(MetricError::bad_prediction(metric, reason));
    }
    if input.y_true.iter().any(|&c| c as usize >= input.n_classes) {
        return Err(MetricError::bad_answers(
            metric,
            "an answer label has no score column",
        ));
    }
    Ok(())
}

/// Binary ROC AUC of a two-class [`ClassScores`] (one column, or two: the second is used).
pub fn roc_auc(input: &ClassScores) -> Result<f64, MetricError> {
    check_shape("roc_auc", input)?;
    if input.n_classes > 2 {
        let reason = "multiclass answers need roc_auc_ovr or roc_auc_ovo";
        return Err(MetricError::bad_answers("roc_auc", reason));
    }
    if input.n_classes < 2 {
        return Err(MetricError::undefined(
            "roc_auc",
            "only one class present in the answers",
        ));
    }
    let positive = input.columns[input.columns.len() - 1];
    roc_auc_binary(positive, |i| input.y_true[i] == 1)
}

/// `np.allclose(1, row_sum)`: |1 − s| ≤ 1e-8 + 1e-5·|s|.
fn sums_to_one(sum: f64) -> bool {
    (1.0 - sum).abs() <= 1e-8 + 1e-5 * sum.abs()
}

fn check_multiclass(metric: &'static str, input: &ClassScores) -> Result<(), MetricError> {
    check_shape(metric, input)?;
    if input.columns.len() < 3 {
        return Err(MetricError::bad_answers(
            metric,
            "needs at least three classes; use roc_auc",
        ));
    }
    for row in 0..input.y_true.len() {
        let s: f64 = input.columns.iter().map(|c| c[row]).sum();
        if !sums_to_one(s) {
            let reason = format!("scores of row {} sum to {s}, not 1", row + 1);
            return Err(MetricError::bad_prediction(metric, reason));
        }
    }
    Ok(())
}

fn supports(input: &ClassScores) -> Vec<usize> {
    let mut counts = vec![0usize; input.n_classes];
    for &c in input.y_true {
        counts[c as usize] += 1;
    }
    counts
}

fn weighted_mean(values: &[f64], weights: Option<&[f64]>) -> f64 {
    match weights {
        None => values.iter().sum::<f64>() / values.len() as f64,
        Some(w) => values.iter().zip(w).map(|(v, w)| v * w).sum::<f64>() / w.iter().sum::<f64>(),
    }
}

/// One-vs-rest multiclass ROC AUC, macro or support-weighted.
pub fn roc_auc_ovr(input: &ClassScores, average: Average) -> Result<f64, MetricError> {
    check_multiclass("roc_auc_ovr", input)?;
    let per_class: Result<Vec<f64>, _> = (0..input.n_classes)
        .map(|c| roc_auc_binary(input.columns[c], |i| input.y_true[i] as usize == c))
        .collect();
    let weights: Vec<f64> = supports(input).into_iter().map(|s| s as f64).collect();
    let weights = (average == Average::Weighted).then_some(weights.as_slice());
    Ok(weighted_mean(&per_class?, weights))
}

/// The two one-vs-one AUCs of classes `a` < `b`, averaged.
fn ovo_pair(input: &ClassScores, a: usize, b: usize) -> Result<f64, MetricError> {
    let rows: Vec<usize> = (0..input.y_true.len())
        .filter(|&i| matches!(input.y_true[i] as usize, c if c == a || c == b))
        .collect();
    let pick = |c: usize| rows.iter().map(|&i| input.columns[c][i]).collect::<Vec<f64>>();
    let auc_a = roc_auc_binary(&pick(a), |j| input.y_true[rows[j]] as usize == a)?;
    let auc_b = roc_auc_binary(&pick(b), |j| input.y_true[rows[j]] as usize == b)?;
    Ok((auc_a + auc_b) / 2.0)
}

/// One-vs-one multiclass ROC AUC (Hand & Till), macro or prevalence-weighted.
pub fn roc_auc_ovo(input: &ClassScores, average: Average) -> Result<f64, MetricError> {
    check_multiclass("roc_auc_ovo", input)?;
    let support = supports(input);
    let (mut scores, mut prevalence) = (Vec::new(), Vec::new());
    for a in 0..input.n_classes {
        for b in a + 1..input.n_classes {
            scores.push(ovo_pair(input, a, b)?);
            prevalence.push((support[a] + support[b]) as f64 / input.y_true.len() as f64);
        }
    }
    let weights = (average == Average::Weighted).then_some(prevalence.as_slice());
    Ok(weighted_mean(&scores, weights))
}

fn check_probabilities(input: &ClassScores) -> Result<(), MetricError> {
    for column in input.columns {
        if let Some(row) = column.iter().position(|p| p.is_nan() || *p < 0.0 || *p > 1.0) {
            let reason = format!("probability {} at row {} is outside [0, 1]", column[row], row + 1);
            return Err(MetricError::bad_prediction("log_loss", reason));
        }
    }
    Ok(())
}

/// The probability given to the true class of `row`.
fn true_class_probability(input: &ClassScores, row: usize) -> f64 {
    let t = input.y_true[row] as usize;
    match input.columns {
        [positive] if t == 0 => 1.0 - positive[row],
        [positive] => positive[row],
        columns => columns[t][row],
    }
}

/// `log_loss`: −mean ln clip(p_true, ε, 1−ε), ε = f64::EPSILON, rows not renormalised.
pub fn log_loss(input: &ClassScores) -> Result<f64, MetricError> {
    if input.n_classes < 2 {
        return Err(MetricError::undefined(
            "log_loss",
            "only one class present in the answers",
        ));
    }
    check_shape("log_loss", input)?;
    check_probabilities(input)?;
    let eps = f64::EPSILON;
    let losses =
        (0..input.y_true.len()).map(|row| -true_class_probability(input, row).clamp(eps, 1.0 - eps).ln());
    Ok(mean(losses, input.y_true.len()))
}

/// The positive (larger) of a binary answers column's two values.
fn positive_value(metric: &'static str, y_true: &[f64]) -> Result<f64, MetricError> {
    if let Some(row) = y_true.iter().position(|v| !v.is_finite()) {
        return Err(MetricError::bad_answers(
            metric,
            format!("non-finite value at row {}", row + 1),
        ));
    }
    let lo = y_true.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = y_true.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if let Some(v) = y_true.iter().find(|&&v| v != lo && v != hi) {
        let reason = format!("a binary column holds a third value {v} besides {lo} and {hi}");
        return Err(MetricError::bad_answers(metric, reason));
    }
    Ok(hi)
}

/// Mean over target columns of the binary ROC AUC (`roc_auc_columns`); one column is `roc_auc`.
pub fn roc_auc_columns(y_true: &[&[f64]], y_pred: &[&[f64]]) -> Result<f64, MetricError> {
    check_lengths(y_true.len(), y_pred.len())?;
    let mut per_column = Vec::with_capacity(y_true.len());
    for (t, p) in y_true.iter().zip(y_pred) {
        check_lengths(t.len(), p.len())?;
        let positive = positive_value("roc_auc_columns", t)?;
        per_column.push(roc_auc_binary(p, |i| t[i] == positive)?);
    }
    Ok(per_column.iter().sum::<f64>() / per_column.len() as f64)
}

/// Kaggle's probabilistic F1 with β = 1 (`pf1`).
pub fn pf1(y_true: &[f64], y_pred: &[f64]) -> Result<f64, MetricError> {
    check_lengths(y_true.len(), y_pred.len())?;
    if let Some(row) = y_true.iter().position(|v| !v.is_finite()) {
        return Err(MetricError::bad_answers(
            "pf1",
            format!("non-finite value at row {}", row + 1),
        ));
    }
    check_scores_finite("pf1", y_pred)?;
    let (mut positives, mut ctp, mut cfp) = (0usize, 0.0f64, 0.0f64);
    for (&t, &p) in y_true.iter().zip(y_pred) {
        let p = p.clamp(0.0, 1.0);
        if t != 0.0 {
            positives += 1;
            ctp += p;
        } else {
            cfp += p;
        }
    }
    if positives == 0 {
        return Err(MetricError::undefined("pf1", "no positive row in the answers"));
    }
    if ctp + cfp == 0.0 {
        return Err(MetricError::bad_prediction(
            "pf1",
            "every prediction is 0 (the probabilistic precision is not defined)",
        ));
    }
    let precision = ctp / (ctp + cfp);
    let recall = ctp / positives as f64;
    Ok(if precision > 0.0 && recall > 0.0 {
        2.0 * (precision * recall) / (precision + recall)
    } else {
        0.0
    })
}

/// Scores a probabilistic metric.
pub fn score_probabilities(metric: Metric, input: &ClassScores) -> Result<f64, MetricError> {
    if input.y_true.is_empty() {
        return Err(MetricError::Empty);
    }
    match metric {
        Metric::RocAuc => roc_auc(input),
        Metric::RocAucOvr(avg) => roc_auc_ovr(input, avg),
        Metric::RocAucOvo(avg) => roc_auc_ovo(input, avg),
        Metric::LogLoss => log_loss(input),
        other => unreachable!("{other} is not a probabilistic metric"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_floats_and_tie_zeros() {
        let xs = [-f64::MAX, -1.5, -0.0, 0.0, 1e-300, 2.0, f64::MAX];
        let keys: Vec<u64> = xs.iter().map(|&x| key(x)).collect();
        assert!(keys.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(key(-0.0), key(0.0));
    }

    #[test]
    fn auc_counts_ties_as_half() {
        let auc = roc_auc_binary(&[0.5, 0.5, 0.5, 0.5], |i| i < 2).unwrap();
        assert_eq!(auc, 0.5);
    }

    #[test]
    fn column_auc_of_one_column_is_roc_auc() {
        let t = [0.0, 1.0, 1.0, 0.0];
        let p = [0.2, 0.7, 0.1, 0.4];
        let plain = roc_auc_binary(&p, |i| t[i] == 1.0).unwrap();
        assert_eq!(roc_auc_columns(&[&t], &[&p]).unwrap(), plain);
        let three = [0.0, 1.0, 2.0, 0.0];
        assert!(matches!(
            roc_auc_columns(&[&three], &[&p]),
            Err(MetricError::BadAnswers { .. })
        ));
    }

    #[test]
    fn pf1_clips_and_needs_a_positive() {
        // ctp = 1 + 0.5, cfp = 0 (clipped from -1): cP = 1, cR = 0.75, pF1 = 1.5/1.75.
        let v = pf1(&[1.0, 1.0, 0.0], &[2.0, 0.5, -1.0]).unwrap();
        assert!((v - 1.5 / 1.75).abs() < 1e-15, "{v}");
        assert!(matches!(
            pf1(&[0.0, 0.0], &[0.5, 0.5]),
            Err(MetricError::Undefined { .. })
        ));
        assert!(matches!(
            pf1(&[1.0, 0.0], &[0.0, 0.0]),
            Err(MetricError::BadPrediction { .. })
        ));
    }

    #[test]
    fn one_class_auc_is_undefined() {
        let err = roc_auc_binary(&[0.1, 0.2], |_| true).unwrap_err();
        assert!(matches!(err, MetricError::Undefined { .. }));
    }
}
