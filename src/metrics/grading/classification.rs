//! Label-based classification metrics (scikit-learn 1.9.1 semantics).
//!
//! All single-label metrics derive from three per-class counts over the union of answer and
//! predicted labels: true positives, true support and predicted support. Ill-defined ratios
//! (a class never predicted, say) count as 0, which is what scikit-learn's default
//! `zero_division="warn"` returns. Binary F1 uses the label `1` as the positive class, as
//! `f1_score(pos_label=1)` does.
//!
//! Multi-label metrics (`f1_samples`, `fbeta_micro`, `f1_micro_known`) read label sets:
//! duplicates within a row count once, as after `MultiLabelBinarizer`. `f1_micro_known` is
//! `f1_score(average="micro")` after `MultiLabelBinarizer(classes=<the answers' labels>)`:
//! a predicted label that no answer row holds is dropped (scikit-learn warns and ignores it)
//! instead of counting as a false positive, as in MLE-bench's multi-label graders.
//! `top1_error` reads label lists too: 1 − the share of rows whose first predicted label is
//! the row's single true label (MLE-bench's inaturalist-2019-fgvc6: `1 − accuracy_score` of
//! the first token of each prediction).

use super::labels::{Label, LabelLists, LabelPairs};
use super::metric_error::{MetricError, check_lengths};
use super::registry::{Average, Metric};

/// Per-class counts over the union of labels.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassCounts {
    pub tp: Vec<u64>,
    pub true_support: Vec<u64>,
    pub pred_support: Vec<u64>,
}

impl ClassCounts {
    /// Counts `pairs` (aligned, non-empty).
    pub fn of(pairs: &LabelPairs) -> Result<Self, MetricError> {
        check_lengths(pairs.y_true.len(), pairs.y_pred.len())?;
        let k = pairs.n_classes();
        let mut c = Self {
            tp: vec![0; k],
            true_support: vec![0; k],
            pred_support: vec![0; k],
        };
        for (&t, &p) in pairs.y_true.iter().zip(&pairs.y_pred) {
            c.true_support[t as usize] += 1;
            c.pred_support[p as usize] += 1;
            c.tp[t as usize] += u64::from(t == p);
        }
        Ok(c)
    }

    fn n(&self) -> u64 {
        self.true_support.iter().sum()
    }

    fn f1(&self, c: usize) -> f64 {
        ratio(2 * self.tp[c], self.true_support[c] + self.pred_support[c])
    }
}

/// `num / den`, or 0 when `den` is 0 (scikit-learn's `zero_division` default).
fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 { 0.0 } else { num as f64 / den as f64 }
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    sum / n as f64
}

/// `accuracy_score`.
pub fn accuracy(c: &ClassCounts) -> f64 {
    ratio(c.tp.iter().sum(), c.n())
}

/// `balanced_accuracy_score`: mean recall over classes present in the answers.
pub fn balanced_accuracy(c: &ClassCounts) -> f64 {
    let present = (0..c.tp.len()).filter(|&k| c.true_support[k] > 0);
    mean(present.map(|k| ratio(c.tp[k], c.true_support[k])))
}

/// `f1_score(average="macro")` over the union of labels.
pub fn f1_macro(c: &ClassCounts) -> f64 {
    mean((0..c.tp.len()).map(|k| c.f1(k)))
}

/// `f1_score(average="weighted")`: per-class F1 weighted by true support.
pub fn f1_weighted(c: &ClassCounts) -> f64 {
    let weighted: f64 = (0..c.tp.len()).map(|k| c.f1(k) * c.true_support[k] as f64).sum();
    weighted / c.n() as f64
}

/// `f1_score(average="micro")`.
pub fn f1_micro(c: &ClassCounts) -> f64 {
    let tp: u64 = c.tp.iter().sum();
    ratio(2 * tp, 2 * c.n())
}

/// `precision_score(average="macro")`.
pub fn precision_macro(c: &ClassCounts) -> f64 {
    mean((0..c.tp.len()).map(|k| ratio(c.tp[k], c.pred_support[k])))
}

/// `recall_score(average="macro")`.
pub fn recall_macro(c: &ClassCounts) -> f64 {
    mean((0..c.tp.len()).map(|k| ratio(c.tp[k], c.true_support[k])))
}

