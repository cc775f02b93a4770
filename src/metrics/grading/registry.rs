//! The metric registry: every metric ml2b grades with, by name.
//!
//! Names are the canonical keys listed in [`Metric::NAMES`]; `map@K` takes any K ≥ 1 and
//! `fbeta_micro@B` any β > 0 (plain `fbeta_micro` is β = 1). The original ML2B keys
//! (`roc_auc_score`, `f1_score_avg_macro`, …) parse too, to the metric they computed.
//! Compatibility variants have their own names: `qwk_sklearn` (scikit-learn's
//! `cohen_kappa_score(weights="quadratic")` over the observed labels instead of Kaggle's full
//! rating range), `map_ml2b` (ML2B's reciprocal rank of the single true label, without k) and
//! `wmae_ml2b` (ML2B's `mean(w·|y−ŷ|)` instead of `Σw|y−ŷ|/Σw`).
//!
//! Metrics added for MLE-bench's graders (see [`super::mle_bench`]): `roc_auc_columns` (the
//! mean over target columns of the binary ROC AUC, which is plain `roc_auc` for one column),
//! `spearman_columns` (mean column-wise Spearman ρ), `pearson` (Pearson's r), `pf1`
//! (Kaggle's probabilistic F1), `top1_error` (1 − accuracy of the first predicted label) and
//! `f1_micro_known` (micro F1 over label sets, predicted labels that no answer holds ignored).
//!
//! Invariant: `name.parse::<Metric>()?.to_string()` is the canonical name, and parsing it
//! again gives the same metric.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Whether a larger score is better. The competition manifest has the last word; this is
/// only the metric's natural direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Maximize,
    Minimize,
}

/// How the per-class or per-label scores are averaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Average {
    Binary,
    Macro,
    Micro,
    Weighted,
    Samples,
}

/// Which quadratic weighted kappa.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KappaForm {
    /// Kaggle's `ml_metrics.quadratic_weighted_kappa`: integer ratings over min..=max.
    Kaggle,
    /// scikit-learn's `cohen_kappa_score(weights="quadratic")`: indices of observed labels.
    Sklearn,
}

/// Which mean average precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapForm {
    /// Kaggle's `ml_metrics.mapk` at `k`.
    Kaggle { k: usize },
    /// ML2B's `apk`: 1/rank of the single true label anywhere in the list (no cut-off).
    Ml2b,
}

/// A grading metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    RocAuc,
    RocAucOvr(Average),
    RocAucOvo(Average),
    LogLoss,
    Rmse,
    Rmsle,
    Mse,
    Mae,
    Wmae,
    WmaeMl2b,
    R2,
    Accuracy,
    BalancedAccuracy,
    F1(Average),
    FbetaMicro(f64),
    PrecisionMacro,
    RecallMacro,
    Mcc,
    Qwk(KappaForm),
    Map(MapForm),
    RmseMulti,
    RmsleMulti,
    /// Mean over target columns of the binary ROC AUC (`roc_auc_columns`).
    RocAucColumns,
    /// Mean over target columns of Spearman's ρ (`spearman_columns`).
    SpearmanColumns,
    /// Pearson's correlation coefficient (`pearson`).
    Pearson,
    /// Kaggle's probabilistic F1 (`pf1`).
    Pf1,
    /// 1 − accuracy of the first predicted label of each row (`top1_error`).
    Top1Error,
    /// Micro F1 over label sets, counting only labels the answers hold (`f1_micro_known`).
    F1MicroKnown,
}

/// The shape of input a metric needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// One numeric target column.
    Values,
    /// One numeric target column and a weight column in the answers.
    WeightedValues,
    /// Several numeric target columns, matched by name (`roc_auc_columns` and
    /// `spearman_columns` take one or more; see [`Metric::accepts_targets`]).
    MultiValues,
    /// One label column.
    Labels,
    /// Space-separated label lists (multi-label sets, ranked lists).
    LabelLists,
    /// Class probabilities or scores, one column per class (one for a binary task). For
    /// `log_loss`, answers may also be one-hot: one 0/1 target column per class.
    Probabilities,
}

/// An unknown metric name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown metric `{name}`; known metrics: {}", Metric::NAMES.join(", "))]
pub struct UnknownMetric {
    pub name: String,
}

