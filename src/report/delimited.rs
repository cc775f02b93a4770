//! CSV with a header row, written by Arrow's CSV writer.
//!
//! Floats keep full precision (shortest text that round-trips), nulls are empty fields
//! and fields are quoted per RFC 4180 when they contain `,`, `"` or line breaks. This is
//! the machine-readable twin of the Markdown and LaTeX tables.

use arrow::csv::WriterBuilder;

use super::{ReportError, Table};

/// Renders `table` as CSV (UTF-8, `\n` line endings).
pub fn csv(table: &Table) -> Result<String, ReportError> {
    table.check_name()?;
    let wrap = |source| ReportError::Csv {
        table: table.name.clone(),
        source,
    };
    let mut bytes = Vec::new();
    {
        let mut writer = WriterBuilder::new().with_header(true).build(&mut bytes);
        writer.write(&table.batch).map_err(wrap)?;
    }
    // Arrow writes UTF-8 only (strings are UTF-8, binary is hex), so nothing is replaced.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::sample_table;

    #[test]
    fn keeps_full_precision_quotes_and_empty_nulls() {
        let text = csv(&sample_table()).unwrap();
        let expected = "\
model,r_p,n_tasks
gpt|4 & co,0.123456789,12
50% $x_1$ #{a}~^\\,,3
,0.9999,-7
";
        assert_eq!(text, expected);
    }

    #[test]
    fn fields_with_commas_and_quotes_are_quoted() {
        let mut table = sample_table();
        let model: arrow::array::ArrayRef =
            std::sync::Arc::new(arrow::array::StringArray::from(vec!["a,b", "say \"hi\"", "x"]));
        table.batch = arrow::record_batch::RecordBatch::try_from_iter([("model", model)]).unwrap();
        let text = csv(&table).unwrap();
        assert_eq!(text, "model\n\"a,b\"\n\"say \"\"hi\"\"\"\nx\n");
    }
}
