//! What ml2b writes to a terminal: one line on stderr ([`message`]), text made safe to
//! show there ([`visible`]), text tables ([`table`]), and the diagnostics' subscriber
//! ([`init_tracing`]).
//!
//! A leaf: everything that prints goes through here, and it imports nothing of the crate.
//!
//! Invariant: what ml2b writes holds no control character but newline and tab. A model's
//! answer, a run's output, a server's error and everything else shown comes from outside
//! ml2b, and a terminal obeys the escape sequences in them (clear the screen, set the
//! window title, move the cursor back over a line to print a score of its own), so every
//! message goes through [`visible`].

use std::borrow::Cow;
use std::fmt::Write as _;

/// One line on stderr; a closed stderr loses the message, never the command.
pub fn message(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{}", visible(&line.to_string()));
}

/// `text` safe to print to a terminal: every control character but newline and tab (and
/// the carriage return of a CRLF) is shown instead of sent, C0 controls and DEL as their
/// Unicode control pictures (`\x1b` as `␛`, a lone `\r` as `␍`), C1 controls and the
/// bidirectional overrides (which reorder what a line shows) as `\u{…}`.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => out.push(c),
            '\0'..='\x1f' if c != '\n' && c != '\t' => {
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('?'));
            }
            '\x7f' => out.push('\u{2421}'),
            c if hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A character [`visible`] shows instead of sending.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A column of a [`table`]: its alignment, the width its cells are padded to at least,
/// and the spaces that follow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    width: u16,
    right: bool,
    gap: u16,
}

impl Column {
    /// Left-aligned, at least `width` wide (a format string's `{:<width}`), then one space.
    pub const fn left(width: u16) -> Self {
        Self {
            width,
            right: false,
            gap: 1,
        }
    }

    /// Right-aligned, at least `width` wide (`{:>width}`), then one space.
    pub const fn right(width: u16) -> Self {
        Self {
            width,
            right: true,
            gap: 1,
        }
    }

    /// Followed by `gap` spaces instead of one.
    pub const fn gap(self, gap: u16) -> Self {
        Self { gap, ..self }
    }
}

/// `rows` as a text table (comfy-table, no borders), one line each, each line ending in a
/// newline: cell `i` of a row padded as `columns[i]` says, then its gap. A cell past the
/// columns (at most one) is the free last column, written as it is, never padded, so a line
/// ends in a space only where a padded column ends it.
///
/// A column is as wide as its widest cell where that is wider than its width: every row
/// stays aligned (a format string would push the rest of that one row right). Widths are
/// display widths (Unicode), a cell holds one line, and a column is one character wide at
/// least (comfy-table's rule: an empty column still takes a space).
pub fn table(columns: &[Column], rows: &[Vec<String>]) -> String {
    use comfy_table::{CellAlignment, ColumnConstraint, Width};
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    for row in rows {
        t.add_row(row.iter().take(columns.len()));
    }
    for (column, spec) in t.column_iter_mut().zip(columns) {
        column.set_padding((0, spec.gap));
        column.set_cell_alignment(if spec.right {
            CellAlignment::Right
        } else {
            CellAlignment::Left
        });
        column.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(
            spec.width + spec.gap,
        )));
    }
    let mut out = String::new();
    for (line, row) in t.lines().zip(rows) {
        out.push_str(&line);
        out.extend(row.iter().skip(columns.len()).map(String::as_str));
        out.push('\n');
    }
    out
}

/// `rows` as a grid (comfy-table): every column as wide as its widest cell, cells
/// separated by ` | `, each line trimmed at its end and ending in a newline. Widths are
/// display widths (Unicode), and a cell holds one line.
pub fn grid(rows: &[Vec<String>]) -> String {
    use comfy_table::TableComponent;
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_style(TableComponent::VerticalLines, '|');
    for row in rows {
        t.add_row(row);
    }
    let last = t.column_count().saturating_sub(1);
    for (i, column) in t.column_iter_mut().enumerate() {
        column.set_padding((u16::from(i > 0), u16::from(i < last)));
    }
    let mut out = String::new();
    for line in t.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Diagnostics on stderr: `RUST_LOG` wins, else `-v` picks the level.
pub fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colours only on a terminal: a log file or a Slurm log gets plain text.
    let colour =
        std::io::IsTerminal::is_terminal(&std::io::stderr()) && std::env::var_os("NO_COLOR").is_none();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn a_table_pads_as_a_format_string_does() {
        let columns = [Column::left(6).gap(2), Column::right(4)];
        let rows = [row(&["name", "n", "  rest"]), row(&["ab", "12", ""])];
        let mut expected = String::new();
        for r in &rows {
            expected += &format!("{:<6}  {:>4} {}\n", r[0], r[1], r[2]);
        }
        assert_eq!(table(&columns, &rows), expected);
    }

    #[test]
    fn a_grid_separates_cells_with_bars() {
        let rows = [row(&["model", "r"]), row(&["a", "0.25"]), row(&["bb", ""])];
        assert_eq!(grid(&rows), "model | r\na     | 0.25\nbb    |\n");
    }

    #[test]
    fn a_wide_cell_widens_its_column() {
        let columns = [Column::left(2), Column::left(1).gap(0)];
        let rows = [row(&["abcd", "x"]), row(&["a", "y"])];
        assert_eq!(table(&columns, &rows), "abcd x\na    y\n");
    }
}
