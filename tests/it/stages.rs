//! The stages through the real CLI: translate-validate over the bundled benchmark and a toy
//! root (hand-made back-translations, a ratings file built by the test); generate, execute
//! and grade on the toy root, `--since` steps against grading once, and `verify --rerun`.

use crate::common::write;
use crate::competitions::toy;

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn every_bundled_translation_passes_its_bleu_gate_and_reruns_append_nothing() {
    let ws = crate::common::Workspace::new();
    let root = env!("CARGO_MANIFEST_DIR");
    let first = ws
        .ml2b()
        .args(["--json", "stage", "translate-validate", "--root", root])
        .output()
        .unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stdout)
    );
    let report = json(&first);
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 12 * 13);
    for c in checks {
        assert!(c["bleu"].as_f64().unwrap() >= 0.35, "{c}");
        assert_eq!(c["ac1"], serde_json::Value::Null, "no invented ratings");
        assert_eq!(
            c["bleu_signature"],
            "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
        );
    }
    let again = json(
        &ws.ml2b()
            .args(["--json", "stage", "translate-validate", "--root", root])
            .output()
            .unwrap(),
    );
    assert_eq!(again["summary"]["skipped"], 156);
    assert_eq!(again["summary"]["commits"].as_array().unwrap().len(), 0);
}

fn back(ws: &crate::common::Workspace, code: &str, description: &str) {
    let text = format!(
        "title = \"Toy en\"\ndomain = \"d\"\nmetric = \"m\"\ndescription = \"{description}\"\ndata_card = \"c\"\n"
    );
    write(&ws.dir.path().join(format!("data/toy/back/{code}.toml")), &text);
}

#[test]
fn gates_fail_on_a_bad_back_translation_missing_one_or_low_agreement() {
    let ws = toy();
    back(&ws, "fr", "Predict widgets (en).");
    back(&ws, "es", "Something else entirely, nothing alike.");
    let run = |args: &[&str]| {
        ws.ml2b()
            .args(["--json", "stage", "translate-validate"])
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["--language", "fr"]);
    assert!(out.status.success());
    let fr = &json(&out)["checks"][0];
    assert_eq!(fr["language"], "fr");
    assert!(
        (fr["bleu"].as_f64().unwrap() - 1.0).abs() < 1e-12,
        "an identical back-translation: {fr}"
    );

    let out = run(&["--language", "es", "--language", "it"]);
    assert_eq!(out.status.code(), Some(1), "a failing gate fails the stage");
    let checks = json(&out)["checks"].as_array().unwrap().clone();
    let reasons = |i: usize| checks[i]["reasons"].to_string();
    assert!(
        reasons(0).contains("BLEU") && reasons(0).contains("< 0.35"),
        "{}",
        reasons(0)
    );
    assert!(reasons(1).contains("no back-translation"), "{}", reasons(1));

    // Ratings: four raters who mostly disagree on French.
    let mut csv = String::from("subject,r1,r2,r3,r4\n");
    for (i, row) in ["5,1,3,2", "1,5,2,4", "3,3,1,5", "2,4,5,1", "4,2,4,3"]
        .iter()
        .enumerate()
    {
        csv.push_str(&format!("s{i},{row}\n"));
    }
    write(&ws.dir.path().join("manifests/annotations/fr.csv"), &csv);
    let out = run(&["--language", "fr"]);
    assert_eq!(out.status.code(), Some(1));
    let fr = &json(&out)["checks"][0];
    assert!(fr["ac1"].as_f64().unwrap() < 0.8, "{fr}");
    assert_eq!(
        (fr["raters"].as_u64(), fr["subjects"].as_u64()),
        (Some(4), Some(5))
    );
    assert!(fr["reasons"].to_string().contains("AC1"), "{fr}");
    assert_eq!(json(&out)["summary"]["ran"], 1, "new ratings are a new unit");
}

#[test]
fn generate_execute_grade_on_a_toy_root_run_identical_code_once() {
    let ws = toy();
    let stage = |args: &[&str]| {
        let out = ws.ml2b().args(["--json", "stage"]).args(args).output().unwrap();
        assert!(
            out.status.success() || args[0] == "translate-validate",
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        json(&out)
    };
    stage(&["translate-validate"]);
    assert_eq!(
        stage(&["generate"])["summary"]["ran"],
        2,
        "only English passed (no back-translations)"
    );
    assert_eq!(
        stage(&["generate", "--force"])["summary"]["ran"],
        26,
        "forced: the 13 others too"
    );
    let executed = stage(&["execute"]);
    assert_eq!(
        executed["summary"]["ran"], 2,
        "28 generations, 2 distinct programs"
    );
    assert_eq!(executed["counts"]["ok"], 2);
    let graded = stage(&["grade"]);
    assert_eq!(graded["counts"]["valid"], 2);
    let q = ws
        .ml2b()
        .args(["--json", "query", "SELECT DISTINCT score FROM grade"])
        .output()
        .unwrap();
    let rows = json(&q);
    assert_eq!(
        rows.as_array().unwrap().len(),
        1,
        "both formats give the same score: {rows}"
    );
    assert_eq!(rows[0]["score"], 0.5, "a constant prediction has an AUC of 0.5");
    assert_eq!(
        stage(&["execute"])["summary"]["ran"],
        0,
        "a re-run executes nothing"
    );
}

/// Grade event ids in a store, sorted.
fn grade_ids(ws: &crate::common::Workspace) -> Vec<String> {
    let out = ws
        .ml2b()
        .args(["--json", "query", "SELECT event_id FROM grade ORDER BY 1"])
        .output()
        .unwrap();
    json(&out)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["event_id"].to_string())
        .collect()
}

