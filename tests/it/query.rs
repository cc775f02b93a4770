//! `ml2b query` over a fixture log: every output format, and bad SQL.

use insta::assert_snapshot;

use crate::common::{Workspace, run_echo};

fn fixture() -> Workspace {
    let ws = Workspace::new();
    run_echo(&ws.store(), (0..12).collect(), 5);
    ws
}

const SQL: &str = "SELECT n, label, value, tags, note, event_id FROM echo WHERE n < 5 ORDER BY n";

#[test]
fn table_format() {
    assert_snapshot!(fixture().run(&["query", SQL]));
}

#[test]
fn csv_format() {
    assert_snapshot!(fixture().run(&[
        "query",
        "--format",
        "csv",
        "SELECT n, label, value, note FROM echo ORDER BY n DESC LIMIT 4"
    ]));
}

#[test]
fn json_format() {
    assert_snapshot!(fixture().run(&["query", "--format", "json", SQL]));
}

#[test]
fn json_flag_selects_json() {
    let ws = fixture();
    let out = ws
        .ml2b()
        .args(["--json", "query", "SELECT count(*) AS n FROM echo"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v, serde_json::json!([{ "n": 12 }]));
}

#[test]
fn group_by_aggregates() {
    assert_snapshot!(fixture().run(&[
        "query",
        "SELECT note, count(*) AS units, sum(value) AS total FROM echo GROUP BY note ORDER BY note NULLS LAST",
    ]));
}

#[test]
fn parquet_format_to_a_file() {
    let ws = fixture();
    let out_path = ws.dir.path().join("out.parquet");
    let out = ws
        .ml2b()
        .args([
            "query",
            "--format",
            "parquet",
            "--out",
            out_path.to_str().unwrap(),
            SQL,
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let file = std::fs::File::open(&out_path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<_> = reader.map(Result::unwrap).collect();
    assert_snapshot!(
        arrow::util::pretty::pretty_format_batches(&batches)
            .unwrap()
            .to_string()
    );
}

#[test]
fn query_from_a_file() {
    let ws = fixture();
    std::fs::write(
        ws.dir.path().join("q.sql"),
        "-- units per parity\nSELECT n % 2 AS parity, count(*) AS c FROM echo GROUP BY 1 ORDER BY 1",
    )
    .unwrap();
    assert_snapshot!(ws.run(&["query", "q.sql"]));
}

#[test]
fn empty_result_keeps_the_header() {
    assert_snapshot!(fixture().run(&[
        "query",
        "--format",
        "csv",
        "SELECT n, label FROM echo WHERE n > 1000"
    ]));
}

#[test]
fn bad_sql_is_a_usage_error() {
    assert_snapshot!(fixture().run(&["query", "SELEC n FROM echo"]));
}

#[test]
fn unknown_table_is_a_usage_error() {
    assert_snapshot!(fixture().run(&["query", "SELECT * FROM gradez"]));
}

#[test]
fn only_the_logs_are_visible() {
    let ws = fixture();
    let out = ws
        .ml2b()
        .args([
            "query",
            "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '/etc/passwd'",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = ws
        .ml2b()
        .args(["query", "SELECT * FROM '/etc/passwd'"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn missing_query_file_is_a_usage_error() {
    let out = fixture().ml2b().args(["query", "nope.sql"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
