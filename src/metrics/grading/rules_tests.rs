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

/// new-york-city-taxi-fare-prediction's id is a timestamp written as text
/// (`2015-01-27 13:08:24.0000002`); pandas keeps it text, and so does the harness's Parquet of
/// predictions. Under V2 a CSV of answers keeps it text too, so the ids match; V1 typed it as
/// a timestamp, and every id of a harness run was missing.
#[test]
fn timestamp_ids_are_text_as_pandas_reads_them() {
    use std::sync::Arc;

    use arrow::array::{Float64Array, StringArray};

    let dir = tempfile::tempdir().unwrap();
    let ids = ["2015-01-27 13:08:24.0000002", "2011-08-18 00:35:00.00000049"];
    let answers = dir.path().join("answers.csv");
    std::fs::write(
        &answers,
        format!("key,fare_amount\n{},10.5\n{},7.0\n", ids[0], ids[1]),
    )
    .unwrap();
    let predictions = super::stream_tests::write(
        &dir.path().join("predictions.parquet"),
        vec![
            ("key", Arc::new(StringArray::from(ids.to_vec())) as _),
            ("fare_amount", Arc::new(Float64Array::from(vec![11.5, 7.0])) as _),
        ],
        2,
    );
    let grade = |rules| {
        let options = GradeOptions {
            id_col: "key".into(),
            targets: Some(vec!["fare_amount".into()]),
            rules,
            ..GradeOptions::default()
        };
        score_files_graded("rmse", &answers, &predictions, &options)
            .unwrap()
            .score
    };
    match grade(Rules::V2) {
        Score::Valid { score, .. } => assert!((score - 0.5f64.sqrt()).abs() < 1e-12, "{score}"),
        other => panic!("V2: {other:?}"),
    }
    assert!(
        matches!(grade(Rules::V1), Score::Invalid { .. }),
        "V1 stays as it was"
    );
}
