//! A store written by an earlier ml2b reads, verifies and re-derives identically.
//!
//! `tests/fixtures/store-08a1b02/` was written by ml2b at commit `08a1b02` (before the
//! events, providers and pipeline moved to their own modules) with
//! `tests/fixtures/make-store-08a1b02.sh`, which also recorded what that ml2b answered:
//! `verify --rerun`, every table of `queries/` as CSV, and the ids of the events a fresh
//! store re-derives. Today's ml2b must give the same answers from the same store.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::Workspace;

const FIXTURE: &str = "store-08a1b02";
/// The selection the fixture's run covered (see the script).
const COMPETITIONS: &str = "concrete-strength,credit-risk";
const LANGUAGES: &str = "en,kk,zh";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixtures() -> PathBuf {
    root().join("tests/fixtures")
}

fn expected(name: &str) -> String {
    let path = fixtures().join(format!("{FIXTURE}.expected")).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A workspace whose store is a copy of the fixture.
fn old_store() -> Workspace {
    let ws = Workspace::new();
    copy_dir(&fixtures().join(FIXTURE), &ws.store_path());
    ws
}

fn stdout(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn an_old_store_verifies_and_rederives_bit_for_bit() {
    let ws = old_store();
    let root = root();
    let verify = stdout(ws.ml2b().args(["verify", "--rerun", "--root"]).arg(&root));
    assert_eq!(verify, expected("verify.txt"));
}

/// The old store's generate units are today's units: generating its selection again with
/// the reference model commits nothing (the keys did not change with the schema).
#[test]
fn an_old_stores_generate_units_are_not_run_again() {
    let ws = old_store();
    let count = |ws: &Workspace| {
        stdout(
            ws.ml2b()
                .args(["query", "--format", "csv", "SELECT count(*) AS n FROM generate"]),
        )
    };
    let before = count(&ws);
    let out = ws
        .ml2b()
        .args([
            "stage",
            "generate",
            "--model",
            "reference",
            "--competitions",
            COMPETITIONS,
            "--langs",
            LANGUAGES,
            "--root",
        ])
        .arg(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    let numbers: Vec<usize> = said
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(
        matches!(numbers[..], [planned, skipped, 0, ..] if planned > 0 && planned == skipped),
        "every planned unit is in the log: {said}"
    );
    assert_eq!(count(&ws), before);
}

/// A table whose query changed since (`cost.sql`, which now counts react searches apart)
/// is analyzed again from the current text, and both its events re-derive: the old one
/// from the superseded text it ran (`queries/superseded/`).
#[test]
fn a_changed_query_is_analyzed_again_and_its_old_event_still_rederives() {
    let ws = old_store();
    let root = root();
    let out = ws
        .ml2b()
        .args(["--json", "stage", "analyze", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ran = summary["ran"]
        .as_u64()
        .or_else(|| summary["summary"]["ran"].as_u64());
    assert!(ran.is_some_and(|n| n >= 1), "{summary}");
    let costs = stdout(ws.ml2b().args([
        "query",
        "--format",
        "csv",
        "SELECT count(*) AS n, count(DISTINCT query_blake3) AS texts FROM analyze WHERE name = 'cost'",
    ]));
    assert_eq!(costs, "n,texts\n2,2\n");
    let verify = stdout(ws.ml2b().args(["verify", "--rerun", "--root"]).arg(&root));
    let analyzed = 10 + ran.unwrap();
    assert!(
        verify.contains(&format!("rerun: analyze: {analyzed} events re-derived, 0 differ")),
        "{verify}"
    );
}

/// The columns of a CSV table, by name, in order: (header, rows of cells).
fn columns_of(csv: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// `table` holds every column of `recorded` with the same values, and besides them only a
/// `missing` column (the samples without a verdict, which a later ml2b counts), all 0: the
/// old store has no planned sample without its run.
fn same_with_missing(name: &str, table: &str, recorded: &str) {
    let (now, rows) = columns_of(table);
    let (then, old_rows) = columns_of(recorded);
    let added: Vec<&String> = now.iter().filter(|c| !then.contains(c)).collect();
    assert!(
        added.is_empty() || added == ["missing"],
        "queries/{name}.sql: columns added since: {added:?}"
    );
    let keep: Vec<usize> = then
        .iter()
        .map(|c| now.iter().position(|n| n == c).unwrap())
        .collect();
    let projected: Vec<Vec<String>> = rows
        .iter()
        .map(|r| keep.iter().map(|&i| r[i].clone()).collect())
        .collect();
    assert_eq!(projected, old_rows, "queries/{name}.sql");
    if let Some(i) = now.iter().position(|c| c == "missing") {
        assert!(rows.iter().all(|r| r[i] == "0"), "queries/{name}.sql: {table}");
    }
}

/// Every table that ml2b had at `08a1b02` reads as it did (a `missing` column added since
/// reads 0); a table added since (no recorded answer) reads too, and is empty: the old
/// store has no event of what it counts — but `completeness`, which lists every model of
/// the runs with none missing.
#[test]
fn every_table_reads_the_same_from_an_old_store() {
    let ws = old_store();
    let root = root();
    for entry in std::fs::read_dir(root.join("queries")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "sql") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let table = stdout(
            ws.ml2b()
                .args(["query", "--format", "csv", "--root"])
                .arg(&root)
                .arg(&path),
        );
        let recorded = fixtures().join(format!("{FIXTURE}.expected/{name}.csv"));
        if recorded.exists() {
            same_with_missing(&name, &table, &expected(&format!("{name}.csv")));
        } else if name == "leaderboard" {
            same_as_the_old_per_language_tables(&table);
        } else if name == "completeness" {
            let (header, rows) = columns_of(&table);
            let missing = header.iter().position(|c| c == "missing").unwrap();
            assert!(
                !rows.is_empty() && rows.iter().all(|r| r[missing] == "0"),
                "{table}"
            );
        } else {
            assert_eq!(table.lines().count(), 1, "queries/{name}.sql: {table}");
        }
    }
}

/// The leaderboard (added since) over an old store: one complete seed everywhere, so each
/// language's AUP and pass rate are the recorded `aup` table's, with a zero interval.
fn same_as_the_old_per_language_tables(table: &str) {
    let (header, rows) = columns_of(table);
    let at = |name: &str| header.iter().position(|c| c == name).unwrap();
    let (old_header, old_rows) = columns_of(&expected("aup.csv"));
    let old_at = |name: &str| old_header.iter().position(|c| c == name).unwrap();
    let mut compared = 0;
    for row in &rows {
        assert_eq!(
            (row[at("seeds")].as_str(), row[at("missing")].as_str()),
            ("1", "0"),
            "{row:?}"
        );
        assert_eq!(row[at("aup_se")], "0.0", "{row:?}");
        let Some(old) = old_rows.iter().find(|o| {
            o[old_at("model")] == row[at("model")]
                && o[old_at("format")] == row[at("format")]
                && o[old_at("language")] == row[at("scope")]
        }) else {
            continue;
        };
        for column in ["aup", "pass_rate"] {
            let (new, old) = (&row[at(column)], &old[old_at(column)]);
            let close = (new.parse::<f64>().unwrap() - old.parse::<f64>().unwrap()).abs() < 1e-12;
            assert!(close, "{column} of {row:?}: {new} against the recorded {old}");
        }
        compared += 1;
    }
    assert!(
        compared > 0,
        "no language of the leaderboard is in the old aup table:\n{table}"
    );
}

#[test]
fn a_fresh_store_rederives_the_old_event_ids_and_verdicts() {
    let ws = Workspace::new();
    let root = root();
    let select = ["--competitions", COMPETITIONS, "--langs", LANGUAGES];
    let stage = |args: &[&str]| {
        let out = ws
            .ml2b()
            .arg("stage")
            .args(args)
            .args(select)
            .arg("--root")
            .arg(&root)
            .output()
            .unwrap();
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    stage(&["translate-validate"]);
    stage(&["generate", "--model", "reference"]);
    let ids = |table: &str| {
        stdout(ws.ml2b().args([
            "query",
            "--format",
            "csv",
            &format!("SELECT event_id, unit_key FROM {table} ORDER BY event_id"),
        ]))
    };
    // generate's schema is version 3 since its events name the task text the prompt used:
    // a fresh store writes new ids, but its unit keys are version 2's (what a unit is did
    // not change), so the old store's units are the same units.
    let keys = |csv: &str| -> Vec<String> {
        let mut keys: Vec<String> = csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(1).unwrap().to_string())
            .collect();
        keys.sort();
        keys
    };
    let (fresh, old) = (ids("generate"), expected("generate.ids.csv"));
    assert_eq!(keys(&fresh), keys(&old));
    assert!(fresh.lines().skip(1).all(|line| !old.contains(line)), "new ids");
    // translate_validate's schema is version 2 since its gate checks what must stay
    // verbatim: a fresh store writes new ids (the old ones re-derive under version 1, in
    // `an_old_store_verifies_and_rederives_bit_for_bit`), with the old verdicts and scores.
    let fresh = ids("translate_validate");
    let old = expected("translate_validate.ids.csv");
    assert_eq!(fresh.lines().count(), old.lines().count());
    assert!(fresh.lines().skip(1).all(|line| !old.contains(line)), "new ids");
    let verdicts = "SELECT competition, language, bleu, chrf, passed FROM translate_validate ORDER BY competition, language";
    let checks = |ws: &Workspace| stdout(ws.ml2b().args(["query", "--format", "csv", verdicts]));
    assert_eq!(checks(&ws), checks(&old_store()));
}

/// The old segments have today's columns, but for those a later schema version added:
/// nullable, at the end of the body (so the old segments read them as null).
#[test]
fn the_old_segments_have_todays_columns() {
    let store = ml2b::store::Store::open(fixtures().join(FIXTURE));
    for log in ml2b::events::LOGS {
        let stage_log = ml2b::log::StageLog::new(&store, log.stage).unwrap();
        let Some(last) = stage_log.list().unwrap().pop() else {
            continue;
        };
        let written = stage_log.read(&last).unwrap().schema().unwrap();
        let today = log.schema().unwrap();
        let columns = |s: &arrow::datatypes::Schema| -> Vec<String> {
            s.fields()
                .iter()
                .map(|f| format!("{}: {}", f.name(), f.data_type()))
                .collect()
        };
        let (old, new) = (columns(&written), columns(&today));
        let added = new.len() - old.len();
        // The common columns close every segment: created_at, host, duration_ms.
        let body_end = old.len() - 3;
        assert_eq!(old[..body_end], new[..body_end], "log {}", log.stage);
        assert_eq!(old[body_end..], new[body_end + added..], "log {}", log.stage);
        for f in &today.fields()[body_end..body_end + added] {
            assert!(
                f.is_nullable(),
                "log {}: {} is added but not nullable",
                log.stage,
                f.name()
            );
        }
        // grade v3 added eight columns; generate v3 the task text's blake3 and producer, v4
        // the external agent's name; execute v3 the network, its requests (three columns),
        // the model cache and GPUs.
        let expected = match log.stage {
            "grade" => 8,
            "generate" => 3,
            "execute" => 6,
            _ => 0,
        };
        assert_eq!(added, expected, "log {}", log.stage);
    }
}
