//! `queries/leaderboard.sql` against `tests/reference/leaderboard.py`: MLE-bench's
//! aggregation over seeds (per-seed metric over every cell, complete seeds only, mean,
//! standard error with ddof 1, mean ± 1.96·SE), every value to 1e-9.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array,
};
use arrow::datatypes::{Float64Type, Int64Type};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use serde_json::Value;

const FIXTURE: &str = include_str!("../../tests/fixtures/leaderboard.json");

fn texts(rows: &[Value], key: &str) -> ArrayRef {
    Arc::new(StringArray::from_iter(rows.iter().map(|r| r[key].as_str())))
}

fn table(ctx: &SessionContext, name: &str, columns: Vec<(&str, ArrayRef)>) {
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let mem = MemTable::try_new(batch.schema(), vec![vec![batch]]).unwrap();
    ctx.register_table(name, Arc::new(mem)).unwrap();
}

/// A session whose `runs` and `grade` hold the fixture's runs and grades.
fn session(fixture: &Value) -> SessionContext {
    let ctx = SessionContext::new();
    super::udf::register(&ctx);
    let runs = fixture["runs"].as_array().unwrap();
    let u32s = |key: &str| -> ArrayRef {
        Arc::new(UInt32Array::from_iter_values(
            runs.iter().map(|r| r[key].as_u64().unwrap() as u32),
        ))
    };
    table(
        &ctx,
        "runs",
        vec![
            ("model", texts(runs, "model")),
            ("format", texts(runs, "format")),
            ("competition", texts(runs, "competition")),
            ("language", texts(runs, "language")),
            ("tier", texts(runs, "tier")),
            ("language_position", u32s("language_position")),
            (
                "seed",
                Arc::new(UInt64Array::from_iter_values(
                    runs.iter().map(|r| r["seed"].as_u64().unwrap()),
                )),
            ),
            (
                "r_p",
                Arc::new(Float64Array::from_iter(runs.iter().map(|r| r["r_p"].as_f64()))),
            ),
            (
                "valid",
                Arc::new(BooleanArray::from_iter(runs.iter().map(|r| r["valid"].as_bool()))),
            ),
            ("missing_stage", texts(runs, "missing_stage")),
            ("grade_id", texts(runs, "grade_id")),
        ],
    );
    let grades = fixture["grades"].as_array().unwrap();
    table(
        &ctx,
        "grade",
        vec![
            ("event_id", texts(grades, "event_id")),
            ("competition", texts(grades, "competition")),
            ("medal", texts(grades, "medal")),
        ],
    );
    ctx
}

fn number(column: &dyn Array, row: usize) -> Option<f64> {
    if column.is_null(row) {
        return None;
    }
    match column.data_type() {
        arrow::datatypes::DataType::Float64 => Some(column.as_primitive::<Float64Type>().value(row)),
        arrow::datatypes::DataType::Int64 => Some(column.as_primitive::<Int64Type>().value(row) as f64),
        other => {
            let cast = arrow::compute::cast(&column.slice(row, 1), &arrow::datatypes::DataType::Float64)
                .unwrap_or_else(|e| panic!("{other}: {e}"));
            Some(cast.as_primitive::<Float64Type>().value(0))
        }
    }
}

#[tokio::test]
async fn the_leaderboard_aggregates_seeds_as_mle_bench_does() {
    let fixture: Value = serde_json::from_str(FIXTURE).unwrap();
    let ctx = session(&fixture);
    let sql = super::catalog::table("leaderboard").unwrap().sql;
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let batch = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    let expected = fixture["expected"].as_array().unwrap();
    assert_eq!(
        batch.num_rows(),
        expected.len(),
        "one row per model, format and scope"
    );
    let key = |b: &RecordBatch, row: usize, name: &str| {
        b.column_by_name(name)
            .unwrap()
            .as_string::<i32>()
            .value(row)
            .to_string()
    };
    let mut checked = 0;
    for want in expected {
        let row = (0..batch.num_rows())
            .find(|&i| {
                ["model", "format", "scope"]
                    .iter()
                    .all(|k| key(&batch, i, k) == want[*k].as_str().unwrap())
            })
            .unwrap_or_else(|| panic!("no row for {want}"));
        for (name, value) in want.as_object().unwrap() {
            if ["model", "format", "scope"].contains(&name.as_str()) {
                continue;
            }
            let column = batch
                .column_by_name(name)
                .unwrap_or_else(|| panic!("no column {name}"));
            let got = number(column.as_ref(), row);
            match (got, value.as_f64()) {
                (None, None) => {}
                (Some(g), Some(w)) => assert!(
                    (g - w).abs() <= 1e-9 * w.abs().max(1.0),
                    "{name} of {}: {g} against the reference's {w}",
                    want["scope"]
                ),
                (g, w) => panic!("{name} of {want}: {g:?} against {w:?}"),
            }
            checked += 1;
        }
    }
    assert!(checked > 300, "{checked}");
    // The order: model, format, then All, the tiers in order, the languages in theirs.
    let scopes: Vec<String> = (0..batch.num_rows())
        .filter(|&i| key(&batch, i, "model") == "gpt-x" && key(&batch, i, "format") == "modular")
        .map(|i| key(&batch, i, "scope"))
        .collect();
    assert_eq!(scopes, ["All", "high", "medium", "low", "en", "fr", "ru", "kk"]);
}
