//! The streamed path of the regression metrics: two Parquet files read in lockstep, a few
//! thousand rows at a time, with the metric folded in as the rows arrive.
//!
//! Reading whole columns of ten million rows costs more in fresh pages than the metric costs
//! in arithmetic; streaming keeps a handful of small buffers warm instead. Each file is
//! decoded on a thread of its own, a few batches ahead of this one, which checks and folds.
//!
//! The path only ever proves a submission valid. It resolves the same columns as the
//! in-memory path of `submission` ([`target_names`], [`prediction_name`]) and checks
//! what that path checks on the way: the same row count, integer ids with no nulls, strictly
//! increasing in the answers and the same in the predictions, and numeric, non-null values that
//! pass the metric's own checks ([`Fold::add`]). At the first thing it cannot prove (a CSV
//! file, a missing or duplicate column, text ids or values, ids in another order, a null, a
//! value the metric refuses, a decode error; an MLE-bench competition's `grade.py` checks,
//! `rules`) it returns `None`, and the caller grades in
//! memory, which names the exact fault. Its score is bit-identical to the in-memory score:
//! [`Fold`]'s sums are sequential, so chunking them changes nothing.

use std::path::Path;
use std::sync::mpsc::sync_channel;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::buffer::ScalarBuffer;
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type, Int64Type};
use arrow::error::ArrowError;
use bytes::Bytes;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use super::columns::{GradeOptions, prediction_name, target_names};
use super::registry::{InputKind, Metric};
use super::regression::{Fold, column_mean};
use super::table::{is_index_column, is_parquet, open};

type Builder = ParquetRecordBatchReaderBuilder<Bytes>;

/// Rows decoded per batch: small enough that every buffer is reused from the allocator's
/// free lists rather than freshly mapped.
pub(super) const BATCH_ROWS: usize = 1 << 14;

/// Batches of each file decoded ahead of the fold.
const READ_AHEAD: usize = 4;

/// The columns one file contributes.
struct Columns {
    id: String,
    /// One per target, in the targets' order.
    values: Vec<String>,
    /// The answers' weight column, for a weighted metric.
    weight: Option<String>,
}

/// A score the streamed path proved, and the predictions columns it did not read.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Streamed {
    pub score: f64,
    pub unused: Vec<String>,
}

/// The score of a valid submission, or `None` when the in-memory path must decide.
pub(super) fn score(
    metric: Metric,
    answers: &Path,
    predictions: &Path,
    options: &GradeOptions,
) -> Option<Streamed> {
    // An MLE-bench competition's own checks are the in-memory path's.
    if options.mle_bench().is_some() {
        return None;
    }
    let fold = Fold::new(metric)?;
    let answers = reader_builder(answers)?;
    let predictions = reader_builder(predictions)?;
    if answers.metadata().file_metadata().num_rows() != predictions.metadata().file_metadata().num_rows() {
        return None;
    }
    let (answer_cols, prediction_cols) = resolve(metric, &answers, &predictions, options)?;
    let unused: Vec<String> = names(&predictions)?
        .into_iter()
        .filter(|n| *n != prediction_cols.id && !prediction_cols.values.contains(n))
        .collect();
    let mut folds = vec![fold; answer_cols.values.len()];
    let answers = build(answers, &answer_cols)?;
    let predictions = build(predictions, &prediction_cols)?;
    std::thread::scope(|s| {
        let mut pair = Lockstep {
            answers: Chunks::new(read_ahead(s, answers)),
            predictions: Chunks::new(read_ahead(s, predictions)),
            last_id: None,
        };
        pair.fold(&answer_cols, &prediction_cols, &mut folds)
    })?;
    let score = finish(metric, folds)?;
    Some(Streamed { score, unused })
}

/// Decodes `reader` on a thread of its own, a few batches ahead of the caller; the thread
/// stops when the returned iterator is dropped.
fn read_ahead<'s>(
    scope: &'s std::thread::Scope<'s, '_>,
    reader: ParquetRecordBatchReader,
) -> impl Iterator<Item = Result<RecordBatch, ArrowError>> + use<> {
    let (tx, rx) = sync_channel(READ_AHEAD);
    scope.spawn(move || {
        for batch in reader {
            if tx.send(batch).is_err() {
                break;
            }
        }
    });
    rx.into_iter()
}

