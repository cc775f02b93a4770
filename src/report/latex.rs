//! LaTeX `table` float with a booktabs `tabular` (needs `\usepackage{booktabs}`).
//!
//! ```text
//! \begin{table}[htbp]
//! \centering
//! \caption[<title>]{<title>. <description>}
//! \label{tab:<name>}
//! \begin{tabular}{lr...}          l = text column, r = numeric column
//! \toprule  <header> \\ \midrule  <rows> \\  \bottomrule
//! \end{tabular}
//! \end{table}
//! ```
//!
//! All text (title, description, headers, cells) is escaped, so any string is safe.
//! Nulls print as `--` (an en dash).

use super::cells::{columns, rows};
use super::{ReportError, Style, Table};

const NULL: &str = "--";

/// Renders `table` as a booktabs LaTeX table.
pub fn latex(table: &Table, style: Style) -> Result<String, ReportError> {
    table.check_name()?;
    let columns = columns(table, style)?;
    let spec: String = columns
        .iter()
        .map(|c| if c.numeric { 'r' } else { 'l' })
        .collect();
    let header: Vec<String> = columns.iter().map(|c| escape(&c.header)).collect();

    let mut out = String::from("\\begin{table}[htbp]\n\\centering\n");
    out += &caption(table);
    out += &format!("\\label{{tab:{}}}\n", table.name);
    out += &format!("\\begin{{tabular}}{{{spec}}}\n\\toprule\n");
    out += &format!("{} \\\\\n\\midrule\n", header.join(" & "));
    for row in rows(&columns) {
        let cells: Vec<String> = row.into_iter().map(|c| c.map_or(NULL.into(), escape)).collect();
        out += &format!("{} \\\\\n", cells.join(" & "));
    }
    out += "\\bottomrule\n\\end{tabular}\n\\end{table}\n";
    Ok(out)
}

/// The short caption (list of tables) is the title; the long one adds the description.
fn caption(table: &Table) -> String {
    let title = escape(table.title.trim());
    let description = table.description.trim();
    if description.is_empty() {
        return format!("\\caption{{{title}}}\n");
    }
    let stop = if title.ends_with(['.', '?', '!']) { "" } else { "." };
    format!("\\caption[{title}]{{{title}{stop} {}}}\n", escape(description))
}

/// Escapes the characters that TeX treats specially in text mode.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out += "\\textasciitilde{}",
            '^' => out += "\\textasciicircum{}",
            '\\' => out += "\\textbackslash{}",
            '<' => out += "\\textless{}",
            '>' => out += "\\textgreater{}",
            '|' => out += "\\textbar{}",
            '\r' | '\n' => out.push(' '),
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
    fn renders_booktabs_table() {
        let tex = latex(&sample_table(), Style::default()).unwrap();
        let expected = "\
\\begin{table}[htbp]
\\centering
\\caption[Pass rate \\textless{}by\\textgreater{} model]{Pass rate \\textless{}by\\textgreater{} model. Share of tasks solved \\& graded; 100\\% means all.}
\\label{tab:pass_rate}
\\begin{tabular}{lrr}
\\toprule
model & r\\_p & n\\_tasks \\\\
\\midrule
gpt\\textbar{}4 \\& co & 0.123 & 12 \\\\
50\\% \\$x\\_1\\$ \\#\\{a\\}\\textasciitilde{}\\textasciicircum{}\\textbackslash{} & -- & 3 \\\\
-- & 1.000 & -7 \\\\
\\bottomrule
\\end{tabular}
\\end{table}
";
        assert_eq!(tex, expected);
    }

    #[test]
    fn escape_leaves_no_bare_special_character() {
        let escaped = escape("&%$#_{}~^\\");
        // Remove every escape sequence we emit; nothing special may remain.
        let rest = ["\\textasciitilde{}", "\\textasciicircum{}", "\\textbackslash{}"]
            .iter()
            .fold(escaped, |s, seq| s.replace(seq, ""));
        let rest = ["\\&", "\\%", "\\$", "\\#", "\\_", "\\{", "\\}"]
            .iter()
            .fold(rest, |s, seq| s.replace(seq, ""));
        assert_eq!(rest, "");
    }

    #[test]
    fn caption_without_description_is_the_title() {
        let mut table = sample_table();
        table.description.clear();
        table.title = "Scores".into();
        let tex = latex(&table, Style::default()).unwrap();
        assert!(tex.contains("\\caption{Scores}\n"), "{tex}");
    }
}
