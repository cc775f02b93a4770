//! Inter-rater agreement coefficients exactly as irrCAC 0.4.4 reports them:
//! Gwet's AC1/AC2, Fleiss' kappa, Krippendorff's alpha, Brennan–Prediger
//! (raw ratings, any number of raters, missing ratings allowed) and, for two
//! raters, Cohen's kappa; each with its standard error and 95% confidence
//! interval `coefficient ± t_{0.975, n−1}·se`, the upper bound capped at 1.
//!
//! Invariants: the rating scale is [`Categories`] (explicit lists are
//! respected, so unused categories count, as they must for AC1); weights are
//! irrCAC's ([`Weights`]); formulas follow `irrCAC/raw.py` and
//! `irrCAC/table.py` in the same order of operations, with `N = ∞` (no
//! finite-population correction). Documented irrCAC corners mirrored here:
//! with one category AC1's chance agreement is `1 − 1e−15` and its standard
//! error NaN (an ∞·0 in irrCAC), BP's chance agreement is 1e−15, Fleiss and
//! Krippendorff are undefined (irrCAC raises `ZeroDivisionError`), and an
//! interval whose upper end is NaN is reported as `[NaN, 1]` (Python's
//! `min(1, nan)`).

mod ratings;
mod raw;
mod table;
mod weights;

use std::fmt;

use serde::Serialize;

pub use ratings::{Categories, Ratings, UnknownCategory};
pub use weights::{UnknownWeights, Weights};

use crate::metrics::student_t;

/// Confidence level of every interval.
pub const CONFIDENCE: f64 = 0.95;

/// Why the coefficients cannot be computed from these ratings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgreementError {
    /// irrCAC divides by `n (n − 1)`.
    #[error("at least two rated subjects are needed, got {0}")]
    TooFewSubjects(usize),
    /// No subject has two ratings, so observed agreement is undefined.
    #[error("no subject has ratings from two or more raters")]
    NoPairedRatings,
    /// There are no ratings and no categories.
    #[error("there are no ratings")]
    NoRatings,
    /// Partial-agreement weights divide by the spread of the scale.
    #[error("`{0}` weights need at least two categories")]
    WeightsNeedTwoCategories(Weights),
    /// Ratio weights divide by `c_k + c_l`.
    #[error("`ratio` weights are undefined when 0 is a category")]
    RatioWithZero,
    /// A coefficient whose chance agreement is exactly 1.
    #[error("{0} is undefined: chance agreement is 1")]
    Undefined(&'static str),
}

/// One coefficient with irrCAC's inference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coefficient {
    /// irrCAC's name for it (`AC1`, `AC2`, ...).
    pub name: &'static str,
    /// The estimate.
    pub coefficient: f64,
    /// Observed (weighted) agreement.
    pub pa: f64,
    /// Chance agreement.
    pub pe: f64,
    /// Standard error.
    pub se: f64,
    /// 95% confidence interval, upper end capped at 1.
    pub ci: [f64; 2],
}

impl Coefficient {
    /// From a variance, flooring a zero standard error at 1e-15 as irrCAC's
    /// raw-data functions do.
    fn raw(name: &'static str, c: f64, pa: f64, pe: f64, var: f64, df: f64) -> Self {
        let se = var.sqrt();
        Self::with_se(name, c, pa, pe, if se == 0.0 { 1e-15 } else { se }, df)
    }

    fn with_se(name: &'static str, c: f64, pa: f64, pe: f64, se: f64, df: f64) -> Self {
        Self {
            name,
            coefficient: c,
            pa,
            pe,
            se,
            ci: confidence_interval(c, se, df),
        }
    }
}

/// `t.interval(0.95, df, loc=c, scale=se)` then `ucb = min(1, ucb)`.
fn confidence_interval(c: f64, se: f64, df: f64) -> [f64; 2] {
    let (lo, hi) = student_t::interval(CONFIDENCE, df);
    let (lcb, ucb) = if se > 0.0 {
        (c + lo * se, c + hi * se)
    } else {
        (f64::NAN, f64::NAN)
    };
    [lcb, if ucb < 1.0 { ucb } else { 1.0 }]
}

impl fmt::Display for Coefficient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [lo, hi] = self.ci;
        write!(
            f,
            "{:.5} (pa = {:.5}, pe = {:.5}, se = {:.5}, 95% CI [{lo:.5}, {hi:.5}])",
            self.coefficient, self.pa, self.pe, self.se
        )
    }
}

/// All coefficients for one ratings table; `None` where undefined.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    /// Gwet's AC1 (identity weights) or AC2.
    pub ac1: Coefficient,
    /// Fleiss' generalized kappa.
    pub fleiss: Option<Coefficient>,
    /// Krippendorff's alpha.
    pub krippendorff: Option<Coefficient>,
    /// Brennan–Prediger.
    pub brennan_prediger: Coefficient,
    /// Cohen's kappa, only with exactly two raters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohen: Option<Coefficient>,
}

/// Computes every coefficient for `ratings` under `weights`.
pub fn agreement(ratings: &Ratings, weights: Weights) -> Result<Agreement, AgreementError> {
    let w = weight_matrix(ratings.categories(), weights)?;
    let data = raw::RawData::new(ratings.counts(), &w)?;
    Ok(Agreement {
        ac1: data.gwet(),
        fleiss: defined(data.fleiss())?,
        krippendorff: defined(data.krippendorff())?,
        brennan_prediger: data.brennan_prediger(),
        cohen: (ratings.raters() == 2).then(|| table::cohen(&complete_pairs(ratings), &w)),
    })
}

/// `Undefined` becomes `None`; other errors propagate.
fn defined(result: Result<Coefficient, AgreementError>) -> Result<Option<Coefficient>, AgreementError> {
    match result {
        Ok(c) => Ok(Some(c)),
        Err(AgreementError::Undefined(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

fn weight_matrix(categories: &Categories, weights: Weights) -> Result<Vec<Vec<f64>>, AgreementError> {
    let values = categories.weight_values();
    match values.len() {
        0 => Err(AgreementError::NoRatings),
        1 if weights != Weights::Identity => Err(AgreementError::WeightsNeedTwoCategories(weights)),
        _ if weights == Weights::Ratio && values.contains(&0.0) => Err(AgreementError::RatioWithZero),
        _ => Ok(weights.matrix(&values)),
    }
}

/// Subjects rated by both of two raters, as category-index pairs.
fn complete_pairs(ratings: &Ratings) -> Vec<(usize, usize)> {
    let pair = |row: &Vec<Option<usize>>| Some((row.first().copied()??, row.get(1).copied()??));
    ratings.rows().iter().filter_map(pair).collect()
}

#[cfg(test)]
mod tests;
