//! Rendering of benchmark results into publishable artefacts.
//!
//! Every renderer is a pure function: it takes data the caller has already computed
//! (an Arrow [`RecordBatch`] or plain vectors) and returns the file contents as a
//! `String`. Nothing here reads the event log, touches the file system or asks the clock.
//!
//! Invariants:
//! - **Deterministic.** The same input gives byte-identical output: no timestamps, no
//!   hash-map iteration, fixed float formatting (`{:.N}`, `-0.000` printed as `0.000`)
//!   and integer pixel coordinates in SVGs.
//! - **Self-contained.** SVGs carry their own styles; the HTML index loads nothing from
//!   the network and refers only to plain relative file names.
//! - **Table names are file stems** (`[A-Za-z0-9_-]+`). One table becomes
//!   `<name>.md`, `<name>.csv` and `<name>.tex` (LaTeX label `tab:<name>`).
//!
//! Formats, per column type:
//!
//! ```text
//!              float            null   text            needs
//!   markdown   {:.decimals}     —      `|` escaped      GitHub pipe table
//!   latex      {:.decimals}     --     TeX-escaped      \usepackage{booktabs}
//!   html       {:.decimals}     —      HTML-escaped     the index's inline CSS
//!   csv        full precision   empty  RFC 4180 quoted  -
//! ```
//!
//! Numeric columns are right-aligned, all others left-aligned.

mod bars;
pub(crate) mod cells;
mod completeness;
mod delimited;
mod error;
mod heatmap;
mod html;
mod latex;
mod markdown;
mod plots;
mod profile;
mod svg;
pub(crate) mod templates;

use arrow::record_batch::RecordBatch;

pub use bars::bars_svg;
pub use completeness::{Completeness, FaultGroup, Incomplete};
pub use delimited::csv;
pub use error::ReportError;
pub use heatmap::heatmap_svg;
pub use html::{COLLAPSE_ROWS, Section, html_table, index_html, index_html_with_notice};
pub use latex::latex;
pub use markdown::markdown;
pub use plots::{Plot, float_column, heatmaps, plots_of, profiles, series_names, text_column, tier_bars};
pub use profile::{attainment_steps, profile_svg};
pub(crate) use templates::escape as html_escape;

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

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod tests {
    use super::test_support::sample_table;
    use super::*;

    /// Every renderer, run on the same inputs, as one string.
    fn render_all() -> String {
        let table = sample_table();
        let style = Style::default();
        let labels = |n: usize| (0..n).map(|i| format!("l{i}")).collect::<Vec<_>>();
        let values = vec![vec![Some(0.1), None], vec![Some(0.7), Some(1.0 / 3.0)]];
        let curves = [("m".to_string(), vec![0.2, 1.0 / 3.0, 0.9])];
        let series = [("m".to_string(), vec![Some(0.5), None])];
        let section = Section::for_table(&table, Some("h.svg".into()), style).unwrap();
        [
            markdown(&table, style).unwrap(),
            csv(&table).unwrap(),
            latex(&table, style).unwrap(),
            html_table(&table, style).unwrap(),
            heatmap_svg("h", &labels(2), &labels(2), &values, (0.0, 1.0)).unwrap(),
            profile_svg("p", &curves, 1.0).unwrap(),
            bars_svg("b", &labels(2), &series, "y").unwrap(),
            index_html("i", &[section]).unwrap(),
        ]
        .concat()
    }

    #[test]
    fn every_renderer_is_deterministic() {
        assert_eq!(render_all(), render_all());
    }

    #[test]
    fn file_names_use_the_table_name() {
        let table = sample_table();
        assert_eq!(table.file_name("tex"), "pass_rate.tex");
        assert!(table.check_name().is_ok());
    }
}
