//! `ml2b run` end to end on the toy root: killed with SIGKILL at several points and
//! started again, it ends with the same tables as an uninterrupted run, and no log holds
//! a unit twice.

use std::time::Duration;

use crate::common::{Workspace, report_tables};
use crate::competitions::toy;

fn run_to_end(ws: &Workspace) {
    let out = ws
        .ml2b()
        .args(["-q", "run", "--models", "reference", "--seeds", "2", "-j", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Every table of the report as CSV (the data, without provenance).
fn tables(ws: &Workspace) -> Vec<(String, Vec<u8>)> {
    let dir = ws.dir.path().join("report");
    let out = ws
        .ml2b()
        .args(["-q", "report", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    report_tables(&dir)
}

fn assert_no_unit_twice(ws: &Workspace) {
    for stage in ["translate_validate", "generate", "execute", "grade", "analyze"] {
        let sql = format!("SELECT count(*) AS n, count(DISTINCT unit_key) AS k FROM {stage}");
        let out = ws.ml2b().args(["--json", "query", &sql]).output().unwrap();
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(rows[0]["n"], rows[0]["k"], "{stage}: {rows}");
        assert!(rows[0]["n"].as_u64().unwrap() > 0, "{stage} is empty");
    }
}

#[test]
fn a_run_killed_at_random_points_resumes_to_the_tables_of_an_uninterrupted_run() {
    let clean = toy();
    run_to_end(&clean);
    let killed = toy();
    // Kill points from a fixed linear congruential sequence (so the test is repeatable):
    // start a run, SIGKILL it after 20–270 ms, and again, until a run finishes on its own.
    let mut x: u64 = 0x2545_f491;
    let mut interrupted = 0;
    for _ in 0..40 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let delay = Duration::from_millis(20 + (x >> 33) % 250);
        let mut child = killed
            .ml2b()
            .args(["-q", "run", "--models", "reference", "--seeds", "2", "-j", "2"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        if child.try_wait().unwrap().is_some() {
            break;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        interrupted += 1;
    }
    assert!(interrupted >= 3, "only {interrupted} kills hit a running process");
    run_to_end(&killed);
    assert_no_unit_twice(&killed);
    let (a, b) = (tables(&clean), tables(&killed));
    assert_eq!(
        a.iter().map(|t| &t.0).collect::<Vec<_>>(),
        b.iter().map(|t| &t.0).collect::<Vec<_>>()
    );
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(
            x == y,
            "{name} differs:\n{}\n---\n{}",
            String::from_utf8_lossy(x),
            String::from_utf8_lossy(y)
        );
    }
    let verified = killed.ml2b().args(["verify", "--rerun"]).output().unwrap();
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
}

#[test]
fn a_run_whose_store_does_not_verify_says_why() {
    let ws = toy();
    let store = ws.store();
    let blob = store.objects().put(b"a blob no stage reads").unwrap();
    let path = store.objects().path(&blob);
    std::fs::write(&path, b"a blob no stage reads, changed").unwrap();
    let out = ws
        .ml2b()
        .args(["-q", "run", "--models", "reference"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "warning: damaged: {}: object {blob} is damaged",
            path.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: the store does not verify: 1 problem(s)"),
        "{stderr}"
    );
}
