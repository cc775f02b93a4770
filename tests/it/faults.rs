//! Numbers one can publish: every planned sample is in every denominator, and a fault of
//! the environment (a provider that fails after every retry, a sandbox or a Python that
//! cannot start) is recorded as a fault, never as a verdict on the model, makes the tables
//! visibly incomplete, and fails the command unless the user accepts it.

use std::process::Output;

use crate::common::{KEY, Workspace, add_model, chat_server, completion, query, stderr};
use crate::competitions::{TOY_MODULAR, toy};

/// A Python that starts but has none of the harness's libraries (Debian's own).
const BARE_PYTHON: &str = "/usr/bin/python3";

fn ml2b(ws: &Workspace, args: &[&str]) -> Output {
    ws.ml2b().env("ML2B_TEST_KEY", KEY).args(args).output().unwrap()
}

/// The rows of `sql` as JSON.
fn rows(ws: &Workspace, sql: &str) -> Vec<serde_json::Value> {
    query(ws, sql).as_array().cloned().unwrap_or_default()
}

/// A model `fake` that answers the sample of seed 0 and fails the others with HTTP 503
/// after every retry (the server says to retry at once, so the six attempts take no time);
/// once `fixed` is set, it answers them all.
fn flaky_model(ws: &Workspace) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let fixed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ok = fixed.clone();
    let (port, _) = chat_server(move |_, request| {
        if request["seed"] == 0 || ok.load(std::sync::atomic::Ordering::SeqCst) {
            (200, completion(&format!("```python\n{TOY_MODULAR}```")))
        } else {
            (503, "{\"error\": {\"message\": \"overloaded\"}}".into())
        }
    });
    add_model(ws, port);
    fixed
}

const FAKE_RUN: [&str; 11] = [
    "run",
    "--models",
    "fake",
    "--competitions",
    "toy",
    "--langs",
    "en",
    "--format",
    "modular",
    "--seeds",
    "3",
];

#[test]
fn failed_generations_stay_in_every_denominator_and_fail_the_run_until_accepted() {
    let ws = toy();
    let fixed = flaky_model(&ws);
    let out = ml2b(&ws, &FAKE_RUN);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("2 of 3 planned samples have no verdict")
            && err.contains("fake (modular): 2 of 3 missing: 2 not generated")
            && err.contains("generate fault of fake, 2 unit(s)")
            && err.contains("status 503: overloaded"),
        "{err}"
    );
    // Before: pass rate 100 (1 valid of the 1 generated sample). Every planned sample
    // counts: 1 of 3, and the table says 2 are missing.
    let table = report_table(&ws, "pass_rate", &["--accept-incomplete"]);
    let en = table
        .lines()
        .find(|l| l.starts_with("fake,modular,en,"))
        .unwrap_or_else(|| panic!("{table}"));
    let cells: Vec<&str> = en.split(',').collect();
    assert_eq!(
        cells[3..6],
        ["1", "1", "3"],
        "competitions, passed, expected: {table}"
    );
    assert!(
        (cells[6].parse::<f64>().unwrap() - 100.0 / 3.0).abs() < 1e-9,
        "{table}"
    );
    assert_eq!(cells[7], "2", "missing: {table}");
    let not_generated = rows(
        &ws,
        "SELECT seed, outcome, valid, r_p, missing_stage FROM runs ORDER BY seed",
    );
    assert_eq!(not_generated.len(), 3, "{not_generated:?}");
    for (seed, row) in not_generated.iter().enumerate().skip(1) {
        assert_eq!(row["seed"], seed);
        assert_eq!(row["outcome"], "not_generated");
        assert_eq!(row["valid"], false);
        assert_eq!(row["r_p"], 0.0);
        assert_eq!(row["missing_stage"], "generate");
    }
    let faults = rows(&ws, "SELECT stage, message FROM fault");
    assert_eq!(faults.len(), 2, "one fault per failed unit: {faults:?}");
    assert!(faults.iter().all(|f| f["stage"] == "generate"));

    // The report says so, in the index and on stderr, and fails unless accepted.
    let report = ws.dir.path().join("report");
    let out = ml2b(&ws, &["report", "--out", report.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--accept-incomplete"), "{}", stderr(&out));
    let index = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(index.contains("Incomplete: 2 of 3 planned samples have no verdict"));
    let out = ml2b(
        &ws,
        &["report", "--accept-incomplete", "--out", report.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("2 of 3 planned samples"),
        "still said: {}",
        stderr(&out)
    );

    // Once the provider answers, the same command retries only what is missing.
    fixed.store(true, std::sync::atomic::Ordering::SeqCst);
    let out = ml2b(&ws, &FAKE_RUN);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let complete = rows(&ws, "SELECT count(*) AS n FROM runs WHERE missing_stage IS NULL");
    assert_eq!(complete[0]["n"], 3);
    let open = rows(
        &ws,
        "SELECT count(*) AS n FROM runs WHERE missing_stage IS NOT NULL",
    );
    assert_eq!(open[0]["n"], 0);
    let table = report_table(&ws, "faults", &[]);
    assert_eq!(table.lines().count(), 1, "no open fault: {table}");
}

/// A table of a fresh report of the store (CSV), the report made with `extra` flags.
fn report_table(ws: &Workspace, name: &str, extra: &[&str]) -> String {
    let dir = ws.dir.path().join(format!("report-{name}"));
    let mut args = vec!["report", "--out", dir.to_str().unwrap()];
    args.extend(extra);
    let out = ml2b(ws, &args);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", stderr(&out));
    std::fs::read_to_string(dir.join(format!("{name}.csv"))).unwrap()
}

#[test]
fn a_broken_python_stops_the_run_before_anything_runs() {
    let ws = toy();
    let out = ws
        .ml2b()
        .env("ML2B_PYTHON", BARE_PYTHON)
        .args([
            "run",
            "--models",
            "reference",
            "--competitions",
            "toy",
            "--langs",
            "en",
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("preflight: 1 check(s) failed")
            && err.contains(
                "the local sandbox: a canary solution with Python /usr/bin/python3 ended sandbox_error"
            )
            && err.contains("No module named"),
        "{err}"
    );
    for log in ["generate", "execute", "grade"] {
        assert!(
            !ws.store_path().join("log").join(log).exists(),
            "{log} was written: nothing may run after a failed preflight"
        );
    }
}

#[test]
fn a_sandbox_that_cannot_start_records_faults_not_verdicts_and_a_later_run_completes() {
    let ws = toy();
    let args = [
        "run",
        "--models",
        "reference",
        "--competitions",
        "toy",
        "--langs",
        "en",
        "--skip-preflight",
    ];
    let out = ws
        .ml2b()
        .env("ML2B_PYTHON", BARE_PYTHON)
        .args(args)
        .output()
        .unwrap();
    let err = stderr(&out);
    // Before: two `sandbox_error` executions, pass rate 0, exit 0.
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("2 of 2 planned samples have no verdict")
            && err.contains("reference (modular): 1 of 1 missing: 1 not executed"),
        "{err}"
    );
    // No table of zeros when nothing has a verdict: it says so, and the hash says why.
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("no headline: no planned sample has a verdict"),
        "{said}"
    );
    assert!(
        said.contains(" (no verdict)\n") && !said.contains("pass_rate"),
        "{said}"
    );
    let executed = rows(&ws, "SELECT count(*) AS n FROM execute");
    assert_eq!(
        executed[0]["n"], 0,
        "no verdict is recorded for a run that never started"
    );
    let faults = rows(&ws, "SELECT stage, message FROM fault ORDER BY label");
    assert_eq!(faults.len(), 2, "{faults:?}");
    for f in &faults {
        assert_eq!(f["stage"], "execute");
        let message = f["message"].as_str().unwrap();
        assert!(
            message.contains("the sandbox could not run the code (twice)")
                && message.contains("No module named"),
            "{message}"
        );
    }
    let missing = rows(&ws, "SELECT missing_stage, outcome FROM runs");
    assert!(
        missing
            .iter()
            .all(|r| r["missing_stage"] == "execute" && r["outcome"] == "not_executed"),
        "{missing:?}"
    );
    // With the managed Python, the same command executes the two runs and completes.
    let out = ws.ml2b().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("pass_rate") && !said.contains("no headline"),
        "{said}"
    );
    let outcomes = rows(&ws, "SELECT outcome FROM execute");
    assert_eq!(outcomes.len(), 2);
    assert!(outcomes.iter().all(|r| r["outcome"] == "ok"), "{outcomes:?}");
}

