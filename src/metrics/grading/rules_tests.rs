//! The grading rules V2 against `tests/reference/grading_rules.py`: each case's files are
//! graded as the references read and score them (pandas, scikit-learn, ML2B's `apk`), and
//! the same files under rules V1 keep the verdict grade events of schema 2 and 3 recorded.

use serde_json::Value;

use super::columns::GradeOptions;
use super::rules::Rules;
use super::submission::{Score, score_files_graded};

const FIXTURE: &str = include_str!("../../../tests/fixtures/grading_rules.json");

fn fixture() -> Value {
    serde_json::from_str(FIXTURE).expect("fixture is JSON")
}

/// The verdict, or the grading error's text (not the submission's fault).
fn grade(case: &Value, rules: Rules, dir: &std::path::Path) -> Result<Score, String> {
    let write = |name: &str, key: &str| {
        let path = dir.join(name);
        std::fs::write(&path, case[key].as_str().unwrap()).unwrap();
        path
    };
    let (answers, predictions) = (
        write("answers.csv", "answers_csv"),
        write("predictions.csv", "predictions_csv"),
    );
    let targets = case["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    let options = GradeOptions {
        id_col: case["id_col"].as_str().unwrap().to_string(),
        targets: Some(targets),
        rules,
        ..GradeOptions::default()
    };
    let metric = case["metric"].as_str().unwrap();
    score_files_graded(metric, &answers, &predictions, &options)
        .map(|graded| graded.score)
        .map_err(|e| format!("{e:#}"))
}

/// Whether `score` is the reference's verdict: its value to 1e-9, or invalid where it raised
/// or warned that the rows are not probabilities.
fn agrees(score: &Result<Score, String>, case: &Value) -> bool {
    let Ok(score) = score else { return false };
    match (case["outcome"].as_str().unwrap(), score) {
        ("value", Score::Valid { score, .. }) => {
            let expected = case["value"].as_f64().unwrap();
            (score - expected).abs() <= 1e-9 * expected.abs().max(1.0)
        }
        ("error" | "warns", Score::Invalid { .. }) => true,
        _ => false,
    }
}

#[test]
fn rules_v2_give_the_references_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    for case in fixture()["cases"].as_array().unwrap() {
        let score = grade(case, Rules::V2, dir.path());
        assert!(
            agrees(&score, case),
            "{}: ml2b {score:?}, reference {} {} ({})",
            case["name"],
            case["outcome"],
            case["value"],
            case["message"]
        );
    }
}

/// The defects V2 fixes (issue 43 items 3, 6, 8 and 9), as V1 graded them: every class at 1
/// won with log loss ε, a boolean answer against a text cell scored 0, a stray text rating
/// was valid (or, for Kaggle's kappa, an error blamed on the answers), ids with a space were
/// missing, `map_ml2b` read tokens. V1 stays what it was.
#[test]
fn rules_v1_keep_the_verdicts_of_old_grade_events() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = fixture();
    let differ: Vec<&str> = fixture["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|case| !agrees(&grade(case, Rules::V1, dir.path()), case))
        .map(|case| case["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        differ,
        [
            "log_loss_all_ones",
            "log_loss_rounded_6",
            "log_loss_halves",
            "one_hot_all_ones",
            "bool_answers_text_prediction",
            "qwk_stray_label",
            "qwk_kaggle_stray_label",
            "leading_space_ids",
            "padded_ids",
            "plus_sign_ids",
            "leading_space_ids_labels",
            "map_ml2b_substrings",
        ]
    );
}
