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
//! page order.

use std::fmt::Write as _;

use super::cells::{columns, rows};
use super::{ReportError, Style, Table};

const NULL: &str = "—";

/// Tables with more rows than this start collapsed: past a screenful they push the rest of
/// the page out of sight.
pub const COLLAPSE_ROWS: usize = 15;

const CSS: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1f2328;background:#fff}
main{max-width:1200px;margin:0 auto;padding:24px}
h1{font-size:28px;margin:0 0 16px}
h2{font-size:21px;margin:32px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
nav{font-size:14px;line-height:1.6;margin:0 0 16px}
nav div{display:flex;gap:12px}
nav b{flex:none;width:4em}
nav ol{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:0 16px}
summary{cursor:pointer;color:#0969da;margin:8px 0}
figure{margin:12px 0}
img{max-width:100%;height:auto;border:1px solid #d0d7de}
table.data{border-collapse:collapse;margin:12px 0;font-size:14px}
table.data th,table.data td{border:1px solid #d0d7de;padding:4px 10px}
table.data thead th{background:#f6f8fa}
table.data tbody tr:nth-child(even){background:#fafbfc}
.num{text-align:right;font-variant-numeric:tabular-nums}
.null{color:#8c959f}
.files a{margin-right:12px}
.notice{background:#fff8c5;border:1px solid #d4a72c;padding:8px 12px;font-weight:600}
";

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
        Ok(Self {
            heading: table.title.clone(),
            description: table.description.clone(),
            svg,
            table_html: Some(html_table(table, style)?),
            table_rows: table.batch.num_rows(),
            links: ["md", "csv", "tex"].map(|ext| table.file_name(ext)).to_vec(),
        })
    }
}

/// Renders `table` as a `<table class="data">` fragment (no caption).
pub fn html_table(table: &Table, style: Style) -> Result<String, ReportError> {
    table.check_name()?;
    let columns = columns(table, style)?;
    let class = |numeric: bool| if numeric { " class=\"num\"" } else { "" };
    let mut out = String::from("<table class=\"data\">\n<thead><tr>");
    for c in &columns {
        let _ = write!(out, "<th{}>{}</th>", class(c.numeric), escape(&c.header));
    }
    out += "</tr></thead>\n<tbody>\n";
    for row in rows(&columns) {
        out += "<tr>";
        for (cell, col) in row.into_iter().zip(&columns) {
            out += &match cell {
                Some(text) => format!("<td{}>{}</td>", class(col.numeric), escape(text)),
                None => format!("<td class=\"null\">{NULL}</td>"),
            };
        }
        out += "</tr>\n";
    }
    out += "</tbody>\n</table>\n";
    Ok(out)
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
    for section in sections {
        check_paths(section)?;
    }
    let (plots, tables): (Vec<&Section>, Vec<&Section>) = sections.iter().partition(|s| s.svg.is_some());
    let title = escape(title);
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n<main>\n<h1>{title}</h1>\n"
    );
    if let Some(notice) = notice {
        out += &format!("<p class=\"notice\" role=\"alert\">{}</p>\n", escape(notice));
    }
    out += &contents(&plots, &tables);
    for (i, section) in plots.iter().chain(&tables).enumerate() {
        out += &render_section(i + 1, section);
    }
    out += "</main>\n</body>\n</html>\n";
    Ok(out)
}

/// The table of contents: one wrapped list per group, numbered on from the one before.
fn contents(plots: &[&Section], tables: &[&Section]) -> String {
    if plots.is_empty() && tables.is_empty() {
        return "<p>This report has no sections.</p>\n".into();
    }
    let mut out = String::from("<nav>\n");
    let mut first = 1;
    for (group, sections) in [("Plots", plots), ("Tables", tables)] {
        if sections.is_empty() {
            continue;
        }
        let _ = write!(out, "<div><b>{group}</b><ol>");
        for (i, s) in sections.iter().enumerate() {
            let _ = write!(
                out,
                "<li><a href=\"#s{}\">{}</a></li>",
                first + i,
                escape(&s.heading)
            );
        }
        out += "</ol></div>\n";
        first += sections.len();
    }
    out + "</nav>\n"
}

fn render_section(number: usize, section: &Section) -> String {
    let heading = escape(&section.heading);
    let mut out = format!("<section id=\"s{number}\">\n<h2>{heading}</h2>\n");
    out += &paragraphs(&section.description);
    if let Some(svg) = &section.svg {
        let _ = writeln!(out, "<figure><img src=\"{svg}\" alt=\"{heading}\"></figure>");
    }
    if let Some(table) = &section.table_html {
        out += &collapsible(table, section.table_rows);
    }
    if !section.links.is_empty() {
        let links: Vec<String> = section
            .links
            .iter()
            .map(|href| format!("<a href=\"{href}\">{href}</a>"))
            .collect();
        let _ = writeln!(out, "<p class=\"files\">Download: {}</p>", links.join(" "));
    }
    out + "</section>\n"
}

/// One `<p>` per blank-line-separated paragraph of `text`.
fn paragraphs(text: &str) -> String {
    text.split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| format!("<p>{}</p>\n", escape(p)))
        .collect()
}

/// `table` as is, or closed under a summary when it has more than [`COLLAPSE_ROWS`] rows.
fn collapsible(table: &str, rows: usize) -> String {
    if rows <= COLLAPSE_ROWS {
        return table.to_string();
    }
    format!("<details>\n<summary>Show the table ({rows} rows)</summary>\n{table}</details>\n")
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

/// Escapes text for HTML element content and double-quoted attributes.
/// `text` safe in element content and in a quoted attribute value.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            '"' => out += "&quot;",
            '\'' => out += "&#39;",
            _ => out.push(c),
        }
    }
    out
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
