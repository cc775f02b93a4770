//! Fixtures shared by the unit tests of the report renderers.

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
use arrow::record_batch::RecordBatch;

use super::Table;

/// A three-row table with a text column full of special characters, a float column with a
/// null and an integer column.
pub(crate) fn sample_table() -> Table {
    let model: ArrayRef = Arc::new(StringArray::from(vec![
        Some("gpt|4 & co"),
        Some("50% $x_1$ #{a}~^\\"),
        None,
    ]));
    let r_p: ArrayRef = Arc::new(Float64Array::from(vec![Some(0.123_456_789), None, Some(0.999_9)]));
    let n_tasks: ArrayRef = Arc::new(Int64Array::from(vec![12, 3, -7]));
    let batch = RecordBatch::try_from_iter([("model", model), ("r_p", r_p), ("n_tasks", n_tasks)])
        .expect("sample columns have equal lengths");
    Table {
        name: "pass_rate".into(),
        title: "Pass rate <by> model".into(),
        description: "Share of tasks solved & graded; 100% means all.".into(),
        batch,
    }
}