fn finish(metric: Metric, folds: Vec<Fold>) -> Option<f64> {
    let scores: Option<Vec<f64>> = folds.into_iter().map(|f| f.finish().ok()).collect();
    let scores = scores?;
    match metric.input_kind() {
        InputKind::MultiValues => Some(column_mean(&scores)),
        _ => scores.first().copied(),
    }
}

/// A reader over the file mapped into memory: pages are decoded straight from the page
/// cache, with no read, seek or file-handle clone per page. Like the log index, this relies
/// on the file not being truncated while it is read (answers and stored predictions never are).
fn reader_builder(path: &Path) -> Option<Builder> {
    let mut file = open(path).ok()?;
    if !is_parquet(path, &mut file).ok()? {
        return None;
    }
    // SAFETY: the map is only read, and the files graded are not modified while graded.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    ParquetRecordBatchReaderBuilder::try_new(Bytes::from_owner(map)).ok()
}

/// Column names as the in-memory table sees them (pandas' index columns dropped), or `None`
/// when one appears twice.
fn names(builder: &Builder) -> Option<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for field in builder.schema().fields() {
        let name = field.name();
        if is_index_column(name) {
            continue;
        }
        if names.contains(name) {
            return None;
        }
        names.push(name.clone());
    }
    Some(names)
}

/// The answer columns (id, targets, then the weight) and the prediction columns (id, then one
/// per target), resolved as the in-memory path resolves them.
fn resolve(
    metric: Metric,
    answers: &Builder,
    predictions: &Builder,
    options: &GradeOptions,
) -> Option<(Columns, Columns)> {
    let (answer_names, prediction_names) = (names(answers)?, names(predictions)?);
    let id = options.id_col.clone();
    let targets = target_names(metric, &answer_names, options);
    let predicted: Option<Vec<String>> = match metric.input_kind() {
        InputKind::MultiValues => {
            let all = targets.iter().all(|t| prediction_names.contains(t));
            all.then(|| targets.clone())
        }
        _ => match targets.as_slice() {
            [one] => prediction_name(one, &prediction_names, options).map(|p| vec![p.to_string()]),
            _ => None,
        },
    };
    let weight = (metric.input_kind() == InputKind::WeightedValues).then(|| options.weight_col.clone());
    let all_present = [&id]
        .into_iter()
        .chain(&targets)
        .chain(&weight)
        .all(|c| answer_names.contains(c))
        && prediction_names.contains(&id);
    all_present.then_some(())?;
    let answers = Columns {
        id: id.clone(),
        values: targets,
        weight,
    };
    let predictions = Columns {
        id,
        values: predicted?,
        weight: None,
    };
    Some((answers, predictions))
}

/// A reader of just `columns`.
fn build(builder: Builder, columns: &Columns) -> Option<ParquetRecordBatchReader> {
    let wanted = |name: &String| {
        *name == columns.id || columns.values.contains(name) || columns.weight.as_ref() == Some(name)
    };
    let roots: Vec<usize> = builder
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| wanted(f.name()))
        .map(|(i, _)| i)
        .collect();
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    builder
        .with_projection(mask)
        .with_batch_size(BATCH_ROWS)
        .build()
        .ok()
}

/// A stream of batches read as row ranges of any length.
struct Chunks<I> {
    batches: I,
    current: Option<RecordBatch>,
    offset: usize,
}

impl<I: Iterator<Item = Result<RecordBatch, ArrowError>>> Chunks<I> {
    fn new(batches: I) -> Self {
        Self {
            batches,
            current: None,
            offset: 0,
        }
    }

