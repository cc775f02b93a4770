//! A table turned into display strings, shared by the Markdown, LaTeX and HTML renderers.
//!
//! Floating-point columns are printed with a fixed number of decimals; every other type
//! goes through Arrow's display formatter. Nulls (including those of `Null` and dictionary
//! columns, via `logical_nulls`) stay distinct so that each format can choose its marker.
//! The strings are not escaped: escaping belongs to each output format.

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type};
use arrow::util::display::{ArrayFormatter, FormatOptions};

use super::{ReportError, Style, Table};

/// One column, header plus cell strings (`None` for null).
pub(crate) struct Column {
    pub header: String,
    pub numeric: bool,
    pub cells: Vec<Option<String>>,
}

/// All columns of a table, formatted.
pub(crate) fn columns(table: &Table, style: Style) -> Result<Vec<Column>, ReportError> {
    let schema = table.batch.schema();
    schema
        .fields()
        .iter()
        .zip(table.batch.columns())
        .map(|(field, array)| {
            let cells = format_column(array, style).map_err(|source| ReportError::Format {
                table: table.name.clone(),
                column: field.name().clone(),
                source,
            })?;
            Ok(Column {
                header: field.name().clone(),
                numeric: field.data_type().is_numeric(),
                cells,
            })
        })
        .collect()
}

/// Rows of a column-major table, for renderers that write line by line.
pub(crate) fn rows(columns: &[Column]) -> Vec<Vec<Option<&str>>> {
    let height = columns.first().map_or(0, |c| c.cells.len());
    (0..height)
        .map(|row| columns.iter().map(|c| c.cells[row].as_deref()).collect())
        .collect()
}

fn format_column(array: &ArrayRef, style: Style) -> Result<Vec<Option<String>>, arrow::error::ArrowError> {
    let nulls = array.logical_nulls();
    let is_null = |i: usize| nulls.as_ref().is_some_and(|n| n.is_null(i));
    if is_float(array.data_type()) {
        let floats = cast(array, &DataType::Float64)?;
        let floats = floats.as_primitive::<Float64Type>();
        let text = |i| format_float(floats.value(i), style.decimals);
        return Ok((0..array.len()).map(|i| (!is_null(i)).then(|| text(i))).collect());
    }
    let formatter = ArrayFormatter::try_new(array.as_ref(), &FormatOptions::default())?;
    (0..array.len())
        .map(|i| {
            if is_null(i) {
                Ok(None)
            } else {
                formatter.value(i).try_to_string().map(Some)
            }
        })
        .collect()
}

fn is_float(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Float16 | DataType::Float32 | DataType::Float64
    )
}

/// `value` with `decimals` digits; a negative number that rounds to zero loses its sign so
/// that `-0.0001` and `0.0001` print alike.
pub(super) fn format_float(value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let text = format!("{value:.decimals$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::sample_table;

    #[test]
    fn floats_use_fixed_decimals_and_drop_negative_zero() {
        assert_eq!(format_float(0.12345, 3), "0.123");
        assert_eq!(format_float(2.0, 1), "2.0");
        assert_eq!(format_float(-0.0001, 3), "0.000");
        assert_eq!(format_float(-0.0006, 3), "-0.001");
        assert_eq!(format_float(f64::NAN, 3), "NaN");
        assert_eq!(format_float(f64::NEG_INFINITY, 3), "-inf");
    }

    #[test]
    fn columns_keep_nulls_and_mark_numeric_types() {
        let cols = columns(&sample_table(), Style { decimals: 2 }).unwrap();
        let headers: Vec<_> = cols.iter().map(|c| c.header.as_str()).collect();
        assert_eq!(headers, ["model", "r_p", "n_tasks"]);
        assert_eq!(
            cols.iter().map(|c| c.numeric).collect::<Vec<_>>(),
            [false, true, true]
        );
        assert_eq!(cols[1].cells, [Some("0.12".into()), None, Some("1.00".into())]);
        assert_eq!(cols[2].cells[2], Some("-7".into()));
    }
}
