//! One test per reason a submission is invalid, and for the errors that are not the
//! submission's fault (unreadable files, bad answers, undefined metrics).

use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{Float64Array, Int64Array, RecordBatch};
use parquet::arrow::ArrowWriter;

use super::invalid::Invalid;
use super::submission::{GradeError, Score, score_files};

struct Dir(PathBuf);

impl Dir {
    fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("gradestats-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const ANSWERS: &str = "id,target\n1,1.0\n2,2.0\n3,3.0\n";
const LABELS: &str = "id,label\na,0\nb,1\nc,2\nd,1\n";

fn score(test: &str, metric: &str, answers: &str, predictions: &str) -> Result<Score, GradeError> {
    let dir = Dir::new(test);
    score_files(
        metric,
        &dir.file("answers.csv", answers),
        &dir.file("predictions.csv", predictions),
        "id",
    )
}

fn invalid(test: &str, metric: &str, answers: &str, predictions: &str) -> Invalid {
    match score(test, metric, answers, predictions) {
        Ok(Score::Invalid { reason }) => reason,
        other => panic!("{test}: expected an invalid submission, got {other:?}"),
    }
}

#[test]
fn valid_submission_scores_and_serialises() {
    let s = score("valid", "rmse", ANSWERS, "id,target\n3,3.0\n1,1.0\n2,2.0\n").unwrap();
    assert_eq!(
        s,
        Score::Valid {
            metric: "rmse".into(),
            score: 0.0
        }
    );
    assert_eq!(
        serde_json::to_string(&s).unwrap(),
        r#"{"metric":"rmse","score":0.0,"valid":true}"#
    );
}

#[test]
fn invalid_serialises_with_reason() {
    let s = Score::Invalid {
        reason: Invalid::RowCount { expected: 3, got: 2 },
    };
    assert_eq!(
        serde_json::to_string(&s).unwrap(),
        r#"{"valid":false,"reason":"expected 3 rows, got 2"}"#
    );
}

#[test]
fn wrong_row_count() {
    let r = invalid("rows", "rmse", ANSWERS, "id,target\n1,1.0\n2,2.0\n");
    assert_eq!(r, Invalid::RowCount { expected: 3, got: 2 });
    let r = invalid("rows-more", "rmse", ANSWERS, "id,target\n1,1\n2,2\n3,3\n4,4\n");
    assert_eq!(r, Invalid::RowCount { expected: 3, got: 4 });
}

#[test]
fn missing_id_column() {
    let r = invalid("no-id", "rmse", ANSWERS, "key,target\n1,1\n2,2\n3,3\n");
    assert_eq!(r, Invalid::MissingColumn("id".into()));
}

#[test]
fn duplicate_id() {
    let r = invalid("dup", "rmse", ANSWERS, "id,target\n1,1\n2,2\n1,3\n");
    assert_eq!(
        r,
        Invalid::DuplicateId {
            column: "id".into(),
            id: "1".into(),
            first: 1,
            second: 3
        }
    );
}

#[test]
fn missing_and_unknown_ids() {
    let r = invalid("missing", "rmse", ANSWERS, "id,target\n1,1\n2,2\n7,3\n");
    assert_eq!(
        r,
        Invalid::MissingIds {
            column: "id".into(),
            count: 1,
            first: "3".into(),
            unknown: Some("7".into())
        }
    );
}

#[test]
fn text_and_integer_ids_compare_as_text() {
    let s = score("mixed-ids", "rmse", ANSWERS, "id,target\n1,1\n2,2\nx3,3\n").unwrap();
    assert!(
        matches!(
            s,
            Score::Invalid {
                reason: Invalid::MissingIds { .. }
            }
        ),
        "{s:?}"
    );
}

#[test]
fn non_numeric_value() {
    let r = invalid("text", "rmse", ANSWERS, "id,target\n1,1.0\n2,abc\n3,3.0\n");
    assert_eq!(
        r,
        Invalid::NotNumeric {
            column: "target".into(),
            row: 2,
            value: "abc".into()
        }
    );
}

#[test]
fn nan_and_empty_values() {
    let r = invalid("nan", "rmse", ANSWERS, "id,target\n1,1.0\n2,NaN\n3,3.0\n");
    assert!(matches!(r, Invalid::NotFinite { row: 2, .. }), "{r:?}");
    let r = invalid("empty", "rmse", ANSWERS, "id,target\n1,1.0\n2,\n3,3.0\n");
    assert_eq!(
        r,
        Invalid::EmptyValue {
            column: "target".into(),
            row: 2
        }
    );
}

#[test]
fn probability_out_of_range() {
    let answers = "id,y\n1,0\n2,1\n3,1\n";
    let r = invalid("range", "log_loss", answers, "id,p\n1,0.2\n2,1.5\n3,0.9\n");
    assert_eq!(
        r,
        Invalid::OutOfRange {
            column: "p".into(),
            row: 2,
            value: 1.5
        }
    );
}

#[test]
fn binary_auc_accepts_any_finite_score() {
    let s = score(
        "logits",
        "roc_auc",
        "id,y\n1,0\n2,1\n3,1\n",
        "id,p\n1,-3.5\n2,7\n3,2\n",
    )
    .unwrap();
    assert_eq!(
        s,
        Score::Valid {
            metric: "roc_auc".into(),
            score: 1.0
        }
    );
}

#[test]
fn wrong_class_columns() {
    let r = invalid(
        "classes",
        "log_loss",
        LABELS,
        "id,0,1\na,0.5,0.5\nb,0.5,0.5\nc,0.5,0.5\nd,0.5,0.5\n",
    );
    assert_eq!(
        r,
        Invalid::ClassColumns {
            expected: vec!["0".into(), "1".into(), "2".into()],
            got: vec!["0".into(), "1".into()]
        }
    );
    let r = invalid(
        "classes-name",
        "log_loss",
        LABELS,
        "id,0,1,3\na,.2,.3,.5\nb,.2,.3,.5\nc,.2,.3,.5\nd,.2,.3,.5\n",
    );
    assert!(matches!(r, Invalid::ClassColumns { .. }), "{r:?}");
}

#[test]
fn multiclass_rows_must_sum_to_one() {
    let r = invalid(
        "sum",
        "roc_auc_ovr",
        LABELS,
        "id,0,1,2\na,.2,.3,.5\nb,.2,.3,.6\nc,.2,.3,.5\nd,.2,.3,.5\n",
    );
    assert!(matches!(r, Invalid::RowSum { row: 2, .. }), "{r:?}");
}

#[test]
fn continuous_value_is_not_a_label() {
    let r = invalid("label", "accuracy", LABELS, "id,label\na,0\nb,1.5\nc,2\nd,1\n");
    assert_eq!(
        r,
        Invalid::NotALabel {
            column: "label".into(),
            row: 2,
            value: "1.5".into()
        }
    );
}

#[test]
fn missing_target_column_in_multi_target() {
    let answers = "id,a,b\n1,1,2\n2,3,4\n";
    let r = invalid("multi", "rmse_multi", answers, "id,a,c\n1,1,2\n2,3,4\n");
    assert_eq!(r, Invalid::MissingColumn("b".into()));
}

#[test]
fn third_label_in_binary_f1_is_invalid() {
    let r = invalid("f1", "f1", "id,y\n1,0\n2,1\n3,1\n", "id,y\n1,0\n2,1\n3,2\n");
    assert!(matches!(r, Invalid::Metric(_)), "{r:?}");
}

#[test]
fn unknown_metric_is_an_error() {
    let e = score("unknown", "auc", ANSWERS, ANSWERS).unwrap_err();
    assert!(matches!(e, GradeError::UnknownMetric(_)), "{e}");
}

#[test]
fn unreadable_files_name_the_file() {
    let dir = Dir::new("unreadable");
    let answers = dir.file("answers.csv", ANSWERS);
    let e = score_files("rmse", &answers, &dir.0.join("nope.csv"), "id").unwrap_err();
    assert!(
        matches!(e, GradeError::Read(_)) && e.to_string().contains("nope.csv"),
        "{e}"
    );
    // Ragged answers are an error naming the file; ragged predictions are the submission's
    // fault: invalid, with the parser's reason (and no path, which differs between machines).
    let ragged = dir.file("ragged.csv", "id,target\n1,1\n2,2,9\n3,3\n");
    let e = score_files("rmse", &ragged, &answers, "id").unwrap_err();
    assert!(e.to_string().contains("ragged.csv"), "{e}");
    let s = score_files("rmse", &answers, &ragged, "id").unwrap();
    let Score::Invalid {
        reason: Invalid::Unreadable(why),
    } = &s
    else {
        panic!("{s:?}")
    };
    assert!(why.contains("line 3") && !why.contains("ragged.csv"), "{why}");
}

#[test]
fn duplicate_answer_ids_are_the_answers_fault() {
    let e = score(
        "answers-dup",
        "rmse",
        "id,target\n1,1\n1,2\n",
        "id,target\n1,1\n2,2\n",
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            GradeError::Answers {
                reason: Invalid::DuplicateId { .. },
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn one_class_auc_is_an_error_not_invalid() {
    let e = score("one-class", "roc_auc", "id,y\n1,1\n2,1\n", "id,p\n1,0.2\n2,0.9\n").unwrap_err();
    assert!(matches!(e, GradeError::Metric { .. }), "{e}");
}

#[test]
fn parquet_files_are_read() {
    let dir = Dir::new("parquet");
    let write = |name: &str, values: Vec<f64>| {
        let path = dir.0.join(name);
        let ids = Arc::new(Int64Array::from(vec![1, 2, 3]));
        let batch = RecordBatch::try_from_iter([
            ("id", ids as _),
            ("target", Arc::new(Float64Array::from(values)) as _),
        ])
        .unwrap();
        let mut writer =
            ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        path
    };
    let answers = write("answers.parquet", vec![1.0, 2.0, 3.0]);
    let predictions = write("predictions.parquet", vec![1.0, 2.0, 5.0]);
    let s = score_files("mae", &answers, &predictions, "id").unwrap();
    assert_eq!(
        s,
        Score::Valid {
            metric: "mae".into(),
            score: 2.0 / 3.0
        }
    );
}
