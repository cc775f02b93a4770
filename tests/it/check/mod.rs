//! `ml2b check` and its labelled corpus (`tests/fixtures/leakage/*.py`): every file's findings
//! (as a set of kinds) equal its `# expect:` header, except files marked `# known-gap:`, which
//! must still disagree (so a fixed gap gets unmarked). Also prints the leakage detector's
//! precision and recall (`cargo test --test it check:: -- --nocapture`).

mod corpus;

use corpus::{Metrics, load, report};
use ml2b::check::FindingKind;

use crate::common::Workspace;
#[test]
fn corpus_is_big_and_covers_both_formats_and_every_leakage_kind() {
    let cases = load();
    assert!(cases.len() >= 40, "only {} corpus files", cases.len());
    assert!(cases.iter().any(|c| c.format == ml2b::check::Format::Modular));
    assert!(cases.iter().any(|c| c.format == ml2b::check::Format::Mono));
    for kind in FindingKind::ALL {
        assert!(
            cases.iter().any(|c| c.expected.contains(&kind)),
            "no corpus file expects {kind}"
        );
    }
    assert!(
        cases
            .iter()
            .filter(|c| c.expected.iter().all(|k| !k.is_leakage()))
            .count()
            >= 15
    );
}

#[test]
fn corpus_findings_match_expectations() {
    let cases = load();
    let mut problems = Vec::new();
    for case in &cases {
        let found = case.found();
        match (&case.known_gap, found == case.expected) {
            (None, false) => problems.push(format!(
                "{}: expected {:?}, found {:?}",
                case.name, case.expected, found
            )),
            (Some(why), true) => problems.push(format!(
                "{}: marked `known-gap: {why}` but now matches; remove the marker",
                case.name
            )),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn leakage_precision_and_recall() {
    let cases = load();
    println!("{}", report(&cases));
    let metrics = Metrics::compute(cases.iter());
    // Every disagreement is in a file marked as a known gap (checked file by file above).
    for (file, _, _) in &metrics.errors {
        let case = cases.iter().find(|c| &c.name == file).unwrap();
        assert!(
            case.known_gap.is_some(),
            "{file} disagrees on a leakage kind without a known-gap marker"
        );
    }
}

#[test]
fn ml2b_check_prints_findings_with_lines_and_exits_1() {
    let ws = Workspace::new();
    let file = ws.dir.path().join("leaky.py");
    let leaky = "from sklearn.preprocessing import StandardScaler\nfrom sklearn.linear_model import LinearRegression\nimport requests\n\ndef train_and_predict(data, X_val):\n    X = data.drop(columns=['id', 'y'])\n    scaler = StandardScaler().fit(X_val.drop(columns=['id']))\n    model = LinearRegression().fit(scaler.transform(X), data['y'])\n    return model.predict(scaler.transform(X_val.drop(columns=['id'])))\n";
    std::fs::write(&file, leaky).unwrap();
    let out = ws
        .ml2b()
        .args(["--json", "check", "--format", "mono"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kinds: Vec<(&str, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap(), f["line"].as_u64().unwrap()))
        .collect();
    assert!(kinds.contains(&("network_import", 3)), "{kinds:?}");
    assert!(
        kinds.contains(&("leakage_preprocessing_on_validation", 7)),
        "{kinds:?}"
    );
    let clean = repo_solution("credit-risk", "mono");
    let out = ws
        .ml2b()
        .args(["check", "--format", "mono"])
        .arg(&clean)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .all(|l| !l.contains("leakage"))
    );
}

fn repo_solution(id: &str, format: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("data/{id}/solution/{format}.py"))
}
