//! The one error type of the report renderers.
//!
//! Every variant names the offending input (table, column, plot, row or label) so that a
//! caller can report it without adding context of its own.

use arrow::error::ArrowError;

/// Why a report artefact could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A table name that cannot serve as a file stem and LaTeX label.
    #[error("table name {name:?} is not a file stem: expected one or more of A-Z a-z 0-9 _ -")]
    InvalidName { name: String },

    /// Arrow cannot display a column's type.
    #[error("table {table:?}: cannot format column {column:?}")]
    Format {
        table: String,
        column: String,
        #[source]
        source: ArrowError,
    },

    /// A table lacks a column that a plot or a layout reads, or has it with another type.
    #[error("table {table:?}: no {expected} column {column:?}")]
    Column {
        table: String,
        column: String,
        expected: &'static str,
    },

    /// A layout's columns do not make a table (a bug of the layout).
    #[error("table {table:?}: cannot lay out its columns")]
    Layout {
        table: String,
        #[source]
        source: ArrowError,
    },

    /// Arrow's CSV writer rejected the batch.
    #[error("table {table:?}: cannot write CSV")]
    Csv {
        table: String,
        #[source]
        source: ArrowError,
    },

    /// A plot's data does not match its labels.
    #[error("{plot}: {what} has {got} entries, expected {expected}")]
    Shape {
        plot: &'static str,
        what: String,
        expected: usize,
        got: usize,
    },

    /// A plot series with no values where at least one is needed.
    #[error("{plot}: {what} has no values")]
    Empty { plot: &'static str, what: String },

    /// A plot value is NaN or infinite.
    #[error("{plot}: value at {location} is {value}, expected a finite number")]
    NonFinite {
        plot: &'static str,
        location: String,
        value: f64,
    },

    /// A plot's axis or colour range is empty, reversed or not finite.
    #[error("{plot}: {what} is ({lo}, {hi}), expected finite bounds with lo < hi")]
    InvalidRange {
        plot: &'static str,
        what: &'static str,
        lo: f64,
        hi: f64,
    },

    /// The plotting library failed while drawing.
    #[error("{plot}: drawing failed")]
    Draw {
        plot: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// A link or image in the HTML index that is not a plain relative file path.
    #[error("section {section:?}: {href:?} is not a relative file path (A-Z a-z 0-9 _ - . /, no `..`)")]
    InvalidHref { section: String, href: String },

    /// A page's template failed to render (a bug of its template or its context).
    #[error("cannot render the HTML page")]
    Template(#[from] minijinja::Error),
}
