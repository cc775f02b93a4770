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
mod files;
mod heatmap;
mod html;
mod latex;
mod markdown;
mod plots;
mod profile;
mod svg;
mod table;
pub(crate) mod templates;

pub use bars::bars_svg;
pub use completeness::{Completeness, FaultGroup, Incomplete};
pub use delimited::csv;
pub use error::ReportError;
pub use files::{Files, files};
pub use heatmap::heatmap_svg;
pub use html::{
    COLLAPSE_ROWS, Heading, RUN_FILTERS, RunLinks, Section, html_table, index_html, index_html_headed,
    index_html_with_notice, url_encode,
};
pub use latex::latex;
pub use markdown::markdown;
pub use plots::{Plot, float_column, heatmaps, plots_of, profiles, series_names, text_column, tier_bars};
pub use profile::{attainment_steps, profile_svg};
pub use table::{Style, Table};
pub(crate) use templates::escape as html_escape;

#[cfg(test)]
pub(crate) mod test_support;

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
