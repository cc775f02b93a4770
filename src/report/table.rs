//! A result table as every renderer takes it ([`Table`]: name, title, description, the
//! Arrow batch) and the presentation choices they share ([`Style`]). A leaf of `report/`.

use arrow::record_batch::RecordBatch;

use super::ReportError;

/// One result table, ready to be written in every table format.
#[derive(Debug, Clone)]
pub struct Table {
    /// File stem shared by the table's files, e.g. `pass_rate`.
    pub name: String,
    /// Human title: the Markdown heading and the LaTeX caption.
    pub title: String,
    /// One paragraph saying what the numbers are; may be empty.
    pub description: String,
    /// The data; column names become the header row.
    pub batch: RecordBatch,
}

/// Presentation choices shared by the human-readable table formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Digits after the decimal point for floating-point columns.
    pub decimals: usize,
}

impl Default for Style {
    fn default() -> Self {
        Self { decimals: 3 }
    }
}

impl Table {
    /// Checks that [`Table::name`] can serve as a file stem and a LaTeX label.
    pub fn check_name(&self) -> Result<(), ReportError> {
        let valid = !self.name.is_empty()
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if valid {
            Ok(())
        } else {
            Err(ReportError::InvalidName {
                name: self.name.clone(),
            })
        }
    }

    /// The file name of this table in the format with extension `ext` (`md`, `csv`, `tex`).
    pub fn file_name(&self, ext: &str) -> String {
        format!("{}.{ext}", self.name)
    }
}