/// What `ml2b grade-file` reports for `code` on the toy competition, in `format`.
fn grade_file(ws: &Workspace, code: &str, format: &str) -> serde_json::Value {
    let path = ws.dir.path().join("solution.py");
    std::fs::write(&path, code).unwrap();
    let out = ws
        .ml2b()
        .args(["--json", "grade-file"])
        .arg(&path)
        .args(["--competition", "toy", "--format", format])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)))
}

#[test]
fn a_solution_cannot_choose_its_own_outcome() {
    let ws = toy();
    for claimed in ["sandbox_error", "timeout"] {
        let code = format!(
            "import json, os\n\n\ndef train_and_predict(data, X_val):\n    json.dump({{'success': False, 'outcome': '{claimed}', 'errors': ['the sandbox broke']}}, open('/out/result.json', 'w'))\n    os._exit(1)\n"
        );
        let report = grade_file(&ws, &code, "mono");
        assert_eq!(report["outcome"], "runtime_error", "{claimed}: {report}");
        assert_eq!(
            report["detail"],
            format!("the run's result.json claims `{claimed}`, which ml2b did not observe"),
            "{report}"
        );
    }
    // Nor by imitating bubblewrap on stderr: the harness had started.
    let code = "import os, sys\n\n\ndef train_and_predict(data, X_val):\n    sys.stderr.write('bwrap: Can\\'t mount proc\\n')\n    sys.stderr.flush()\n    os._exit(1)\n";
    let report = grade_file(&ws, code, "mono");
    assert_eq!(report["outcome"], "runtime_error", "{report}");
    // The harness's line is not part of what the run printed.
    let code = "import numpy as np\n\ndef train_and_predict(data, X_val):\n    print('hello')\n    return np.zeros(len(X_val))\n";
    let report = grade_file(&ws, code, "mono");
    assert_eq!(report["outcome"], "ok", "{report}");
    let printed = report["stdout_tail"].as_str().unwrap();
    assert!(
        printed.starts_with("hello\n") && !printed.contains("ml2b-harness"),
        "{report}"
    );
}