#[test]
fn grading_in_since_steps_equals_grading_once_and_verify_rerun_rederives_it() {
    let ws = toy();
    let ml2b = |ws: &crate::common::Workspace, args: &[&str]| {
        let out = ws.ml2b().args(args).output().unwrap();
        assert!(
            out.status.success() || args.contains(&"translate-validate"),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    ml2b(&ws, &["stage", "translate-validate"]);
    ml2b(&ws, &["stage", "generate", "--format", "modular"]);
    ml2b(&ws, &["stage", "execute"]);
    let log = json(&ml2b(&ws, &["--json", "log", "--stage", "execute"]));
    let first = log["stages"][0]["segments"][0]["hash"]
        .as_str()
        .unwrap()
        .to_string();
    ml2b(&ws, &["stage", "grade"]);
    let generated = json(&ml2b(&ws, &["--json", "log", "--stage", "generate"]));
    let first_generated = generated["stages"][0]["segments"][0]["hash"]
        .as_str()
        .unwrap()
        .to_string();
    ml2b(&ws, &["stage", "generate", "--format", "mono"]);
    let executed = json(&ml2b(
        &ws,
        &["--json", "stage", "execute", "--since", &first_generated],
    ));
    assert_eq!(
        executed["summary"]["planned"], 1,
        "only the code generated after the first segment"
    );
    let step = json(&ml2b(&ws, &["--json", "stage", "grade", "--since", &first]));
    assert_eq!(
        step["summary"]["planned"], 1,
        "only the run executed after the first segment"
    );
    // The same executions graded at once: a copy of the store without its grade log.
    let once = crate::common::Workspace::new();
    copy_dir(&ws.dir.path().join("store"), &once.dir.path().join("store"));
    for entry in ["manifests", "data"] {
        copy_dir(&ws.dir.path().join(entry), &once.dir.path().join(entry));
    }
    for dir in ["store/log/grade", "store/index/grade"] {
        let _ = std::fs::remove_dir_all(once.dir.path().join(dir));
    }
    ml2b(&once, &["stage", "grade"]);
    assert_eq!(grade_ids(&ws).len(), 2);
    // Both runs are the reference solution's: each is its own format's baseline run, so
    // r_p is exactly 1; the toy manifest records no range to check it against and no
    // AutoGluon run exists (JSON leaves the null columns out).
    let baselines = json(&ml2b(
        &ws,
        &[
            "--json",
            "query",
            "SELECT format, role, r_p, in_expected_range, automl_run, \
             baseline_run = array_element(upstream, 1) AS own FROM grade ORDER BY format",
        ],
    ));
    assert_eq!(
        baselines,
        serde_json::json!([
            {"format": "modular", "role": "reference", "r_p": 1.0, "own": true},
            {"format": "mono", "role": "reference", "r_p": 1.0, "own": true},
        ])
    );
    assert_eq!(
        grade_ids(&ws),
        grade_ids(&once),
        "steps and once give the same events"
    );

    let verified = json(&ml2b(&ws, &["--json", "verify", "--rerun"]));
    assert_eq!(verified["rerun"]["grade"]["events"], 2);
    assert_eq!(verified["rerun"]["grade"]["differ"].as_array().unwrap().len(), 0);
    // Change the private answers: the published grades no longer re-derive.
    let answers = ws.dir.path().join("data/toy/private/answers.csv");
    let text = std::fs::read_to_string(&answers).unwrap();
    let flipped = text.replacen(",no\n", ",yes\n", 1);
    assert_ne!(text, flipped);
    std::fs::write(&answers, flipped).unwrap();
    let out = ws.ml2b().args(["verify", "--rerun"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 events re-derived, 2 differ"));
    let bad_since = ws
        .ml2b()
        .args(["stage", "grade", "--since", &"0".repeat(64)])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&bad_since.stderr).contains("no execute segment has this hash"));
}

pub(crate) fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let dest = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}
