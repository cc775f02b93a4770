//! HTML: tables as `<table>` fragments and the report's `index.html`.
//!
//! The index is one self-contained page: inline CSS, no scripts, no external resources.
//! Plots are embedded as `<img src="<file>.svg">` and downloads are links, both plain
//! relative paths checked by [`index_html`], so the report folder can be moved, zipped or
//! served from anywhere.
//!
//! The layout puts what a reader scans first on top and keeps long data out of the way:
//!
//! ```text
//! <h1>title</h1>
//! <nav>  Plots   a · b · c          one wrapped line per group, not one line per entry
//!        Tables  d · e · f
//! #s1 …  every section with a plot, in input order
//! #sN …  every other section, in input order; a table of more than COLLAPSE_ROWS rows
//!        sits in a closed <details> whose <summary> says how many rows it has
//! ```
//!
//! `<details>` opens and closes without a script. Section anchors are `#s1`, `#s2`, ... in
//! page order. Both are minijinja templates (`src/report/templates/`: `index.html`,
//! `table.html`, the inline `report.css`), every value escaped ([`super::templates`]).

use std::sync::LazyLock;

use minijinja::Environment;
use serde::Serialize;

use super::cells::{columns, rows};
use super::templates::{self, safe};
use super::{ReportError, Style, Table};

/// Tables with more rows than this start collapsed: past a screenful they push the rest of
/// the page out of sight.
pub const COLLAPSE_ROWS: usize = 15;

/// The report's templates (`src/report/templates/`), see [`super::templates`].
static TEMPLATES: LazyLock<Environment<'static>> = LazyLock::new(|| {
    templates::environment(&[
        ("index.html", include_str!("templates/index.html")),
        ("table.html", include_str!("templates/table.html")),
        ("report.css", include_str!("templates/report.css")),
    ])
});

/// One part of the index page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Section {
    /// The `<h2>` text.
    pub heading: String,
    /// A paragraph under the heading; omitted when empty.
    pub description: String,
    /// Relative path of an SVG plot to embed, e.g. `heatmap.svg`.
    pub svg: Option<String>,
    /// A table fragment from [`html_table`], inserted verbatim.
    pub table_html: Option<String>,
    /// How many rows `table_html` has: past [`COLLAPSE_ROWS`] it starts collapsed.
    pub table_rows: usize,
    /// Relative paths of downloadable files (`pass_rate.md`, ...), shown by name.
    pub links: Vec<String>,
}

impl Section {
    /// A section showing `table` with links to its `.md`, `.csv` and `.tex` files and, if
    /// given, a plot of it.
    pub fn for_table(table: &Table, svg: Option<String>, style: Style) -> Result<Self, ReportError> {
        Self::for_linked_table(table, svg, style, None)
    }

    /// [`Section::for_table`], each row's cells linking to the row's runs in the viewer
    /// when `links` is given.
    pub fn for_linked_table(
        table: &Table,
        svg: Option<String>,
        style: Style,
        links: Option<&RunLinks>,
    ) -> Result<Self, ReportError> {
        Ok(Self {
            heading: table.title.clone(),
            description: table.description.clone(),
            svg,
            table_html: Some(linked_table(table, style, links)?),
            table_rows: table.batch.num_rows(),
            links: ["md", "csv", "tex"].map(|ext| table.file_name(ext)).to_vec(),
        })
    }
}

/// A cell of [`html_table`]: its text (`None` for a null), whether it is a number, and the
/// runs it links to.
#[derive(Serialize)]
struct Cell<'a> {
    text: Option<&'a str>,
    numeric: bool,
    href: Option<String>,
}

/// The columns of `runs` a table's row names its runs by, in the order of the viewer's
/// run-list filters (and of the query string a link has).
pub const RUN_FILTERS: [&str; 6] = ["model", "format", "competition", "language", "tier", "outcome"];

/// Where a table's rows link: the viewer's run list at `base` (`http://127.0.0.1:8700/`),
/// filtered by the row's values of [`RUN_FILTERS`]. A language or tier that names no runs
/// (the `Avg.` and `All` rows) is left out of the filter.
#[derive(Clone, Debug)]
pub struct RunLinks {
    pub base: String,
    /// The benchmark's language codes.
    pub languages: Vec<String>,
}

impl RunLinks {
    /// The link of a row whose filter columns have these values; `None` without any.
    pub fn of<'a>(&self, values: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<String> {
        let query: Vec<String> = values
            .into_iter()
            .filter(|(column, value)| match *column {
                "language" => self.languages.iter().any(|l| l == value),
                "tier" => ["high", "medium", "low"].contains(value),
                _ => !value.is_empty(),
            })
            .map(|(k, v)| format!("{}={}", url_encode(k), url_encode(v)))
            .collect();
        (!query.is_empty()).then(|| format!("{}?{}", self.base, query.join("&")))
    }
}

/// Percent-encodes everything but RFC 3986's unreserved characters (so `+` stays `+` when
/// decoded, and a space is `%20`).
pub fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Renders `table` as a `<table class="data">` fragment (no caption).
pub fn html_table(table: &Table, style: Style) -> Result<String, ReportError> {
    linked_table(table, style, None)
}

