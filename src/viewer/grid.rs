//! A query's result as text cells, formatted as the report formats its tables (fixed
//! decimals for floats, Arrow's display for the rest, nulls kept apart).

use std::fmt::Write as _;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;

use super::ViewError;
use super::html::escape;
use crate::report::cells::{Column, columns};
use crate::report::{Style, Table};

/// A result's columns, each with its cells as text.
pub(crate) struct Grid {
    columns: Vec<Column>,
}

impl Grid {
    /// The rows of `batches` (of `schema`), floats with `decimals` digits.
    pub(crate) fn new(
        schema: &SchemaRef,
        batches: &[RecordBatch],
        decimals: usize,
    ) -> Result<Self, ViewError> {
        let batch = arrow::compute::concat_batches(schema, batches)?;
        Self::of(&batch, decimals)
    }

    /// The rows of one batch.
    pub(crate) fn of(batch: &RecordBatch, decimals: usize) -> Result<Self, ViewError> {
        let table = Table {
            name: "view".into(),
            title: String::new(),
            description: String::new(),
            batch: batch.clone(),
        };
        Ok(Self {
            columns: columns(&table, Style { decimals })?,
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.columns.first().map_or(0, |c| c.cells.len())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn headers(&self) -> impl Iterator<Item = (&str, bool)> {
        self.columns.iter().map(|c| (c.header.as_str(), c.numeric))
    }

    /// The cell of `row` in the column `name`; `None` for a null or no such column.
    pub(crate) fn get(&self, row: usize, name: &str) -> Option<&str> {
        let column = self.columns.iter().find(|c| c.header == name)?;
        column.cells[row].as_deref()
    }

    /// Row `row`'s cells, in column order, with whether each is numeric.
    pub(crate) fn row(&self, row: usize) -> impl Iterator<Item = (&str, Option<&str>, bool)> {
        self.columns
            .iter()
            .map(move |c| (c.header.as_str(), c.cells[row].as_deref(), c.numeric))
    }
}

/// A `<td>` of a cell: class `c-<column>` (and `num`), the text escaped or a grey dash,
/// wrapped in a link when `href` (already escaped) is given.
pub(crate) fn cell(column: &str, text: Option<&str>, numeric: bool, href: Option<&str>) -> String {
    let mut class = format!("c-{}", escape(column));
    if numeric {
        class.push_str(" num");
    }
    let inner = match text {
        None => "<span class=\"null\">—</span>".to_string(),
        Some(t) => escape(t),
    };
    let mut out = format!("<td class=\"{class}\">");
    match href {
        Some(h) => {
            let _ = write!(out, "<a href=\"{h}\">{inner}</a>");
        }
        None => out.push_str(&inner),
    }
    out + "</td>"
}

/// A `<th>`, numeric ones right-aligned; `inner` is HTML already.
pub(crate) fn header(inner: &str, numeric: bool) -> String {
    if numeric {
        format!("<th class=\"num\">{inner}</th>")
    } else {
        format!("<th>{inner}</th>")
    }
}
