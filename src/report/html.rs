//! HTML: tables as `<table>` fragments and the report's `index.html`.
//!
//! The index is one self-contained page: inline CSS, no scripts, no external resources.
//! Plots are embedded as `<img src="<file>.svg">` and downloads are links, both plain
//! relative paths checked by [`index_html`], so the report folder can be moved, zipped or
//! served from anywhere. Section anchors are `#s1`, `#s2`, ... in input order.

use std::fmt::Write as _;

use super::cells::{columns, rows};
use super::{ReportError, Style, Table};

const NULL: &str = "—";

const CSS: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1f2328;background:#fff}
main{max-width:1200px;margin:0 auto;padding:24px}
h1{font-size:28px;margin:0 0 16px}
h2{font-size:21px;margin:32px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
nav ol{columns:2;margin:0 0 16px}
figure{margin:12px 0}
img{max-width:100%;height:auto;border:1px solid #d0d7de}
table.data{border-collapse:collapse;margin:12px 0;font-size:14px}
table.data th,table.data td{border:1px solid #d0d7de;padding:4px 10px}
table.data thead th{background:#f6f8fa}
table.data tbody tr:nth-child(even){background:#fafbfc}
.num{text-align:right;font-variant-numeric:tabular-nums}
.null{color:#8c959f}
.files a{margin-right:12px}
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

/// Renders the report's landing page: a title, a table of contents and the sections.
pub fn index_html(title: &str, sections: &[Section]) -> Result<String, ReportError> {
    for section in sections {
        check_paths(section)?;
    }
    let title = escape(title);
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n<main>\n<h1>{title}</h1>\n"
    );
    out += &contents(sections);
    for (i, section) in sections.iter().enumerate() {
        out += &render_section(i + 1, section);
    }
    out += "</main>\n</body>\n</html>\n";
    Ok(out)
}

fn contents(sections: &[Section]) -> String {
    if sections.is_empty() {
        return "<p>This report has no sections.</p>\n".into();
    }
    let mut out = String::from("<nav><ol>\n");
    for (i, s) in sections.iter().enumerate() {
        let _ = writeln!(out, "<li><a href=\"#s{}\">{}</a></li>", i + 1, escape(&s.heading));
    }
    out + "</ol></nav>\n"
}

fn render_section(number: usize, section: &Section) -> String {
    let heading = escape(&section.heading);
    let mut out = format!("<section id=\"s{number}\">\n<h2>{heading}</h2>\n");
    if !section.description.is_empty() {
        let _ = writeln!(out, "<p>{}</p>", escape(&section.description));
    }
    if let Some(svg) = &section.svg {
        let _ = writeln!(out, "<figure><img src=\"{svg}\" alt=\"{heading}\"></figure>");
    }
    if let Some(table) = &section.table_html {
        out += table;
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
fn escape(text: &str) -> String {
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
    use super::*;
    use crate::report::test_support::sample_table;

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