impl Metric {
    /// Canonical names (`map@K` and `fbeta_micro@B` stand for their families).
    pub const NAMES: &'static [&'static str] = &[
        "roc_auc",
        "roc_auc_ovr",
        "roc_auc_ovr_weighted",
        "roc_auc_ovo",
        "roc_auc_ovo_weighted",
        "log_loss",
        "rmse",
        "rmsle",
        "mse",
        "mae",
        "wmae",
        "wmae_ml2b",
        "r2",
        "accuracy",
        "balanced_accuracy",
        "f1",
        "f1_macro",
        "f1_micro",
        "f1_weighted",
        "f1_samples",
        "fbeta_micro",
        "fbeta_micro@B",
        "precision_macro",
        "recall_macro",
        "mcc",
        "qwk",
        "qwk_sklearn",
        "map@K",
        "map_ml2b",
        "rmse_multi",
        "rmsle_multi",
        "roc_auc_columns",
        "spearman_columns",
        "pearson",
        "pf1",
        "top1_error",
        "f1_micro_known",
    ];

    /// The metric's natural direction.
    pub fn direction(self) -> Direction {
        match self {
            Self::LogLoss | Self::Rmse | Self::Rmsle | Self::Mse | Self::Mae => Direction::Minimize,
            Self::Wmae | Self::WmaeMl2b | Self::RmseMulti | Self::RmsleMulti => Direction::Minimize,
            Self::Top1Error => Direction::Minimize,
            _ => Direction::Maximize,
        }
    }

    /// The closed interval every score of the metric lies in (an infinite end: unbounded
    /// on that side, though the score itself must be finite).
    pub fn range(self) -> (f64, f64) {
        const UNIT: (f64, f64) = (0.0, 1.0);
        const NON_NEGATIVE: (f64, f64) = (0.0, f64::INFINITY);
        match self {
            Self::LogLoss | Self::Rmse | Self::Rmsle | Self::Mse | Self::Mae => NON_NEGATIVE,
            Self::Wmae | Self::WmaeMl2b | Self::RmseMulti | Self::RmsleMulti => NON_NEGATIVE,
            Self::R2 => (f64::NEG_INFINITY, 1.0),
            Self::Mcc | Self::SpearmanColumns | Self::Pearson => (-1.0, 1.0),
            // Weighted kappa reaches below -1 only on degenerate tables; 1 is its maximum.
            Self::Qwk(_) => (f64::NEG_INFINITY, 1.0),
            Self::RocAuc | Self::RocAucOvr(_) | Self::RocAucOvo(_) => UNIT,
            Self::Accuracy | Self::BalancedAccuracy | Self::F1(_) | Self::FbetaMicro(_) => UNIT,
            Self::PrecisionMacro | Self::RecallMacro | Self::Map(_) => UNIT,
            Self::RocAucColumns | Self::Pf1 | Self::Top1Error | Self::F1MicroKnown => UNIT,
        }
    }

    /// The input shape the metric reads.
    pub fn input_kind(self) -> InputKind {
        match self {
            Self::RocAuc | Self::RocAucOvr(_) | Self::RocAucOvo(_) | Self::LogLoss => {
                InputKind::Probabilities
            }
            Self::Rmse | Self::Rmsle | Self::Mse | Self::Mae | Self::R2 => InputKind::Values,
            Self::Pearson | Self::Pf1 => InputKind::Values,
            Self::Wmae | Self::WmaeMl2b => InputKind::WeightedValues,
            Self::RmseMulti | Self::RmsleMulti => InputKind::MultiValues,
            Self::RocAucColumns | Self::SpearmanColumns => InputKind::MultiValues,
            Self::F1(Average::Samples) | Self::FbetaMicro(_) | Self::Map(_) => InputKind::LabelLists,
            Self::Top1Error | Self::F1MicroKnown => InputKind::LabelLists,
            _ => InputKind::Labels,
        }
    }

    /// Whether the metric grades `n` target columns: `rmse_multi` and `rmsle_multi` two or
    /// more; `roc_auc_columns` and `spearman_columns` one or more (one column is the plain
    /// metric); `log_loss` one (a label column) or more (one-hot answers, one 0/1 column per
    /// class); every other metric exactly one.
    pub fn accepts_targets(self, n: usize) -> bool {
        match self {
            Self::RmseMulti | Self::RmsleMulti => n >= 2,
            Self::RocAucColumns | Self::SpearmanColumns | Self::LogLoss => n >= 1,
            _ => n == 1,
        }
    }

    /// How many target columns the metric grades, in words (for messages).
    pub fn target_count(self) -> &'static str {
        match self {
            Self::RmseMulti | Self::RmsleMulti => "more than one target column",
            Self::RocAucColumns | Self::SpearmanColumns => "one or more target columns",
            Self::LogLoss => "one target column (labels) or one 0/1 column per class (one-hot)",
            _ => "exactly one target column",
        }
    }
}

