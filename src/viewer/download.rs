//! Downloads: any table the viewer shows, whole, as CSV or JSON.
//!
//! ```text
//! GET /tables/<name>.csv | .json     a table of queries/ (every row and column)
//! GET /runs.csv | /runs.json?…       the run list with the list's filters (every page)
//! ```
//! CSV is the report's (`crate::report::csv`: a header row, floats in full precision, nulls
//! empty); JSON is an array of objects, one per row, nulls written as `null`. Each is sent
//! as an attachment named after the table.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::ViewError;
use crate::report::Table;

/// The formats a table downloads in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Csv,
    Json,
}

impl Format {
    /// `name.csv` → (`name`, CSV); a name without one of the extensions is a page.
    pub(crate) fn split(name: &str) -> (&str, Option<Self>) {
        if let Some(stem) = name.strip_suffix(".csv") {
            (stem, Some(Self::Csv))
        } else if let Some(stem) = name.strip_suffix(".json") {
            (stem, Some(Self::Json))
        } else {
            (name, None)
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Self::Csv => "csv",
            Self::Json => "json",
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            Self::Csv => "text/csv; charset=utf-8",
            Self::Json => "application/json",
        }
    }
}

/// `table` as a file in `format`, sent as an attachment.
pub(crate) fn file(table: &Table, format: Format) -> Result<Response, ViewError> {
    let body = match format {
        Format::Csv => crate::report::csv(table)?,
        Format::Json => json(table)?,
    };
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    let disposition = format!("attachment; filename=\"{}\"", table.file_name(format.extension()));
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}

/// The rows as a JSON array of objects, every column present (nulls as `null`).
pub(crate) fn json(table: &Table) -> Result<String, ViewError> {
    let mut bytes = Vec::new();
    {
        let mut writer = arrow::json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .build::<_, arrow::json::writer::JsonArray>(&mut bytes);
        writer.write(&table.batch)?;
        writer.finish()?;
    }
    if bytes.is_empty() {
        bytes.extend_from_slice(b"[]");
    }
    bytes.push(b'\n');
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::sample_table;

    #[test]
    fn a_name_splits_from_its_format() {
        assert_eq!(Format::split("aup.csv"), ("aup", Some(Format::Csv)));
        assert_eq!(Format::split("aup.json"), ("aup", Some(Format::Json)));
        assert_eq!(Format::split("aup"), ("aup", None));
    }

    #[test]
    fn json_keeps_every_column_and_null() {
        let text = json(&sample_table()).unwrap();
        let rows: serde_json::Value = serde_json::from_str(&text).unwrap();
        let rows = rows.as_array().unwrap();
        assert_eq!(rows.len(), 3);
        assert!(rows.iter().all(|r| r.as_object().unwrap().len() == 3), "{text}");
        assert!(rows[2]["model"].is_null(), "{text}");
        assert_eq!(rows[0]["r_p"], 0.123456789);
    }
}
