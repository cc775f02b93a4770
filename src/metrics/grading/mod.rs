//! Competition grading metrics, computed columnar over Arrow arrays and slices.
//!
//! Every metric reproduces the pinned scikit-learn 1.9.1 (or Kaggle's `ml_metrics`) to 1e-9
//! on the inputs both accept. Where the reference returns NaN with a warning (ROC AUC with
//! one class, R² with fewer than two rows, kappa with a single shared label) or raises, the
//! metric returns [`MetricError`] instead, so that no NaN score leaves this module.
//!
//! Which submissions are valid is decided by versioned rules ([`rules`]): today's (V2)
//! follow the reference implementations (pandas' typing of CSV columns, scikit-learn's
//! refusals and warnings, ML2B's own `apk`) and, on an MLE-bench competition graded natively,
//! its `grade.py`'s checks, with the few places where `grade.py` is demonstrably wrong listed
//! there as departures; V1 is what grade events of schema 2 and 3 were graded under.
//!
//! Layout: [`registry`] names the metrics and their direction, [`labels`] turns label columns
//! into dense class codes, the family modules compute (`correlation` holds Pearson and the
//! column-wise Spearman), and [`submission`] loads answer and prediction files, validates a
//! submission and scores it. [`mle_bench`] maps MLE-bench's grader names to these metrics (or
//! to a grading program), checked against `tests/reference/mle_bench_grades.py`. For the regression metrics over
//! Parquet, `stream` first tries to prove the submission valid and score it in one pass over
//! small batches; whatever it cannot prove is graded in memory. What several of these share
//! lives in leaves of its own: `columns` ([`GradeOptions`], which columns a metric reads),
//! `invalid` ([`Invalid`]) and `metric_error` ([`MetricError`]). Imports go one way:
//! `submission` uses `stream` and [`align`], all of them use the leaves, never the reverse;
//! this file only declares and re-exports.
//!
//! Invariants: inputs handed to a family function are already aligned row by row and of equal
//! length (checked with [`MetricError::Length`]); class codes index the sorted class list.

pub mod align;
pub mod classification;
mod columns;
pub mod correlation;
mod invalid;
pub mod kappa;
pub mod labels;
mod metric_error;
pub mod mle_bench;
pub mod probabilistic;
pub mod ranking;
pub mod registry;
pub mod regression;
pub mod rules;
mod stream;
pub mod submission;
mod sum;
pub mod table;

#[cfg(test)]
mod mle_bench_tests;
#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod rules_tests;
#[cfg(test)]
mod stream_tests;
#[cfg(test)]
mod submission_tests;

pub use columns::GradeOptions;
pub use invalid::Invalid;
pub use metric_error::MetricError;
pub use registry::{Direction, InputKind, Metric, UnknownMetric};
pub use rules::Rules;
pub use submission::{GradeError, Graded, Score, score_files, score_files_graded, score_files_with};
