//! One agreement coefficient with its standard error and confidence interval
//! ([`Coefficient`]), and why one cannot be computed ([`AgreementError`]). A leaf of
//! `metrics/agreement/`: the estimators of `raw` and `table` return it.

use std::fmt;

use serde::Serialize;

use super::Weights;
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
    pub(super) fn raw(name: &'static str, c: f64, pa: f64, pe: f64, var: f64, df: f64) -> Self {
        let se = var.sqrt();
        Self::with_se(name, c, pa, pe, if se == 0.0 { 1e-15 } else { se }, df)
    }

    pub(super) fn with_se(name: &'static str, c: f64, pa: f64, pe: f64, se: f64, df: f64) -> Self {
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
