//! The streamed path (`stream`) against the in-memory one (`submission`): the same scores
//! bit for bit, and no verdict of its own on anything it cannot prove. Kept out of `stream`
//! because they need both paths, and `stream` must not depend on `submission`, its caller.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

use super::columns::GradeOptions;
use super::registry::Metric;
use super::stream::{BATCH_ROWS, score};
use super::submission::{Score, score_files_with, score_tables};
use super::table::read_table;

const ROWS: usize = 3 * BATCH_ROWS + 123;

/// A change to the predictions' columns.
type Edit<'e> = &'e dyn Fn(&mut Vec<(&'static str, ArrayRef)>);

/// Writes `columns` as Parquet with row groups of `group` rows.
pub(super) fn write(path: &Path, columns: Vec<(&str, ArrayRef)>, group: usize) -> PathBuf {
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(group))
        .build();
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(path).unwrap(), batch.schema(), Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    path.to_path_buf()
}

fn ids(n: usize) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values((0..n as i64).map(|i| 3 * i + 7)))
}

fn values(n: usize, salt: f64) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values(
        (0..n).map(|i| ((i as f64) * 0.618 + salt).sin() * 40.0 + 50.0),
    ))
}

struct Pair {
    _dir: tempfile::TempDir,
    answers: PathBuf,
    predictions: PathBuf,
}

