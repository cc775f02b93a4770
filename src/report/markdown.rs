//! GitHub-flavoured Markdown: a `#` heading, the description, then a pipe table.
//!
//! Columns are padded to a common width (counted in `char`s) so the raw file reads as a
//! table too; numeric columns are right-aligned (`---:`). Nulls print as `—`. Pipes are
//! escaped and line breaks become spaces, so a cell can never break the table. The
//! description is Markdown prose and is written as given.

use super::cells::{Column, columns, rows};
use super::{ReportError, Style, Table};

const NULL: &str = "—";

/// Renders `table` as a Markdown document.
pub fn markdown(table: &Table, style: Style) -> Result<String, ReportError> {
    table.check_name()?;
    let columns = columns(table, style)?;
    let header: Vec<String> = columns.iter().map(|c| escape(&c.header)).collect();
    let body: Vec<Vec<String>> = rows(&columns)
        .into_iter()
        .map(|row| row.into_iter().map(|c| c.map_or(NULL.into(), escape)).collect())
        .collect();
    let widths = widths(&header, &body);

    let mut out = format!("# {}\n\n", escape(&table.title));
    if !table.description.is_empty() {
        out += &format!("{}\n\n", table.description.trim());
    }
    out += &line(&header, &widths, &columns);
    out += &rule(&widths, &columns);
    for row in &body {
        out += &line(row, &widths, &columns);
    }
    Ok(out)
}

fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// Widest cell per column, at least 3 so the rule `---` fits.
fn widths(header: &[String], body: &[Vec<String>]) -> Vec<usize> {
    let width = |s: &String| s.chars().count();
    (0..header.len())
        .map(|col| {
            body.iter()
                .map(|row| width(&row[col]))
                .chain([width(&header[col]), 3])
                .max()
                .unwrap_or(3)
        })
        .collect()
}

fn line(cells: &[String], widths: &[usize], columns: &[Column]) -> String {
    let padded: Vec<String> = cells
        .iter()
        .zip(widths.iter().zip(columns))
        .map(|(cell, (&w, col))| {
            if col.numeric {
                format!("{cell:>w$}")
            } else {
                format!("{cell:<w$}")
            }
        })
        .collect();
    format!("| {} |\n", padded.join(" | "))
}

fn rule(widths: &[usize], columns: &[Column]) -> String {
    let dashes: Vec<String> = widths
        .iter()
        .zip(columns)
        .map(|(&w, col)| {
            if col.numeric {
                format!("{}:", "-".repeat(w - 1))
            } else {
                "-".repeat(w)
            }
        })
        .collect();
    format!("| {} |\n", dashes.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::sample_table;

    #[test]
    fn renders_heading_description_and_aligned_table() {
        let md = markdown(&sample_table(), Style::default()).unwrap();
        let expected = "\
# Pass rate <by> model

Share of tasks solved & graded; 100% means all.

| model             |   r_p | n_tasks |
| ----------------- | ----: | ------: |
| gpt\\|4 & co       | 0.123 |      12 |
| 50% $x_1$ #{a}~^\\ |     — |       3 |
| —                 | 1.000 |      -7 |
";
        assert_eq!(md, expected);
    }

    #[test]
    fn decimals_follow_style() {
        let md = markdown(&sample_table(), Style { decimals: 5 }).unwrap();
        assert!(md.contains("| 0.12346 |"), "{md}");
    }

    #[test]
    fn every_row_has_the_same_number_of_unescaped_pipes() {
        let md = markdown(&sample_table(), Style::default()).unwrap();
        let pipes = |l: &str| l.replace("\\|", "").matches('|').count();
        let table_lines: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(table_lines.len(), 5);
        assert!(table_lines.iter().all(|l| pipes(l) == 4), "{md}");
    }

    #[test]
    fn empty_table_keeps_its_header() {
        let mut table = sample_table();
        table.batch = table.batch.slice(0, 0);
        let md = markdown(&table, Style::default()).unwrap();
        assert!(
            md.ends_with("| model | r_p | n_tasks |\n| ----- | --: | ------: |\n"),
            "{md}"
        );
    }

    #[test]
    fn rejects_names_that_are_not_file_stems() {
        let mut table = sample_table();
        table.name = "../pass rate".into();
        let err = markdown(&table, Style::default()).unwrap_err();
        assert!(matches!(err, ReportError::InvalidName { .. }), "{err}");
        assert!(err.to_string().contains("../pass rate"));
    }
}
