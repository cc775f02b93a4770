//! A query's result as text cells, formatted as the report formats its tables (fixed
//! decimals for floats, Arrow's display for the rest, nulls kept apart), and the HTML table
//! of such cells (`templates/grid.html`).

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use minijinja::Value;
use serde::Serialize;

use super::ViewError;
use super::templates::{render, safe};
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

/// An HTML table of cells (`templates/grid.html`): every cell's `<td>` has class
/// `c-<column>` (and `num`), its text escaped or a grey dash for a null.
#[derive(Serialize)]
pub(crate) struct HtmlGrid<'a> {
    /// The `<table>`'s classes.
    pub class: &'static str,
    /// Every `<tr>`'s class in the body, if any.
    pub row_class: Option<&'static str>,
    pub headers: Vec<Head<'a>>,
    pub rows: Vec<Vec<Td<'a>>>,
    /// The one row shown when there are none: its colspan and text.
    pub empty: Option<Empty>,
}

impl HtmlGrid<'_> {
    pub(crate) fn render(&self) -> Result<String, ViewError> {
        Ok(render("grid.html", self)?)
    }
}

/// The row of a table with no rows.
#[derive(Serialize)]
pub(crate) struct Empty {
    pub colspan: usize,
    pub text: &'static str,
}

/// A `<th>`, numeric ones right-aligned; with a link when `href` (already escaped) is
/// given, the name followed by `arrow`.
#[derive(Serialize)]
pub(crate) struct Head<'a> {
    name: &'a str,
    numeric: bool,
    href: Option<Value>,
    arrow: &'static str,
}

impl<'a> Head<'a> {
    pub(crate) fn new(name: &'a str, numeric: bool) -> Self {
        Self {
            name,
            numeric,
            href: None,
            arrow: "",
        }
    }

    /// This header as a link to `href` (already escaped), `arrow` after the name.
    pub(crate) fn link(self, href: String, arrow: &'static str) -> Self {
        Self {
            href: Some(safe(href)),
            arrow,
            ..self
        }
    }
}

/// A `<td>` of a cell, wrapped in a link when `href` (already escaped) is given.
#[derive(Serialize)]
pub(crate) struct Td<'a> {
    column: &'a str,
    text: Option<&'a str>,
    numeric: bool,
    href: Option<Value>,
}

impl<'a> Td<'a> {
    pub(crate) fn new(column: &'a str, text: Option<&'a str>, numeric: bool, href: Option<&str>) -> Self {
        Self {
            column,
            text,
            numeric,
            href: href.map(|h| safe(h.to_string())),
        }
    }
}