fn parse_plain(name: &str) -> Option<Metric> {
    use Average::*;
    Some(match name {
        "roc_auc" | "roc_auc_score" => Metric::RocAuc,
        "roc_auc_ovr" => Metric::RocAucOvr(Macro),
        "roc_auc_ovr_weighted" => Metric::RocAucOvr(Weighted),
        "roc_auc_ovo" => Metric::RocAucOvo(Macro),
        "roc_auc_ovo_weighted" => Metric::RocAucOvo(Weighted),
        "log_loss" => Metric::LogLoss,
        "rmse" | "root_mean_squared_error" => Metric::Rmse,
        "rmsle" | "root_mean_squared_log_error" => Metric::Rmsle,
        "mse" | "mean_squared_error" => Metric::Mse,
        "mae" | "mean_absolute_error" => Metric::Mae,
        "wmae" => Metric::Wmae,
        "wmae_ml2b" => Metric::WmaeMl2b,
        "r2" | "r2_score" => Metric::R2,
        "accuracy" | "accuracy_score" => Metric::Accuracy,
        "balanced_accuracy" | "balanced_accuracy_score" => Metric::BalancedAccuracy,
        "f1" | "f1_score" => Metric::F1(Binary),
        "f1_macro" | "f1_score_avg_macro" => Metric::F1(Macro),
        "f1_micro" => Metric::F1(Micro),
        "f1_weighted" | "f1_score_avg_weighted" => Metric::F1(Weighted),
        "f1_samples" | "f1_score_multilabel" => Metric::F1(Samples),
        "fbeta_micro" | "fbeta_score_micro" => Metric::FbetaMicro(1.0),
        "precision_macro" | "precision_score_macro" => Metric::PrecisionMacro,
        "recall_macro" | "recall_score_macro" => Metric::RecallMacro,
        "mcc" | "matthews_corrcoef" => Metric::Mcc,
        "qwk" => Metric::Qwk(KappaForm::Kaggle),
        "qwk_sklearn" => Metric::Qwk(KappaForm::Sklearn),
        "map_ml2b" | "mean_average_precision" => Metric::Map(MapForm::Ml2b),
        "rmse_multi" | "root_mean_squared_error_multitarget" => Metric::RmseMulti,
        "rmsle_multi" | "root_mean_squared_logarithmic_error_multitarget" => Metric::RmsleMulti,
        "roc_auc_columns" => Metric::RocAucColumns,
        "spearman_columns" => Metric::SpearmanColumns,
        "pearson" => Metric::Pearson,
        "pf1" => Metric::Pf1,
        "top1_error" => Metric::Top1Error,
        "f1_micro_known" => Metric::F1MicroKnown,
        _ => return None,
    })
}

fn parse_parametric(name: &str) -> Option<Metric> {
    let (family, param) = name.split_once('@')?;
    match family {
        "map" => match param.parse::<usize>() {
            Ok(k) if k >= 1 => Some(Metric::Map(MapForm::Kaggle { k })),
            _ => None,
        },
        "map_ml2b" => param.parse::<usize>().ok().map(|_| Metric::Map(MapForm::Ml2b)),
        "fbeta_micro" => match param.parse::<f64>() {
            Ok(beta) if beta.is_finite() && beta > 0.0 => Some(Metric::FbetaMicro(beta)),
            _ => None,
        },
        _ => None,
    }
}

impl FromStr for Metric {
    type Err = UnknownMetric;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let trimmed = name.trim();
        parse_plain(trimmed)
            .or_else(|| parse_parametric(trimmed))
            .ok_or_else(|| UnknownMetric {
                name: name.to_string(),
            })
    }
}

