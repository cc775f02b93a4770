//! ml2b's native grading of MLE-bench competitions against `tests/reference/mle_bench_grades.py`:
//! each case is an answers file and a submission in the competition's layout, the score its
//! `grade.py` computes with scikit-learn / scipy, and the metric [`mle_bench_competition_grader`]
//! maps it to. ml2b grades the same files, with the case's id column and targets, to 1e-9.

use std::collections::HashSet;

use serde_json::Value;

use super::columns::GradeOptions;
use super::mle_bench::{
    MLE_BENCH_COMPETITION_GRADERS, MLE_BENCH_GRADERS, MleGrader, mle_bench_competition_grader,
};
use super::submission::{Score, score_files_graded};

const FIXTURE: &str = include_str!("../../../tests/fixtures/mle_bench_grades.json");
const TOLERANCE: f64 = 1e-9;

fn cases() -> Vec<Value> {
    let doc: Value = serde_json::from_str(FIXTURE).expect("fixture is JSON");
    doc["cases"].as_array().expect("cases").clone()
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn native_graders_match_mle_bench() {
    let dir = tempfile::tempdir().unwrap();
    let mut max_diff = 0.0f64;
    let cases = cases();
    for case in &cases {
        let competition = case["competition"].as_str().unwrap();
        let grader = case["grader"].as_str().unwrap();
        let metric = case["metric"].as_str().unwrap();
        let MleGrader::Native { metric: mapped, .. } = mle_bench_competition_grader(competition, grader)
        else {
            panic!("{competition}: `{grader}` is not graded natively");
        };
        assert_eq!(mapped.to_string(), metric, "{competition}");
        let answers = write(
            dir.path(),
            &format!("{competition}-answers.csv"),
            case["answers_csv"].as_str().unwrap(),
        );
        let predictions = write(
            dir.path(),
            &format!("{competition}-submission.csv"),
            case["predictions_csv"].as_str().unwrap(),
        );
        let targets: Vec<String> = case["targets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect();
        let options = GradeOptions {
            id_col: case["id_col"].as_str().unwrap().to_string(),
            targets: Some(targets),
            ..GradeOptions::default()
        };
        let graded = score_files_graded(metric, &answers, &predictions, &options)
            .unwrap_or_else(|e| panic!("{competition}: {e:#}"));
        let Score::Valid { score, .. } = graded.score else {
            panic!("{competition}: {:?}", graded.score);
        };
        let expected = case["expected"].as_f64().unwrap();
        let diff = (score - expected).abs();
        assert!(
            diff <= TOLERANCE * expected.abs().max(1.0),
            "{competition} ({metric}): got {score}, grade.py {expected} (diff {diff:e})"
        );
        max_diff = max_diff.max(diff);
        let extra = case["predictions_csv"]
            .as_str()
            .unwrap()
            .starts_with("Unnamed: 0,");
        assert_eq!(
            graded.warnings.len(),
            usize::from(extra),
            "{competition}: {:?}",
            graded.warnings
        );
    }
    eprintln!("{} MLE-bench cases, max abs diff {max_diff:e}", cases.len());
}

/// Every native mapping, by name or per competition, has a case for one of its competitions.
#[test]
fn every_native_mapping_is_checked() {
    let checked: HashSet<String> = cases()
        .iter()
        .map(|c| c["competition"].as_str().unwrap().to_string())
        .collect();
    for g in MLE_BENCH_GRADERS {
        if let MleGrader::Native { .. } = g.grading {
            assert!(
                g.competitions.iter().any(|c| checked.contains(*c)),
                "`{}` has no reference case",
                g.name
            );
        }
    }
    let mut per_metric: HashSet<String> = HashSet::new();
    for (competition, grading) in MLE_BENCH_COMPETITION_GRADERS {
        if let MleGrader::Native { metric, .. } = grading
            && checked.contains(*competition)
        {
            per_metric.insert(metric.to_string());
        }
    }
    for (_, grading) in MLE_BENCH_COMPETITION_GRADERS {
        if let MleGrader::Native { metric, .. } = grading {
            assert!(
                per_metric.contains(&metric.to_string()),
                "{metric} has no reference case"
            );
        }
    }
}

const VALIDITY: &str = include_str!("../../../tests/fixtures/mle_bench_validity.json");

/// ml2b's verdict on one variant, as the validity test compares it.
fn verdict(graded: &super::submission::Graded) -> (bool, Option<f64>) {
    match graded.score {
        Score::Valid { score, .. } => (true, Some(score)),
        Score::Invalid { .. } => (false, None),
    }
}

/// MLE-bench's own `grade.py` on malformed submissions (`tests/reference/mle_bench_validity.py`):
/// ml2b, with the competition's checks (`rules::mle_bench_checks`, rules V2), gives the same
/// validity and score on every variant, except where it reports a departure, and there the
/// verdicts differ. A NaN score that `grade.py` reports as valid counts as a departure.
#[test]
fn native_graders_agree_with_mle_bench_on_malformed_submissions() {
    let doc: Value = serde_json::from_str(VALIDITY).expect("fixture is JSON");
    let dir = tempfile::tempdir().unwrap();
    let (mut agreed, mut departed, mut wrong) = (0, 0, Vec::new());
    for c in doc["competitions"].as_array().unwrap() {
        let competition = c["competition"].as_str().unwrap();
        let metric = c["metric"].as_str().unwrap();
        let answers = write(
            dir.path(),
            &format!("{competition}.csv"),
            c["answers_csv"].as_str().unwrap(),
        );
        let targets: Vec<String> = c["targets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect();
        let options = GradeOptions {
            id_col: c["id_col"].as_str().unwrap().to_string(),
            targets: Some(targets),
            mle_bench: Some(super::rules::mle_bench_checks(competition)),
            ..GradeOptions::default()
        };
        for v in c["variants"].as_array().unwrap() {
            let variant = v["variant"].as_str().unwrap();
            let predictions = write(
                dir.path(),
                "submission.csv",
                v["predictions_csv"].as_str().unwrap(),
            );
            let graded = score_files_graded(metric, &answers, &predictions, &options)
                .unwrap_or_else(|e| panic!("{competition} {variant}: {e:#}"));
            let (valid, score) = verdict(&graded);
            let nan = v["nan_score"].as_bool().unwrap();
            let expected = (v["valid"].as_bool().unwrap() && !nan, v["score"].as_f64());
            let same = valid == expected.0
                && match (score, expected.1) {
                    (Some(a), Some(b)) => (a - b).abs() <= TOLERANCE * b.abs().max(1.0),
                    (None, None) => true,
                    _ => false,
                };
            let same = same && !nan;
            match (same, &graded.departure) {
                (true, None) => agreed += 1,
                (false, Some(_)) => departed += 1,
                _ => wrong.push(format!(
                    "{competition} {variant}: ml2b {:?} (departure {:?}), grade.py valid {} score {:?}{}",
                    graded.score,
                    graded.departure,
                    v["valid"],
                    v["score"].as_f64(),
                    if nan { " (NaN)" } else { "" }
                )),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} disagreements:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    eprintln!("MLE-bench validity: {agreed} cases agree, {departed} depart (documented)");
}
