//! Why a submission is invalid: the faults a grader reports as [`Invalid`] rather than as an
//! error, shared by the id alignment (`align`) and the checks of `submission`.
//!
//! Rows are 1-based data rows of the file, header not counted; the messages are what a
//! submitter reads (in events and on the command line), so their wording is part of the output.

/// Why a submission is invalid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Invalid {
    #[error("expected {expected} rows, got {got}")]
    RowCount { expected: usize, got: usize },
    #[error("missing column `{0}`")]
    MissingColumn(String),
    #[error("expected {} class columns ({}), got {} ({})", expected.len(), expected.join(", "), got.len(), got.join(", "))]
    ClassColumns { expected: Vec<String>, got: Vec<String> },
    #[error("expected exactly one target column besides the id, found {}: {} (name the target column: `ml2b score --target COL`)", found.len(), found.join(", "))]
    TargetColumns { found: Vec<String> },
    #[error("{metric} needs {needs}, found {}: {}", found.len(), found.join(", "))]
    TargetCount {
        metric: String,
        needs: &'static str,
        found: Vec<String>,
    },
    #[error(
        "column `{column}` row {row}: {value}, but log_loss over several target columns reads them as one-hot class indicators (exactly one 1 per row, 0 elsewhere); if the answers hold a label column, name it (`ml2b score --target COL`)"
    )]
    NotOneHot {
        column: String,
        row: usize,
        value: String,
    },
    #[error("id `{id}` in column `{column}` appears at rows {first} and {second}")]
    DuplicateId {
        column: String,
        id: String,
        first: usize,
        second: usize,
    },
    #[error("{count} ids of the answers are missing from column `{column}`, first `{first}`{}", unknown.as_ref().map(|u| format!("; unknown id `{u}`")).unwrap_or_default())]
    MissingIds {
        column: String,
        count: usize,
        first: String,
        unknown: Option<String>,
    },
    #[error("column `{column}` row {row}: empty value")]
    EmptyValue { column: String, row: usize },
    #[error("column `{column}` row {row}: `{value}` is not a number")]
    NotNumeric {
        column: String,
        row: usize,
        value: String,
    },
    #[error("column `{column}` row {row}: {value} is not finite")]
    NotFinite { column: String, row: usize, value: f64 },
    #[error("column `{column}` row {row}: probability {value} is outside [0, 1]")]
    OutOfRange { column: String, row: usize, value: f64 },
    #[error("column `{column}` row {row}: {value} is outside [{lo}, {hi}]")]
    ValueOutOfRange {
        column: String,
        row: usize,
        value: f64,
        lo: f64,
        hi: f64,
    },
    #[error("row {row}: class scores sum to {sum}, not 1")]
    RowSum { row: usize, sum: f64 },
    #[error("column `{column}` row {row}: `{value}` is not a class label")]
    NotALabel {
        column: String,
        row: usize,
        value: String,
    },
    #[error(
        "column `{column}` holds {predictions} labels where the answers hold {answers} labels \
         (row {row}: `{value}`); scikit-learn refuses a mix of label types"
    )]
    MixedLabels {
        column: String,
        answers: &'static str,
        predictions: &'static str,
        row: usize,
        value: String,
    },
    #[error("expected exactly the columns {}, got {}", expected.join(", "), got.join(", "))]
    Columns { expected: Vec<String>, got: Vec<String> },
    #[error("{0}")]
    Metric(String),
    #[error("column `{0}` appears twice")]
    DuplicateColumn(String),
    #[error("the file cannot be read: {0}")]
    Unreadable(String),
    #[error("{what} is {got}, over the grader's limit of {limit}")]
    TooLarge { what: String, got: u64, limit: u64 },
    #[error("the {metric} score is {score}, not a finite number")]
    NonFiniteScore { metric: String, score: f64 },
    #[error("the {metric} score is {score}, outside the metric's range [{lo}, {hi}]")]
    ScoreOutOfRange {
        metric: String,
        score: f64,
        lo: f64,
        hi: f64,
    },
}