/// `matthews_corrcoef` (multiclass form, which equals the binary one); 0 when undefined.
pub fn mcc(c: &ClassCounts) -> f64 {
    let n = c.n() as f64;
    let dot = |a: &[u64], b: &[u64]| a.iter().zip(b).map(|(&x, &y)| x as f64 * y as f64).sum::<f64>();
    let correct: u64 = c.tp.iter().sum();
    let cov_tp = correct as f64 * n - dot(&c.true_support, &c.pred_support);
    let cov_pp = n * n - dot(&c.pred_support, &c.pred_support);
    let cov_tt = n * n - dot(&c.true_support, &c.true_support);
    if cov_pp * cov_tt == 0.0 {
        0.0
    } else {
        cov_tp / (cov_tt * cov_pp).sqrt()
    }
}

fn positive_class(classes: &[Label]) -> Option<usize> {
    classes.iter().position(|l| l.to_string() == "1")
}

/// `f1_score(average="binary", pos_label=1)`.
pub fn f1_binary(pairs: &LabelPairs) -> Result<f64, MetricError> {
    let c = ClassCounts::of(pairs)?;
    let answer_classes = c.true_support.iter().filter(|&&s| s > 0).count();
    if answer_classes > 2 {
        return Err(MetricError::bad_answers(
            "f1",
            "answers have more than two classes; use f1_macro, f1_micro or f1_weighted",
        ));
    }
    if pairs.n_classes() > 2 {
        return Err(MetricError::bad_prediction(
            "f1",
            "predictions add a third label to a binary task",
        ));
    }
    match positive_class(&pairs.classes) {
        Some(pos) => Ok(c.f1(pos)),
        None if pairs.n_classes() == 2 => Err(MetricError::bad_answers(
            "f1",
            "the positive label 1 is not among the labels",
        )),
        None => Ok(0.0),
    }
}

/// Scores a label metric.
pub fn score_labels(metric: Metric, pairs: &LabelPairs) -> Result<f64, MetricError> {
    if let Metric::F1(Average::Binary) = metric {
        return f1_binary(pairs);
    }
    let c = ClassCounts::of(pairs)?;
    Ok(match metric {
        Metric::Accuracy => accuracy(&c),
        Metric::BalancedAccuracy => balanced_accuracy(&c),
        Metric::F1(Average::Macro) => f1_macro(&c),
        Metric::F1(Average::Micro) => f1_micro(&c),
        Metric::F1(Average::Weighted) => f1_weighted(&c),
        Metric::PrecisionMacro => precision_macro(&c),
        Metric::RecallMacro => recall_macro(&c),
        Metric::Mcc => mcc(&c),
        other => unreachable!("{other} is not a label metric"),
    })
}

/// Sorted, de-duplicated copy of one row's label set.
fn as_set(row: &[u32]) -> Vec<u32> {
    let mut set = row.to_vec();
    set.sort_unstable();
    set.dedup();
    set
}

fn intersection(a: &[u32], b: &[u32]) -> usize {
    a.iter().filter(|x| b.binary_search(x).is_ok()).count()
}

/// (|T ∩ P|, |T|, |P|) of each row's label sets.
fn set_counts(lists: &LabelLists) -> Result<Vec<(usize, usize, usize)>, MetricError> {
    check_lengths(lists.y_true.len(), lists.y_pred.len())?;
    let rows = lists.y_true.iter().zip(&lists.y_pred);
    Ok(rows
        .map(|(t, p)| {
            let (t, p) = (as_set(t), as_set(p));
            (intersection(&t, &p), t.len(), p.len())
        })
        .collect())
}

/// `f1_score(average="samples")` over label sets; a row with no true and no predicted label
/// scores 0.
pub fn f1_samples(lists: &LabelLists) -> Result<f64, MetricError> {
    let counts = set_counts(lists)?;
    let per_row = counts
        .iter()
        .map(|&(tp, t, p)| ratio(2 * tp as u64, (t + p) as u64));
    Ok(per_row.sum::<f64>() / counts.len() as f64)
}

/// `fbeta_score(average="micro", beta)` over label sets (single labels are sets of one, where
/// this equals accuracy).
pub fn fbeta_micro(lists: &LabelLists, beta: f64) -> Result<f64, MetricError> {
    let counts = set_counts(lists)?;
    let (tp, t, p) = counts
        .iter()
        .fold((0usize, 0usize, 0usize), |(a, b, c), &(x, y, z)| {
            (a + x, b + y, c + z)
        });
    let beta2 = beta * beta;
    let den = beta2 * t as f64 + p as f64;
    Ok(if den == 0.0 {
        0.0
    } else {
        (1.0 + beta2) * tp as f64 / den
    })
}