fn average_suffix(average: Average) -> &'static str {
    match average {
        Average::Binary => "",
        Average::Macro => "_macro",
        Average::Micro => "_micro",
        Average::Weighted => "_weighted",
        Average::Samples => "_samples",
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fixed = match self {
            Self::RocAucOvr(Average::Weighted) => "roc_auc_ovr_weighted",
            Self::RocAucOvr(_) => "roc_auc_ovr",
            Self::RocAucOvo(Average::Weighted) => "roc_auc_ovo_weighted",
            Self::RocAucOvo(_) => "roc_auc_ovo",
            Self::F1(avg) => return write!(f, "f1{}", average_suffix(*avg)),
            Self::FbetaMicro(beta) if *beta == 1.0 => "fbeta_micro",
            Self::FbetaMicro(beta) => return write!(f, "fbeta_micro@{beta}"),
            Self::Map(MapForm::Kaggle { k }) => return write!(f, "map@{k}"),
            other => other.simple_name(),
        };
        f.write_str(fixed)
    }
}

impl Metric {
    fn simple_name(self) -> &'static str {
        match self {
            Self::RocAuc => "roc_auc",
            Self::LogLoss => "log_loss",
            Self::Rmse => "rmse",
            Self::Rmsle => "rmsle",
            Self::Mse => "mse",
            Self::Mae => "mae",
            Self::Wmae => "wmae",
            Self::WmaeMl2b => "wmae_ml2b",
            Self::R2 => "r2",
            Self::Accuracy => "accuracy",
            Self::BalancedAccuracy => "balanced_accuracy",
            Self::PrecisionMacro => "precision_macro",
            Self::RecallMacro => "recall_macro",
            Self::Mcc => "mcc",
            Self::Qwk(KappaForm::Kaggle) => "qwk",
            Self::Qwk(KappaForm::Sklearn) => "qwk_sklearn",
            Self::Map(MapForm::Ml2b) => "map_ml2b",
            Self::RmseMulti => "rmse_multi",
            Self::RmsleMulti => "rmsle_multi",
            Self::RocAucColumns => "roc_auc_columns",
            Self::SpearmanColumns => "spearman_columns",
            Self::Pearson => "pearson",
            Self::Pf1 => "pf1",
            Self::Top1Error => "top1_error",
            Self::F1MicroKnown => "f1_micro_known",
            _ => "metric",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_names_round_trip() {
        for name in Metric::NAMES {
            let name = name.replace("@K", "@3").replace("@B", "@0.5");
            let metric: Metric = name.parse().unwrap();
            assert_eq!(metric.to_string(), name);
            assert_eq!(metric.to_string().parse::<Metric>().unwrap(), metric);
        }
    }

    #[test]
    fn ml2b_keys_parse() {
        assert_eq!("f1_score_avg_macro".parse(), Ok(Metric::F1(Average::Macro)));
        assert_eq!("roc_auc_score".parse(), Ok(Metric::RocAuc));
        assert_eq!("mean_average_precision".parse(), Ok(Metric::Map(MapForm::Ml2b)));
    }

    #[test]
    fn unknown_names_are_errors() {
        for bad in ["auc", "map@0", "map@x", "fbeta_micro@-1", "", "rmse2"] {
            let err = bad.parse::<Metric>().unwrap_err();
            assert!(err.to_string().contains("unknown metric"), "{err}");
        }
    }

    #[test]
    fn every_metric_has_a_range_with_a_finite_end() {
        for name in Metric::NAMES {
            let name = name.replace("@K", "@3").replace("@B", "@0.5");
            let (lo, hi) = name.parse::<Metric>().unwrap().range();
            assert!(lo < hi && (lo.is_finite() || hi.is_finite()), "{name}");
        }
    }

    #[test]
    fn target_counts() {
        assert!(Metric::RocAucColumns.accepts_targets(1) && Metric::RocAucColumns.accepts_targets(4));
        assert!(Metric::LogLoss.accepts_targets(1) && Metric::LogLoss.accepts_targets(3));
        assert!(!Metric::RmseMulti.accepts_targets(1) && Metric::RmseMulti.accepts_targets(2));
        assert!(Metric::Rmse.accepts_targets(1) && !Metric::Rmse.accepts_targets(2));
        assert!(!Metric::Accuracy.accepts_targets(0));
    }

    #[test]
    fn directions() {
        assert_eq!(Metric::Rmse.direction(), Direction::Minimize);
        assert_eq!(Metric::R2.direction(), Direction::Maximize);
        assert_eq!(Metric::LogLoss.direction(), Direction::Minimize);
        assert_eq!(
            "map@5".parse::<Metric>().unwrap().direction(),
            Direction::Maximize
        );
        assert_eq!(Metric::Top1Error.direction(), Direction::Minimize);
        assert_eq!(Metric::Pearson.direction(), Direction::Maximize);
    }
}