/// [`html_table`], each cell of a row linking to its runs when `links` is given.
fn linked_table(table: &Table, style: Style, links: Option<&RunLinks>) -> Result<String, ReportError> {
    table.check_name()?;
    let columns = columns(table, style)?;
    let filters: Vec<_> = columns
        .iter()
        .enumerate()
        .filter(|(_, c)| RUN_FILTERS.contains(&c.header.as_str()))
        .collect();
    let body: Vec<Vec<Cell<'_>>> = rows(&columns)
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            let href = links.and_then(|l| {
                l.of(filters
                    .iter()
                    .filter_map(|(_, c)| c.cells[i].as_deref().map(|v| (c.header.as_str(), v))))
            });
            row.into_iter()
                .zip(&columns)
                .map(|(text, c)| Cell {
                    text,
                    numeric: c.numeric,
                    href: href.clone(),
                })
                .collect()
        })
        .collect();
    let heads: Vec<_> = columns
        .iter()
        .map(|c| minijinja::context! { header => c.header.as_str(), numeric => c.numeric })
        .collect();
    render(
        "table.html",
        minijinja::context! { columns => heads, rows => body },
    )
}

/// Renders the report's landing page: a title, a table of contents, the sections with a
/// plot, then the others.
pub fn index_html(title: &str, sections: &[Section]) -> Result<String, ReportError> {
    index_html_with_notice(title, None, sections)
}

/// [`index_html`] with a `notice` above everything (a report whose tables are incomplete).
pub fn index_html_with_notice(
    title: &str,
    notice: Option<&str>,
    sections: &[Section],
) -> Result<String, ReportError> {
    index_html_headed(title, notice, None, sections)
}

/// What heads a report: the run it shows and where its links lead.
#[derive(Clone, Debug, Serialize)]
pub struct Heading {
    /// The run hash (`ml2b log`'s `run`, `ml2b run`'s last line): every log's head.
    pub run: String,
    /// The viewer the table cells link to.
    pub viewer: Option<String>,
}

/// [`index_html_with_notice`] headed by `heading` (the run hash, the viewer's address).
pub fn index_html_headed(
    title: &str,
    notice: Option<&str>,
    heading: Option<&Heading>,
    sections: &[Section],
) -> Result<String, ReportError> {
    for section in sections {
        check_paths(section)?;
    }
    let (plots, tables): (Vec<&Section>, Vec<&Section>) = sections.iter().partition(|s| s.svg.is_some());
    let ordered: Vec<Shown<'_>> = plots
        .iter()
        .chain(&tables)
        .enumerate()
        .map(|(i, s)| Shown::new(i + 1, s))
        .collect();
    let (shown_plots, shown_tables) = ordered.split_at(plots.len());
    let groups: Vec<_> = [("Plots", shown_plots), ("Tables", shown_tables)]
        .into_iter()
        .filter(|(_, s)| !s.is_empty())
        .map(|(name, sections)| minijinja::context! { name, sections })
        .collect();
    render(
        "index.html",
        minijinja::context! { title, notice, heading, groups, sections => ordered },
    )
}

/// A section as the index shows it: numbered in page order, its description in
/// paragraphs, its table collapsed when long.
#[derive(Serialize)]
struct Shown<'a> {
    number: usize,
    heading: &'a str,
    paragraphs: Vec<&'a str>,
    svg: Option<&'a str>,
    table: Option<minijinja::Value>,
    rows: usize,
    collapsed: bool,
    links: &'a [String],
}

impl<'a> Shown<'a> {
    fn new(number: usize, s: &'a Section) -> Self {
        Self {
            number,
            heading: &s.heading,
            paragraphs: paragraphs(&s.description),
            svg: s.svg.as_deref(),
            table: s.table_html.clone().map(safe),
            rows: s.table_rows,
            collapsed: s.table_rows > COLLAPSE_ROWS,
            links: &s.links,
        }
    }
}