/// `f1_score(average="micro")` over label sets, predicted labels outside the answers'
/// vocabulary ignored (`f1_micro_known`).
pub fn f1_micro_known(lists: &LabelLists) -> Result<f64, MetricError> {
    check_lengths(lists.y_true.len(), lists.y_pred.len())?;
    let mut known = vec![false; lists.labels.len()];
    lists
        .y_true
        .iter()
        .flatten()
        .for_each(|&c| known[c as usize] = true);
    let (mut tp, mut t, mut p) = (0usize, 0usize, 0usize);
    for (truth, pred) in lists.y_true.iter().zip(&lists.y_pred) {
        let truth = as_set(truth);
        let pred: Vec<u32> = as_set(pred).into_iter().filter(|&c| known[c as usize]).collect();
        tp += intersection(&truth, &pred);
        t += truth.len();
        p += pred.len();
    }
    let den = (t + p) as f64;
    Ok(if den == 0.0 { 0.0 } else { 2.0 * tp as f64 / den })
}

/// 1 − accuracy of the first predicted label of each row against its single true label
/// (`top1_error`). An answer row must hold exactly one label; an empty prediction is unusable
/// (MLE-bench's grader fails on it).
pub fn top1_error(lists: &LabelLists) -> Result<f64, MetricError> {
    check_lengths(lists.y_true.len(), lists.y_pred.len())?;
    let mut correct = 0usize;
    for (row, (truth, pred)) in lists.y_true.iter().zip(&lists.y_pred).enumerate() {
        let [truth] = truth.as_slice() else {
            let reason = format!("row {} must hold exactly one true label", row + 1);
            return Err(MetricError::bad_answers("top1_error", reason));
        };
        let Some(first) = pred.first() else {
            let reason = format!("row {} predicts no label", row + 1);
            return Err(MetricError::bad_prediction("top1_error", reason));
        };
        correct += usize::from(first == truth);
    }
    Ok(1.0 - correct as f64 / lists.y_true.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(t: &[&str], p: &[&str]) -> LabelLists {
        let split = |rows: &[&str]| -> Vec<Vec<String>> {
            rows.iter()
                .map(|r| r.split_whitespace().map(str::to_string).collect())
                .collect()
        };
        LabelLists::encode(&split(t), &split(p))
    }

    #[test]
    fn f1_micro_known_drops_unknown_predicted_labels() {
        // Answers' vocabulary {a, b, c}; `z` is dropped: tp = 2, |T| = 3, |P| = 3.
        let l = lists(&["a b", "c"], &["a z b", "a"]);
        assert_eq!(f1_micro_known(&l).unwrap(), 4.0 / 6.0);
        // fbeta_micro counts `z` as a false positive: |P| = 4.
        assert_eq!(fbeta_micro(&l, 1.0).unwrap(), 4.0 / 7.0);
    }

    #[test]
    fn top1_error_reads_the_first_label() {
        let l = lists(&["1", "2", "3"], &["1 5 6", "9 2", "3"]);
        assert!((top1_error(&l).unwrap() - 1.0 / 3.0).abs() < 1e-15);
        let empty = lists(&["1"], &[""]);
        assert!(matches!(
            top1_error(&empty),
            Err(MetricError::BadPrediction { .. })
        ));
        let two = lists(&["1 2"], &["1"]);
        assert!(matches!(top1_error(&two), Err(MetricError::BadAnswers { .. })));
    }
    use crate::metrics::grading::labels::LabelColumn;

    fn pairs(t: &[i64], p: &[i64]) -> LabelPairs {
        LabelPairs::encode(LabelColumn::Int(t.to_vec()), LabelColumn::Int(p.to_vec()))
    }

    #[test]
    fn mcc_is_zero_when_one_side_is_constant() {
        let c = ClassCounts::of(&pairs(&[0, 1, 1], &[1, 1, 1])).unwrap();
        assert_eq!(mcc(&c), 0.0);
    }

    #[test]
    fn binary_f1_rejects_three_answer_classes() {
        let err = f1_binary(&pairs(&[0, 1, 2], &[0, 1, 1])).unwrap_err();
        assert!(matches!(err, MetricError::BadAnswers { .. }), "{err}");
    }

    #[test]
    fn length_mismatch_is_an_error() {
        let p = LabelPairs {
            classes: vec![Label::Int(0)],
            y_true: vec![0, 0],
            y_pred: vec![0],
        };
        assert_eq!(
            ClassCounts::of(&p).unwrap_err(),
            MetricError::Length { expected: 2, got: 1 }
        );
    }
}
