//! `ml2b query` over a fixture log: every output format, and bad SQL.

use std::path::{Path, PathBuf};

use insta::assert_snapshot;
use ml2b::log::{Event, EventBody, Provenance, StageLog, unit_key};

use crate::common::{Echo, Workspace, run_echo};

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

/// The body of a second log in the fixture store.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Tally {
    x: i64,
}

impl EventBody for Tally {
    const STAGE: &'static str = "tally";
    const SCHEMA_VERSION: u32 = 1;
}

/// The fixture with one more segment of echo, `copied` from a segment of this store.
fn with_copied_segment(copied: impl FnOnce(&Workspace) -> PathBuf) -> (Workspace, PathBuf) {
    let ws = fixture();
    let from = copied(&ws);
    let echo = StageLog::new(&ws.store(), Echo::STAGE).unwrap();
    let next = echo
        .dir()
        .join(format!("{:020}.parquet", echo.list().unwrap().len()));
    std::fs::copy(from, &next).unwrap();
    (ws, next)
}

/// Every query fails naming `file`, not only those that read its log.
fn assert_refused(ws: &Workspace, file: &Path, says: &str) {
    for args in [
        &["query", "SELECT count(*) FROM echo"][..],
        &["query", "SELECT count(*) FROM tally"],
    ] {
        let out = ws.ml2b().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&file.display().to_string()) && stderr.contains(says),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_segment_copied_to_another_version_is_refused() {
    let (ws, copy) = with_copied_segment(|ws| {
        StageLog::new(&ws.store(), Echo::STAGE).unwrap().list().unwrap()[0]
            .path
            .clone()
    });
    assert_refused(&ws, &copy, "it says it is version 0 of stage `echo`");
}

#[test]
fn a_segment_of_another_log_is_refused() {
    let (ws, copy) = with_copied_segment(|ws| {
        let tally = StageLog::new(&ws.store(), Tally::STAGE).unwrap();
        let mut view = tally.view().unwrap();
        let key = unit_key(Tally::STAGE, 1, &[], &0).unwrap();
        let e = Event::new(key, vec![], Tally { x: 0 }, Provenance::now(0)).unwrap();
        tally.commit(&mut view, vec![e], None).unwrap();
        tally.list().unwrap()[0].path.clone()
    });
    assert_refused(&ws, &copy, "it says it is version 0 of stage `tally`");
}

#[test]
fn an_empty_log_folder_is_an_empty_table() {
    let ws = fixture();
    for stage in ["grade", "tally"] {
        std::fs::create_dir_all(ws.store_path().join("log").join(stage)).unwrap();
    }
    let out = ws
        .ml2b()
        .args([
            "--json",
            "query",
            "SELECT (SELECT count(*) FROM grade) AS grades, (SELECT count(score) FROM grade) AS scores, \
             (SELECT count(event_id) FROM tally) AS tallies, (SELECT count(*) FROM echo) AS echoes",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!([{ "grades": 0, "scores": 0, "tallies": 0, "echoes": 12 }])
    );
}

#[test]
fn a_store_that_does_not_exist_is_a_usage_error() {
    let ws = Workspace::new();
    let missing = ws.dir.path().join("no-such-store");
    let out = ws
        .ml2b()
        .arg("--store")
        .arg(&missing)
        .args(["query", "SELECT count(*) FROM grade"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("there is no store at {}", missing.display())),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}
