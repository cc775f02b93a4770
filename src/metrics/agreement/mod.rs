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

mod coefficient;
mod ratings;
mod raw;
mod table;
mod weights;

use serde::Serialize;

pub use coefficient::{AgreementError, CONFIDENCE, Coefficient};
pub use ratings::{Categories, Ratings, UnknownCategory};
pub use weights::{UnknownWeights, Weights};

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
