//! Every metric against the reference values of `tests/reference/grade_stats.py`
//! (scikit-learn 1.9.1, Kaggle's `ml_metrics` and ML2B's functions transcribed), to 1e-9.
//!
//! Inputs go through the same Arrow arrays a file would give: labels as `Int64Array` or
//! `StringArray`, label lists as space-separated strings, numbers as `Float64Array`.

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
use serde_json::Value;

use super::columns::GradeOptions;
use super::labels::{self, Label, LabelLists, LabelPairs};
use super::metric_error::MetricError;
use super::probabilistic::ClassScores;
use super::registry::Metric;
use super::submission::{Score, score_files_with};
use super::{classification, kappa, probabilistic, ranking, regression};

const FIXTURE: &str = include_str!("../../../tests/fixtures/grade_stats.json");
const TOLERANCE: f64 = 1e-9;

fn fixture() -> Value {
    serde_json::from_str(FIXTURE).expect("fixture is JSON")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

fn label_array(v: &Value) -> ArrayRef {
    let items = v.as_array().expect("array");
    if items.iter().all(Value::is_i64) {
        Arc::new(Int64Array::from(
            items.iter().map(|x| x.as_i64().unwrap()).collect::<Vec<_>>(),
        ))
    } else {
        Arc::new(StringArray::from(
            items
                .iter()
                .map(|x| x.as_str().expect("label").to_string())
                .collect::<Vec<_>>(),
        ))
    }
}

fn list_array(v: &Value) -> ArrayRef {
    let rows = v.as_array().expect("array").iter().map(|row| {
        let tokens: Vec<&str> = row
            .as_array()
            .expect("list")
            .iter()
            .map(|t| t.as_str().expect("token"))
            .collect();
        tokens.join(" ")
    });
    Arc::new(StringArray::from(rows.collect::<Vec<_>>()))
}

fn class_label(v: &Value) -> Label {
    match v.as_i64() {
        Some(i) => Label::Int(i),
        None => Label::Text(v.as_str().expect("label").to_string()),
    }
}

fn eval_values(metric: Metric, input: &Value) -> Result<f64, MetricError> {
    let y_true = Float64Array::from(floats(&input["y_true"]));
    let y_pred = Float64Array::from(floats(&input["y_pred"]));
    let weights = input.get("weights").map(floats);
    regression::score_values(metric, y_true.values(), y_pred.values(), weights.as_deref())
}

fn eval_multi(metric: Metric, input: &Value) -> Result<f64, MetricError> {
    let columns = |key: &str| {
        input[key]
            .as_array()
            .expect("columns")
            .iter()
            .map(floats)
            .collect::<Vec<_>>()
    };
    let (t, p) = (columns("y_true"), columns("y_pred"));
    let t: Vec<&[f64]> = t.iter().map(Vec::as_slice).collect();
    let p: Vec<&[f64]> = p.iter().map(Vec::as_slice).collect();
    regression::score_multi(metric, &t, &p)
}

fn eval_labels(metric: Metric, input: &Value) -> Result<f64, MetricError> {
    let pairs = LabelPairs::from_arrays(
        label_array(&input["y_true"]).as_ref(),
        label_array(&input["y_pred"]).as_ref(),
    )
    .expect("labels");
    match metric {
        Metric::Qwk(form) => kappa::quadratic_weighted_kappa(&pairs, form),
        _ => classification::score_labels(metric, &pairs),
    }
}

fn eval_lists(metric: Metric, input: &Value) -> Result<f64, MetricError> {
    let lists = LabelLists::from_arrays(
        list_array(&input["y_true"]).as_ref(),
        list_array(&input["y_pred"]).as_ref(),
    )
    .expect("lists");
    match metric {
        Metric::Map(form) => ranking::mean_average_precision(&lists, form),
        Metric::FbetaMicro(beta) => classification::fbeta_micro(&lists, beta),
        Metric::F1MicroKnown => classification::f1_micro_known(&lists),
        Metric::Top1Error => classification::top1_error(&lists),
        _ => classification::f1_samples(&lists),
    }
}

fn eval_probabilities(metric: Metric, input: &Value) -> Result<f64, MetricError> {
    let classes: Vec<Label> = input["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .map(class_label)
        .collect();
    let column = labels::label_column(label_array(&input["y_true"]).as_ref()).expect("labels");
    let y_true = labels::encode_against(&classes, &column).expect("known labels");
    let columns: Vec<Float64Array> = input["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| Float64Array::from(floats(c)))
        .collect();
    let slices: Vec<&[f64]> = columns.iter().map(|c| c.values().as_ref()).collect();
    let scores = ClassScores {
        y_true: &y_true,
        n_classes: classes.len(),
        columns: &slices,
    };
    probabilistic::score_probabilities(metric, &scores)
}

fn evaluate(case: &Value) -> Result<f64, MetricError> {
    let metric: Metric = case["metric"].as_str().unwrap().parse().expect("known metric");
    let input = &case["input"];
    match case["kind"].as_str().unwrap() {
        "values" => eval_values(metric, input),
        "multi" => eval_multi(metric, input),
        "labels" => eval_labels(metric, input),
        "lists" => eval_lists(metric, input),
        "probabilities" => eval_probabilities(metric, input),
        other => panic!("unknown kind {other}"),
    }
}

/// Checks one outcome; returns the absolute difference for values.
fn check(name: &str, case: &Value, got: Result<f64, String>, undefined: bool) -> f64 {
    match (case["outcome"].as_str().unwrap(), got) {
        ("value", Ok(v)) => {
            let expected = case["expected"].as_f64().unwrap();
            let diff = (v - expected).abs();
            assert!(
                diff <= TOLERANCE * expected.abs().max(1.0),
                "{name}: got {v}, expected {expected} (diff {diff:e})"
            );
            diff
        }
        ("undefined", Err(e)) => {
            assert!(
                undefined,
                "{name}: reference gives NaN, expected an Undefined error, got {e}"
            );
            0.0
        }
        ("error", Err(_)) => 0.0,
        (outcome, got) => panic!(
            "{name}: reference outcome {outcome} ({}), got {got:?}",
            case["message"]
        ),
    }
}

#[test]
fn metrics_match_reference() {
    let fixture = fixture();
    let cases = fixture["metrics"].as_array().unwrap();
    let mut max_diff = 0.0f64;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let got = evaluate(case);
        let undefined = matches!(got, Err(MetricError::Undefined { .. }));
        max_diff = max_diff.max(check(name, case, got.map_err(|e| e.to_string()), undefined));
    }
    eprintln!("{} metric cases, max abs diff {max_diff:e}", cases.len());
}

fn write_case_file(name: &str, suffix: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gradestats-reference-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}-{suffix}.csv", name.replace(['/', '@'], "_")));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn files_match_reference() {
    let fixture = fixture();
    let cases = fixture["files"].as_array().unwrap();
    let mut max_diff = 0.0f64;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let answers = write_case_file(name, "answers", case["answers_csv"].as_str().unwrap());
        let predictions = write_case_file(name, "predictions", case["predictions_csv"].as_str().unwrap());
        let mut options = GradeOptions::default();
        if let Some(w) = case["options"].get("weight_col").and_then(Value::as_str) {
            options.weight_col = w.to_string();
        }
        let got = match score_files_with(case["metric"].as_str().unwrap(), &answers, &predictions, &options) {
            Ok(Score::Valid { score, .. }) => Ok(score),
            Ok(Score::Invalid { reason }) => Err(reason.to_string()),
            Err(e) => Err(e.to_string()),
        };
        max_diff = max_diff.max(check(name, case, got, false));
    }
    eprintln!("{} file cases, max abs diff {max_diff:e}", cases.len());
}
