//! The statistics ml2b computes, each exact to its reference implementation.
//!
//! Text and agreement (translate-validate):
//! * [`bleu`], [`chrf`], [`tokenize`]: sacreBLEU-identical BLEU, chrF and chrF++;
//! * [`agreement`]: irrCAC-identical Gwet AC1/AC2, Fleiss, Cohen, Krippendorff,
//!   Brennan–Prediger, with standard errors and confidence intervals;
//! * [`spearman`], [`student_t`]: scipy-identical Spearman ρ and its p-value;
//! * [`text_files`]: the file-level API behind `ml2b bleu` and `ml2b agreement`.
//!
//! Grading (grade, analyze):
//! * [`grading`]: competition metrics (scikit-learn / Kaggle definitions) and the
//!   loading and validation of submissions, behind `ml2b score`;
//! * [`aup`]: performance ratios r_p, pass and win rates, and the areas under the
//!   performance profile in ml2b's and the original code's conventions, behind
//!   `ml2b aup`;
//! * [`medals`]: MLE-bench's medals, above-median and thresholds of a score on a Kaggle
//!   leaderboard (its `rank_score`, exactly), behind grade events and `ml2b grade-sample`.
//!
//! Every value agrees with its reference to 1e-9; the expected values come from
//! the scripts in `tests/reference/` (`text_stats.py`, `grade_stats.py`,
//! `medal_stats.py`, whose values are compared exactly), which
//! write `tests/fixtures/`. No expected number is typed by hand.

pub mod agreement;
pub mod aup;
pub mod bleu;
pub mod chrf;
pub mod corpus;
pub mod grading;
pub mod medals;
mod ngram_count;
pub mod spearman;
pub mod student_t;
pub mod text_files;
pub mod tokenize;

#[cfg(test)]
mod reference_fixture;