    /// Rows left in the current batch, reading the next batch when it is spent: 0 at the
    /// end, `None` on a decode error.
    fn available(&mut self) -> Option<usize> {
        loop {
            if let Some(batch) = &self.current
                && self.offset < batch.num_rows()
            {
                return Some(batch.num_rows() - self.offset);
            }
            match self.batches.next() {
                None => return Some(0),
                Some(Ok(batch)) => (self.current, self.offset) = (Some(batch), 0),
                Some(Err(_)) => return None,
            }
        }
    }

    /// The next `rows` rows (no more than [`Self::available`]).
    fn take(&mut self, rows: usize) -> RecordBatch {
        let batch = self
            .current
            .as_ref()
            .expect("available rows")
            .slice(self.offset, rows);
        self.offset += rows;
        batch
    }
}

/// Answers and predictions walked together, row range by row range.
struct Lockstep<A, P> {
    answers: Chunks<A>,
    predictions: Chunks<P>,
    /// The last answer id seen, to check that the ids increase across ranges.
    last_id: Option<i64>,
}

impl<A, P> Lockstep<A, P>
where
    A: Iterator<Item = Result<RecordBatch, ArrowError>>,
    P: Iterator<Item = Result<RecordBatch, ArrowError>>,
{
    /// Folds every row; `None` at the first row the streamed path cannot prove valid.
    fn fold(&mut self, answer_cols: &Columns, prediction_cols: &Columns, folds: &mut [Fold]) -> Option<()> {
        loop {
            let (a, p) = (self.answers.available()?, self.predictions.available()?);
            if a == 0 || p == 0 {
                return (a == p).then_some(());
            }
            let rows = a.min(p);
            let (answers, predictions) = (self.answers.take(rows), self.predictions.take(rows));
            self.check_ids(&answers, &predictions, &answer_cols.id)?;
            fold_range(&answers, &predictions, answer_cols, prediction_cols, folds)?;
        }
    }

    /// The answer ids increase strictly (so they are unique) and the predictions list them in
    /// the same order.
    fn check_ids(&mut self, answers: &RecordBatch, predictions: &RecordBatch, id: &str) -> Option<()> {
        let (a, p) = (ids(answers, id)?, ids(predictions, id)?);
        let first_ok = match (self.last_id, a.first()) {
            (Some(last), Some(&first)) => last < first,
            _ => true,
        };
        let increasing = first_ok && a.windows(2).all(|w| w[0] < w[1]);
        (increasing && a[..] == p[..]).then_some(())?;
        self.last_id = a.last().copied().or(self.last_id);
        Some(())
    }
}

fn fold_range(
    answers: &RecordBatch,
    predictions: &RecordBatch,
    answer_cols: &Columns,
    prediction_cols: &Columns,
    folds: &mut [Fold],
) -> Option<()> {
    let weights = match &answer_cols.weight {
        Some(weight) => Some(floats(answers, weight)?),
        None => None,
    };
    for (i, fold) in folds.iter_mut().enumerate() {
        let y_true = floats(answers, &answer_cols.values[i])?;
        let y_pred = floats(predictions, &prediction_cols.values[i])?;
        fold.add(&y_true, &y_pred, weights.as_deref()).ok()?;
    }
    Some(())
}

fn column<'b>(batch: &'b RecordBatch, name: &str) -> Option<&'b dyn Array> {
    let column = batch.column_by_name(name)?;
    (column.null_count() == 0).then_some(column.as_ref())
}

/// An integer id column as `i64`.
fn ids(batch: &RecordBatch, name: &str) -> Option<ScalarBuffer<i64>> {
    let column = column(batch, name)?;
    if !column.data_type().is_integer() {
        return None;
    }
    let ints = cast(column, &DataType::Int64).ok()?;
    Some(ints.as_primitive::<Int64Type>().values().clone())
}

/// A numeric value column as `f64` (shared with the batch when it holds `f64`).
fn floats(batch: &RecordBatch, name: &str) -> Option<ScalarBuffer<f64>> {
    let column = column(batch, name)?;
    let numeric = column.data_type().is_integer() || column.data_type().is_floating();
    if !numeric {
        return None;
    }
    let values = cast(column, &DataType::Float64).ok()?;
    Some(values.as_primitive::<Float64Type>().values().clone())
}