/// Answers (id, target, weight, second) and predictions (id, target, second), with row
/// groups that end at different rows in the two files.
fn pair(edit: impl FnOnce(&mut Vec<(&'static str, ArrayRef)>)) -> Pair {
    let dir = tempfile::tempdir().unwrap();
    let answers = write(
        &dir.path().join("answers.parquet"),
        vec![
            ("id", ids(ROWS)),
            ("target", values(ROWS, 0.0)),
            ("weight", values(ROWS, 2.0)),
            ("second", values(ROWS, 4.0)),
        ],
        10_000,
    );
    let mut columns = vec![
        ("id", ids(ROWS)),
        ("target", values(ROWS, 0.3)),
        ("second", values(ROWS, 4.5)),
    ];
    edit(&mut columns);
    let predictions = write(&dir.path().join("predictions.parquet"), columns, 7_777);
    Pair {
        _dir: dir,
        answers,
        predictions,
    }
}

fn options(targets: Option<&[&str]>) -> GradeOptions {
    GradeOptions {
        targets: targets.map(|t| t.iter().map(|s| s.to_string()).collect()),
        ..GradeOptions::default()
    }
}

fn in_memory(metric: Metric, pair: &Pair, options: &GradeOptions) -> Score {
    let (answers, predictions) = (
        read_table(&pair.answers).unwrap(),
        read_table(&pair.predictions).unwrap(),
    );
    score_tables(metric, &answers, &predictions, options).unwrap()
}

#[test]
fn streamed_scores_are_the_in_memory_scores_bit_for_bit() {
    let pair = pair(|_| {});
    let cases: [(&str, Option<&[&str]>); 7] = [
        ("rmse", Some(&["target"])),
        ("mse", Some(&["target"])),
        ("mae", Some(&["target"])),
        ("rmsle", Some(&["target"])),
        ("wmae", Some(&["target"])),
        ("wmae_ml2b", Some(&["target"])),
        ("rmse_multi", Some(&["target", "second"])),
    ];
    for (name, targets) in cases {
        let metric: Metric = name.parse().unwrap();
        let options = options(targets);
        let streamed = score(metric, &pair.answers, &pair.predictions, &options)
            .unwrap_or_else(|| panic!("{name}: the streamed path gave up on a valid submission"))
            .score;
        let Score::Valid { score, .. } = in_memory(metric, &pair, &options) else {
            panic!("{name}: invalid in memory");
        };
        assert_eq!(
            streamed.to_bits(),
            score.to_bits(),
            "{name}: {streamed} vs {score}"
        );
    }
}

#[test]
fn the_single_other_column_is_the_prediction() {
    let pair = pair(|columns| {
        columns.retain(|(name, _)| *name != "second");
        columns[1].0 = "prediction";
    });
    let options = GradeOptions {
        targets: Some(vec!["target".into()]),
        ..GradeOptions::default()
    };
    assert!(score(Metric::Rmse, &pair.answers, &pair.predictions, &options).is_some());
}

/// Whatever the streamed path cannot prove, it leaves to the in-memory path.
#[test]
fn gives_up_on_anything_it_cannot_prove() {
    let target = options(Some(&["target"]));
    let reversed = |c: &mut Vec<(&'static str, ArrayRef)>| {
        let v: Vec<i64> = (0..ROWS as i64).rev().map(|i| 3 * i + 7).collect();
        c[0].1 = Arc::new(Int64Array::from(v));
        c[1].1 = values(ROWS, 0.3);
    };
    let late_nan = |c: &mut Vec<(&'static str, ArrayRef)>| {
        let mut v: Vec<f64> = (0..ROWS).map(|i| i as f64).collect();
        v[ROWS - 5] = f64::NAN;
        c[1].1 = Arc::new(Float64Array::from(v));
    };
    let late_null = |c: &mut Vec<(&'static str, ArrayRef)>| {
        let v: Vec<Option<f64>> = (0..ROWS)
            .map(|i| (i != 2 * BATCH_ROWS + 1).then_some(1.0))
            .collect();
        c[1].1 = Arc::new(Float64Array::from(v));
    };
    let duplicate_late_id = |c: &mut Vec<(&'static str, ArrayRef)>| {
        let v: Vec<i64> = (0..ROWS as i64)
            .map(|i| if i == ROWS as i64 - 1 { 7 } else { 3 * i + 7 })
            .collect();
        c[0].1 = Arc::new(Int64Array::from(v));
    };
    let text_values = |c: &mut Vec<(&'static str, ArrayRef)>| {
        c[1].1 = Arc::new(StringArray::from_iter_values((0..ROWS).map(|i| i.to_string())));
    };
    let short = |c: &mut Vec<(&'static str, ArrayRef)>| {
        for (_, column) in c.iter_mut() {
            *column = column.slice(0, ROWS - 1);
        }
    };
    let edits: [(&str, Edit); 6] = [
        ("ids in another order", &reversed),
        ("a NaN in the last batch", &late_nan),
        ("a null in the third batch", &late_null),
        ("a repeated id in the last row", &duplicate_late_id),
        ("text values", &text_values),
        ("one row short", &short),
    ];
    for (case, edit) in edits {
        let pair = pair(edit);
        assert_eq!(
            score(Metric::Rmse, &pair.answers, &pair.predictions, &target),
            None,
            "{case}"
        );
    }
    let pair = pair(|_| {});
    assert_eq!(
        score(Metric::R2, &pair.answers, &pair.predictions, &target),
        None,
        "r2 has no fold"
    );
    assert_eq!(
        score(Metric::Rmse, &pair.answers, &pair.predictions, &options(None)),
        None,
        "three targets"
    );
}

/// The public entry point gives the same result whichever path decides it.
#[test]
fn score_files_agrees_with_the_in_memory_path() {
    let target = options(Some(&["target"]));
    let reversed = pair(|c| {
        let v: Vec<i64> = (0..ROWS as i64).rev().map(|i| 3 * i + 7).collect();
        c[0].1 = Arc::new(Int64Array::from(v));
    });
    let nan = pair(|c| {
        let mut v: Vec<f64> = (0..ROWS).map(|i| i as f64).collect();
        v[ROWS - 5] = f64::NAN;
        c[1].1 = Arc::new(Float64Array::from(v));
    });
    let mut outcomes = Vec::new();
    for pair in [pair(|_| {}), reversed, nan] {
        let got = score_files_with("rmse", &pair.answers, &pair.predictions, &target).unwrap();
        // Display, not ==: a NaN in the reason is not equal to itself.
        assert_eq!(
            got.to_string(),
            in_memory(Metric::Rmse, &pair, &target).to_string()
        );
        outcomes.push(got.to_string());
    }
    assert!(outcomes[0].starts_with("rmse = "), "{}", outcomes[0]);
    assert_eq!(
        outcomes[2],
        format!(
            "invalid submission: column `target` row {}: NaN is not finite",
            ROWS - 4
        )
    );
}