/// The blank-line-separated paragraphs of `text`.
fn paragraphs(text: &str) -> Vec<&str> {
    text.split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

fn render(name: &str, context: impl Serialize) -> Result<String, ReportError> {
    Ok(templates::render(&TEMPLATES, name, context)?)
}

/// Only plain relative paths may appear in `src` and `href`: this keeps the page
/// self-contained and means they need no escaping.
fn check_paths(section: &Section) -> Result<(), ReportError> {
    let paths = section.svg.iter().chain(&section.links);
    match paths.into_iter().find(|p| !is_relative_file(p)) {
        Some(bad) => Err(ReportError::InvalidHref {
            section: section.heading.clone(),
            href: bad.clone(),
        }),
        None => Ok(()),
    }
}

fn is_relative_file(path: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    !path.is_empty()
        && path.chars().all(allowed)
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int64Array};
    use arrow::record_batch::RecordBatch;

    use super::*;
    use crate::report::test_support::sample_table;

    /// A table `<name> table` of `rows` integers, with a two-paragraph description.
    fn numbers(name: &str, rows: usize) -> Table {
        let n: ArrayRef = Arc::new(Int64Array::from_iter_values(0..rows as i64));
        Table {
            name: name.into(),
            title: format!("{name} table"),
            description: "First paragraph,\nwrapped.\n\nSecond.".into(),
            batch: RecordBatch::try_from_iter([("n", n)]).unwrap(),
        }
    }

    #[test]
    fn table_escapes_text_and_marks_numbers_and_nulls() {
        let html = html_table(&sample_table(), Style::default()).unwrap();
        assert!(html.contains("<th class=\"num\">r_p</th>"), "{html}");
        assert!(
            html.contains("<td>gpt|4 &amp; co</td><td class=\"num\">0.123</td>"),
            "{html}"
        );
        assert!(
            html.contains("<td class=\"null\">—</td><td class=\"num\">1.000</td>"),
            "{html}"
        );
        assert_eq!(html.matches("<tr>").count(), 4);
        assert_eq!(html.matches("<td").count(), 9);
    }

    #[test]
    fn index_embeds_plots_tables_and_links_without_external_resources() {
        let table = sample_table();
        let sections = [
            Section::for_table(&table, Some("plots/profile.svg".into()), Style::default()).unwrap(),
            Section {
                heading: "Heat <map>".into(),
                svg: Some("heatmap.svg".into()),
                ..Section::default()
            },
        ];
        let html = index_html("ml2b & friends", &sections).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>\n"));
        assert!(html.contains("<title>ml2b &amp; friends</title>"));
        assert!(html.contains("<img src=\"plots/profile.svg\" alt=\"Pass rate &lt;by&gt; model\">"));
        assert!(html.contains("<a href=\"#s2\">Heat &lt;map&gt;</a>"));
        assert!(html.contains("<section id=\"s2\">"));
        for file in ["pass_rate.md", "pass_rate.csv", "pass_rate.tex"] {
            assert!(html.contains(&format!("<a href=\"{file}\">{file}</a>")), "{file}");
        }
        assert!(html.contains("<table class=\"data\">"));
        for external in ["http:", "https:", "//", "<script", "<link", "url("] {
            assert!(!html.contains(external), "found {external}");
        }
        assert_eq!(html, index_html("ml2b & friends", &sections).unwrap());
    }

    #[test]
    fn plots_come_first_and_long_tables_start_collapsed() {
        let style = Style::default();
        let short = Section::for_table(&numbers("short", COLLAPSE_ROWS), None, style).unwrap();
        let long = Section::for_table(&numbers("long", COLLAPSE_ROWS + 1), None, style).unwrap();
        assert_eq!((short.table_rows, long.table_rows), (15, 16));
        let plot = Section {
            heading: "Profiles".into(),
            svg: Some("profiles.svg".into()),
            ..Section::default()
        };
        let html = index_html("r", &[short, long, plot]).unwrap();
        let at = |needle: &str| {
            html.find(needle)
                .unwrap_or_else(|| panic!("no {needle:?} in {html}"))
        };

        let toc = "<nav>\n<div><b>Plots</b><ol><li><a href=\"#s1\">Profiles</a></li></ol></div>\n\
                   <div><b>Tables</b><ol><li><a href=\"#s2\">short table</a></li>\
                   <li><a href=\"#s3\">long table</a></li></ol></div>\n</nav>\n";
        assert!(html.contains(toc), "{html}");
        assert!(at("<section id=\"s1\">\n<h2>Profiles</h2>") < at("<table"));
        assert!(at("<section id=\"s2\">\n<h2>short table</h2>") < at("<h2>long table</h2>"));

        assert_eq!(html.matches("<details").count(), 1, "{html}");
        assert!(at("<h2>long table</h2>") < at("<details>"));
        assert!(
            html[at("<details>")..].starts_with(
                "<details>\n<summary>Show the table (16 rows)</summary>\n<table class=\"data\">"
            )
        );
        assert!(html.contains("<p>First paragraph,\nwrapped.</p>\n<p>Second.</p>\n"));
    }

    #[test]
    fn a_report_without_plots_has_no_plot_group() {
        let section = Section::for_table(&sample_table(), None, Style::default()).unwrap();
        let html = index_html("r", &[section]).unwrap();
        assert!(!html.contains("<b>Plots</b>"));
        assert!(html.contains("<div><b>Tables</b><ol><li><a href=\"#s1\">"));
        assert!(!html.contains("<details"));
    }

    #[test]
    fn index_rejects_non_relative_paths() {
        for bad in [
            "https://cdn.example/x.svg",
            "/etc/passwd",
            "../up.svg",
            "a b.svg",
            "x\".svg",
            "",
        ] {
            let section = Section {
                heading: "Plots".into(),
                svg: Some(bad.into()),
                ..Section::default()
            };
            let err = index_html("r", &[section]).unwrap_err();
            assert!(
                matches!(&err, ReportError::InvalidHref { href, .. } if href == bad),
                "{err}"
            );
        }
    }

    #[test]
    fn empty_index_says_so() {
        let html = index_html("Empty", &[]).unwrap();
        assert!(html.contains("This report has no sections."));
    }
}
