//! Scoring a submission file against an answers file.
//!
//! Answers: an id column (default `id`) plus the target column(s); for `wmae` also a weight
//! column (default `weight`). The targets are [`GradeOptions::targets`] when given (`ml2b
//! score --target`), else every answers column but the id (and the weight); other answers
//! columns (features) are then not read. Predictions: the id column plus
//! * one column per target (regression, labels), matched by name, or the single non-id
//!   column for a single-target metric;
//! * for `roc_auc*` and `log_loss` over a label column, one column per class named by its
//!   label, or, for a binary task, a single column with the probability of the positive
//!   (larger) label (the column named as the target, else the only non-id column);
//! * for `log_loss` over one-hot answers (several target columns, one 0/1 column per class,
//!   exactly one 1 per row: MLE-bench's layout), one column per target, matched by name;
//! * for `map@K`, `f1_samples`, `fbeta_micro`, `f1_micro_known` and `top1_error`, one column
//!   of space-separated labels (ranked for map@K; Kaggle's convention), the answers likewise.
//!
//! Columns are resolved by name. A predictions column that grading does not read (neither the
//! id nor a target or class column, say pandas' `Unnamed: 0`) is ignored and reported in
//! [`Graded::warnings`]. Ids are compared by value: an integer-valued float id (`311.0`) is
//! the integer (`311`) ([`super::align`]).
//!
//! Checks, in order, each failure naming what and where (rows are 1-based data rows of the
//! predictions file, header not counted): the row count equals the answers'; (on an
//! MLE-bench competition whose `grade.py` compares them) the columns are exactly the id and
//! the targets; the id column exists; ids are non-empty, unique and exactly the answer ids;
//! the needed columns exist (the class columns are the answer classes); values are numbers,
//! not empty, finite, probabilities in [0, 1] (and in the range an MLE-bench `grade.py`
//! checks), rows of multiclass AUC scores and of multi-column log loss probabilities sum to 1;
//! labels are of the answers' kind. Which of these apply, and how, is
//! [`GradeOptions::rules`]'s version and [`GradeOptions::mle_bench`]'s checks (`rules`):
//! under rules V1 (grade events of schema 2 and 3) a CSV's text numbers stay text, labels of
//! two kinds compare as text, log loss rows may sum to anything, and no MLE-bench check
//! applies. On an MLE-bench competition, a verdict where `grade.py` is demonstrably wrong is
//! kept and named in [`Graded::departure`]. Predictions are then put
//! in answer order; the score is finite and inside the metric's range ([`Metric::range`]). A
//! submission failing a check is [`Score::Invalid`], never truncated or padded, and so is a
//! predictions file that cannot be decoded (not Parquet, a duplicate column) or that says of
//! itself it would not fit (a footer's row count other than the answers', more than
//! [`MAX_PREDICTION_CELLS`]): untrusted predictions never make grading fail and are never
//! decoded before their footer is checked. A problem with the answers themselves, a file
//! that cannot be opened or an undefined metric is a [`GradeError`], which names the answers
//! file; so is a predictions file with fewer columns than the targets taken from the answers
//! when no targets were named (the answers may hold features: [`GradeError::InferredTargets`]).

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};

use arrow::array::{Array, ArrayRef, AsArray, UInt32Array};
use arrow::buffer::ScalarBuffer;
use arrow::compute::{cast, take};
use arrow::datatypes::{DataType, Float64Type};
use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::align::{IdFault, Order, align, gather, gather_owned};
use super::columns::{prediction_name, target_names};
use super::labels::{self, Label, LabelColumn, LabelError, LabelLists, LabelPairs};
use super::metric_error::MetricError;
use super::probabilistic::ClassScores;
use super::registry::{InputKind, MapForm, Metric, UnknownMetric};
use super::rules::{Departure, Labels as LabelRule, MleBenchChecks, RowSums, Rules, Tokens, Values};
use super::table::{Dates, MAX_CSV_BYTES, ReadError, Shape, Table, read_table_with, shape};
use super::{classification, kappa, probabilistic, ranking, regression, stream};

// Both are in this module's public signatures (`score_files_with`, `Score::Invalid`), so they
// stay nameable from here as before they moved to their leaves.
pub use super::columns::GradeOptions;
pub use super::invalid::Invalid;

/// The outcome of grading a readable submission.
#[derive(Debug, Clone, PartialEq)]
pub enum Score {
    Valid { metric: String, score: f64 },
    Invalid { reason: Invalid },
}

impl Serialize for Score {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Valid { metric, score } => {
                let mut s = serializer.serialize_struct("Score", 3)?;
                s.serialize_field("metric", metric)?;
                s.serialize_field("score", score)?;
                s.serialize_field("valid", &true)?;
                s.end()
            }
            Self::Invalid { reason } => {
                let mut s = serializer.serialize_struct("Score", 2)?;
                s.serialize_field("valid", &false)?;
                s.serialize_field("reason", &reason.to_string())?;
                s.end()
            }
        }
    }
}

impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Valid { metric, score } => write!(f, "{metric} = {score}"),
            Self::Invalid { reason } => write!(f, "invalid submission: {reason}"),
        }
    }
}

/// A score with what the grader noticed but did not hold against the submission.
#[derive(Debug, Clone, PartialEq)]
pub struct Graded {
    pub score: Score,
    /// Predictions columns that were ignored, one sentence each.
    pub warnings: Vec<String>,
    /// On an MLE-bench competition, where this verdict departs from its `grade.py` (which is
    /// demonstrably wrong there: `rules`), in a sentence; none where they agree.
    pub departure: Option<String>,
}

impl Serialize for Graded {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Graded", 4)?;
        match &self.score {
            Score::Valid { metric, score } => {
                s.serialize_field("metric", metric)?;
                s.serialize_field("score", score)?;
                s.serialize_field("valid", &true)?;
            }
            Score::Invalid { reason } => {
                s.serialize_field("valid", &false)?;
                s.serialize_field("reason", &reason.to_string())?;
            }
        }
        s.serialize_field("warnings", &self.warnings)?;
        if let Some(departure) = &self.departure {
            s.serialize_field("departure", departure)?;
        }
        s.end()
    }
}

impl fmt::Display for Graded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.score.fmt(f)
    }
}

/// Why grading could not produce a [`Score`]. Every variant names the file at fault: a
/// [`ReadError`] its path, the others the answers file.
#[derive(Debug, thiserror::Error)]
pub enum GradeError {
    #[error(transparent)]
    UnknownMetric(#[from] UnknownMetric),
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("answers file {} is unusable", path.display())]
    Answers {
        path: PathBuf,
        #[source]
        reason: Invalid,
    },
    #[error("cannot compute {metric} on the answers in {}", path.display())]
    Metric {
        metric: String,
        path: PathBuf,
        #[source]
        source: MetricError,
    },
    /// No targets were named, so every answers column but the id was taken for one, and the
    /// predictions lack some: the answers may hold other columns, or the predictions may
    /// miss targets. Neither file is blamed alone.
    #[error(
        "answers file {}: with no target columns named, every column but the id is a target \
         ({}), and the predictions have no column {}; name the answers' target columns \
         (`ml2b score --target COL`), or add the missing columns to the predictions",
        path.display(),
        targets.join(", "),
        missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
    )]
    InferredTargets {
        path: PathBuf,
        targets: Vec<String>,
        missing: Vec<String>,
    },
}

impl crate::error::IsInputError for GradeError {
    fn is_input_error(&self) -> bool {
        matches!(
            self,
            Self::UnknownMetric(_) | Self::Read(_) | Self::Answers { .. } | Self::InferredTargets { .. }
        )
    }
}
crate::error::input_error!(GradeError);

/// Scores `predictions` against `answers` with default options but the id column.
pub fn score_files(
    metric: &str,
    answers: &Path,
    predictions: &Path,
    id_col: &str,
) -> Result<Score, GradeError> {
    let options = GradeOptions {
        id_col: id_col.to_string(),
        ..GradeOptions::default()
    };
    score_files_with(metric, answers, predictions, &options)
}

/// Scores `predictions` against `answers`.
pub fn score_files_with(
    metric: &str,
    answers: &Path,
    predictions: &Path,
    options: &GradeOptions,
) -> Result<Score, GradeError> {
    score_files_graded(metric, answers, predictions, options).map(|graded| graded.score)
}

/// Scores `predictions` against `answers`, with the warnings ([`Graded`]).
pub fn score_files_graded(
    metric: &str,
    answers: &Path,
    predictions: &Path,
    options: &GradeOptions,
) -> Result<Graded, GradeError> {
    let metric: Metric = metric.parse()?;
    if let Some(streamed) = stream::score(metric, answers, predictions, options) {
        return Ok(Graded {
            score: checked(metric, streamed.score),
            warnings: streamed.unused.iter().map(|c| unused_warning(c)).collect(),
            departure: None,
        });
    }
    match read_pair(answers, predictions, options.rules)? {
        Ok((answers, predictions)) => score_tables_graded(metric, &answers, &predictions, options),
        Err(reason) => Ok(Graded {
            score: Score::Invalid { reason },
            warnings: Vec::new(),
            departure: None,
        }),
    }
}

/// Scores tables already read.
pub fn score_tables(
    metric: Metric,
    answers: &Table,
    predictions: &Table,
    options: &GradeOptions,
) -> Result<Score, GradeError> {
    score_tables_graded(metric, answers, predictions, options).map(|graded| graded.score)
}

/// Scores tables already read, with the warnings.
pub fn score_tables_graded(
    metric: Metric,
    answers: &Table,
    predictions: &Table,
    options: &GradeOptions,
) -> Result<Graded, GradeError> {
    let mut notes = Notes::default();
    let score = match grade(metric, answers, predictions, options, &mut notes) {
        Ok(score) => checked(metric, score),
        Err(Fault::Invalid(reason)) => Score::Invalid { reason },
        Err(Fault::Grade(error)) => return Err(error),
    };
    let Notes { warnings, departure } = notes;
    Ok(Graded {
        score,
        warnings,
        departure: departure.map(|d| d.describe().to_string()),
    })
}

/// What grading noticed besides the score.
#[derive(Default)]
struct Notes {
    warnings: Vec<String>,
    departure: Option<Departure>,
}

/// The warning for a predictions column grading did not read.
fn unused_warning(column: &str) -> String {
    format!("predictions column `{column}` is neither the id nor a target or class column: ignored")
}

/// A computed score, valid only when it is finite and inside the metric's range: a NaN or an
/// overflow (predictions of 1e200 square to infinity) is the submission's fault.
fn checked(metric: Metric, score: f64) -> Score {
    let (lo, hi) = metric.range();
    let name = metric.to_string();
    let reason = if !score.is_finite() {
        Invalid::NonFiniteScore { metric: name, score }
    } else if !(lo..=hi).contains(&score) {
        Invalid::ScoreOutOfRange {
            metric: name,
            score,
            lo,
            hi,
        }
    } else {
        return Score::Valid { metric: name, score };
    };
    Score::Invalid { reason }
}

/// The most cells (rows × columns) a predictions file may decode to: 2^29, 4 GiB of floats.
pub const MAX_PREDICTION_CELLS: u64 = 1 << 29;

/// Reads the answers and the predictions, the predictions only once what their file says of
/// itself fits the answers ([`screen`]): a Parquet file of 10^9 identical rows is a few
/// megabytes on disk and never decoded. When the answers are Parquet their row count is in
/// their footer and the two files decode on two threads; CSV answers are read first. Under
/// [`Rules::V2`] a CSV file's columns are typed as pandas types them
/// ([`Table::with_pandas_numbers`]; dates and times stay text, [`Dates::Text`]).
fn read_pair(
    answers: &Path,
    predictions: &Path,
    rules: Rules,
) -> Result<Result<(Table, Table), Invalid>, GradeError> {
    let predicted = match shape(predictions) {
        Ok(shape) => shape,
        Err(e) => return prediction_fault(e).map(Err),
    };
    let pandas = |table: Table, parquet: bool| {
        if rules >= Rules::V2 && !parquet {
            table.with_pandas_numbers()
        } else {
            table
        }
    };
    let answered = shape(answers)?;
    let dates = if rules >= Rules::V2 {
        Dates::Text
    } else {
        Dates::Inferred
    };
    let pair = read_files(answers, &answered, predictions, &predicted, dates)?;
    Ok(pair.map(|(a, p)| (pandas(a, answered.parquet), pandas(p, predicted.parquet))))
}

fn read_files(
    answers: &Path,
    answered: &Shape,
    predictions: &Path,
    predicted: &Shape,
    dates: Dates,
) -> Result<Result<(Table, Table), Invalid>, GradeError> {
    let read_table = |path: &Path| read_table_with(path, dates);
    if let Some(rows) = answered.rows {
        if let Err(reason) = screen(predicted, rows) {
            return Ok(Err(reason));
        }
        let (answers, predictions) = std::thread::scope(|s| {
            let answers = s.spawn(|| read_table(answers));
            let predictions = read_table(predictions);
            (answers.join().expect("reader thread does not panic"), predictions)
        });
        return Ok(match predictions {
            Ok(predictions) => Ok((answers?, predictions)),
            Err(e) => Err(prediction_fault(e)?),
        });
    }
    let answers = read_table(answers)?;
    if let Err(reason) = screen(predicted, answers.rows() as u64) {
        return Ok(Err(reason));
    }
    Ok(match read_table(predictions) {
        Ok(predictions) => Ok((answers, predictions)),
        Err(e) => Err(prediction_fault(e)?),
    })
}

/// Checks what a predictions file says of itself against the answers' `rows`, before decoding.
fn screen(predicted: &Shape, rows: u64) -> Result<(), Invalid> {
    if let Some(got) = predicted.rows.filter(|got| *got != rows) {
        return Err(Invalid::RowCount {
            expected: rows as usize,
            got: got as usize,
        });
    }
    let cells = rows.saturating_mul(predicted.columns.unwrap_or(0));
    if cells > MAX_PREDICTION_CELLS {
        return Err(Invalid::TooLarge {
            what: "the predictions' cell count (rows × columns)".into(),
            got: cells,
            limit: MAX_PREDICTION_CELLS,
        });
    }
    if !predicted.parquet && predicted.bytes > MAX_CSV_BYTES {
        return Err(Invalid::TooLarge {
            what: "the predictions' CSV size in bytes".into(),
            got: predicted.bytes,
            limit: MAX_CSV_BYTES,
        });
    }
    Ok(())
}

/// A predictions file that cannot be read is the submission's fault ([`Invalid`]), except
/// when it cannot even be opened (a missing file is the caller's error). The reason leaves
/// out the file's path, which differs between machines: grade events must not.
fn prediction_fault(e: ReadError) -> Result<Invalid, GradeError> {
    Ok(match e {
        ReadError::Open { .. } => return Err(GradeError::Read(e)),
        ReadError::DuplicateColumn { name, .. } => Invalid::DuplicateColumn(name),
        ReadError::Empty { .. } => Invalid::Unreadable("the file is empty".into()),
        ReadError::TooLarge { bytes, limit, .. } => Invalid::TooLarge {
            what: "the predictions' CSV size in bytes".into(),
            got: bytes,
            limit,
        },
        other => {
            let mut causes = Vec::new();
            let mut source = std::error::Error::source(&other);
            while let Some(cause) = source {
                causes.push(cause.to_string());
                source = cause.source();
            }
            Invalid::Unreadable(causes.join(": "))
        }
    })
}

/// A failed grading, before it is split into an invalid submission and an error.
enum Fault {
    Invalid(Invalid),
    Grade(GradeError),
}

impl From<Invalid> for Fault {
    fn from(reason: Invalid) -> Self {
        Self::Invalid(reason)
    }
}

/// The aligned pair of tables.
struct Context<'a> {
    metric: Metric,
    answers: &'a Table,
    predictions: &'a Table,
    options: &'a GradeOptions,
    order: Order,
    /// The predictions columns read so far (the id first).
    used: RefCell<Vec<String>>,
}

fn grade(
    metric: Metric,
    answers: &Table,
    predictions: &Table,
    options: &GradeOptions,
    notes: &mut Notes,
) -> Result<f64, Fault> {
    let mut ctx = Context::new(metric, answers, predictions, options)?;
    if let Err(fault) = ctx.align_ids() {
        notes.departure = ctx.positional_departure(&fault);
        return Err(fault);
    }
    let mle = options.mle_bench();
    if ctx.order.is_some() && mle.is_some_and(|m| m.departs_by(Departure::RowsByPosition)) {
        notes.departure = Some(Departure::RowsByPosition);
    }
    let result = ctx.score();
    match &result {
        Ok(_) => {
            let used = ctx.used.borrow();
            let unused = predictions.names().iter().filter(|n| !used.contains(n));
            notes.warnings.extend(unused.map(|n| unused_warning(n)));
        }
        Err(Fault::Invalid(reason)) => {
            notes.departure = mle.and_then(|m| value_departure(m, options, reason))
        }
        Err(Fault::Grade(_)) => {}
    }
    result
}

/// The departure from `grade.py` of refusing a submission for `reason` (its values), if any.
fn value_departure(m: &MleBenchChecks, options: &GradeOptions, reason: &Invalid) -> Option<Departure> {
    let departs = |d: Departure| m.departs_by(d).then_some(d);
    match reason {
        Invalid::EmptyValue { column, .. } if *column != options.id_col => {
            departs(Departure::NanScore).or(departs(Departure::EmptyScoresZero))
        }
        Invalid::NotFinite { .. } | Invalid::Metric(_) => departs(Departure::NanScore),
        Invalid::NotNumeric { .. } => departs(Departure::RankedText),
        Invalid::NotALabel { value, .. } if value.parse::<f64>().is_ok_and(f64::is_finite) => {
            departs(Departure::TruncatedLabels)
        }
        _ => None,
    }
}

impl<'a> Context<'a> {
    /// The pair before its ids are read: the answers' id column exists, the row counts agree,
    /// and on an MLE-bench competition that compares the column set, it is the expected one.
    fn new(
        metric: Metric,
        answers: &'a Table,
        predictions: &'a Table,
        options: &'a GradeOptions,
    ) -> Result<Self, Fault> {
        let id = &options.id_col;
        if answers.column(id).is_none() {
            return Err(answers_fault(answers, Invalid::MissingColumn(id.clone())));
        }
        if answers.rows() != predictions.rows() {
            return Err(Invalid::RowCount {
                expected: answers.rows(),
                got: predictions.rows(),
            }
            .into());
        }
        let ctx = Self {
            metric,
            answers,
            predictions,
            options,
            order: None,
            used: RefCell::new(vec![id.clone()]),
        };
        if options.mle_bench().is_some_and(|m| m.exact_columns) {
            ctx.check_column_set()?;
        }
        Ok(ctx)
    }

    /// `grade.py` compares the submission's column set with the id and the targets.
    fn check_column_set(&self) -> Result<(), Invalid> {
        let mut expected = vec![self.options.id_col.clone()];
        expected.extend(self.targets());
        let got = self.predictions.names().to_vec();
        let same = got.len() == expected.len() && expected.iter().all(|e| got.contains(e));
        if same {
            return Ok(());
        }
        Err(Invalid::Columns { expected, got })
    }

    /// Reads the prediction ids and puts the predictions in answer order.
    fn align_ids(&mut self) -> Result<(), Fault> {
        let id = &self.options.id_col;
        let answer_ids = self.answers.column(id).expect("checked in new");
        let pred_ids = self
            .predictions
            .column(id)
            .ok_or_else(|| Invalid::MissingColumn(id.clone()))?;
        self.order = align(answer_ids, pred_ids, id).map_err(|fault| match fault {
            IdFault::Answers(reason) => answers_fault(self.answers, reason),
            IdFault::Predictions(reason) => Fault::Invalid(reason),
        })?;
        Ok(())
    }

    /// On an MLE-bench competition whose `grade.py` does not check the ids: whether it would
    /// score this submission whose ids ml2b refuses (`fault`), grading the rows as they stand.
    fn positional_departure(&self, fault: &Fault) -> Option<Departure> {
        let m = self.options.mle_bench()?;
        let departure = [Departure::RowsByPosition, Departure::UncheckedIds]
            .into_iter()
            .find(|d| m.departs_by(*d))?;
        let missing_id = matches!(fault, Fault::Invalid(Invalid::MissingColumn(_)));
        if !matches!(fault, Fault::Invalid(_)) || (missing_id && departure != Departure::RowsByPosition) {
            return None;
        }
        self.score().ok().map(|_| departure)
    }

    fn score(&self) -> Result<f64, Fault> {
        match self.metric.input_kind() {
            InputKind::Values | InputKind::WeightedValues => self.grade_values(),
            InputKind::MultiValues => self.grade_multi(),
            InputKind::Labels => self.grade_labels(),
            InputKind::LabelLists => self.grade_lists(),
            InputKind::Probabilities => self.grade_probabilities(),
        }
    }

    /// Answer target columns.
    fn targets(&self) -> Vec<String> {
        target_names(self.metric, self.answers.names(), self.options)
    }

    fn single_target(&self) -> Result<String, Fault> {
        match self.targets().as_slice() {
            [one] => Ok(one.clone()),
            found => Err(answers_fault(
                self.answers,
                Invalid::TargetColumns {
                    found: found.to_vec(),
                },
            )),
        }
    }

    /// Records that grading reads the predictions column `name`.
    fn read(&self, name: &str) {
        let mut used = self.used.borrow_mut();
        if !used.iter().any(|u| u == name) {
            used.push(name.to_string());
        }
    }

    /// The predictions column named `target` of a multi-column metric. A missing one is the
    /// submission's fault when the targets were named, or when the predictions have a column
    /// for every target taken from the answers (one is misnamed); it is ambiguous when they
    /// have fewer columns than the answers, whose extra columns may be features
    /// ([`GradeError::InferredTargets`]).
    fn named_prediction(&self, target: &str, targets: &[String]) -> Result<&'a ArrayRef, Fault> {
        if let Some(column) = self.predictions.column(target) {
            self.read(target);
            return Ok(column);
        }
        let fewer = self.prediction_columns().len() < targets.len();
        if self.options.targets.is_none() && targets.len() > 1 && fewer {
            let names = self.predictions.names();
            let missing = targets.iter().filter(|t| !names.contains(t)).cloned().collect();
            return Err(Fault::Grade(GradeError::InferredTargets {
                path: self.answers.path.clone(),
                targets: targets.to_vec(),
                missing,
            }));
        }
        Err(Invalid::MissingColumn(target.to_string()).into())
    }

    fn answer_column(&self, name: &str) -> Result<&'a ArrayRef, Fault> {
        self.answers
            .column(name)
            .ok_or_else(|| answers_fault(self.answers, Invalid::MissingColumn(name.to_string())))
    }

    /// Non-id prediction columns.
    fn prediction_columns(&self) -> Vec<&'a String> {
        self.predictions
            .names()
            .iter()
            .filter(|n| **n != self.options.id_col)
            .collect()
    }

    /// The prediction column for `target`: same name, or the only non-id column.
    fn prediction_for(&self, target: &str) -> Result<(&'a str, &'a ArrayRef), Fault> {
        let names = self.predictions.names();
        let name = prediction_name(target, names, self.options)
            .ok_or_else(|| Invalid::MissingColumn(target.to_string()))?;
        self.read(name);
        Ok((name, self.predictions.column(name).expect("listed column")))
    }

    fn metric_fault(&self, error: MetricError) -> Fault {
        match error {
            MetricError::BadPrediction { .. } => Fault::Invalid(Invalid::Metric(error.to_string())),
            source => Fault::Grade(GradeError::Metric {
                metric: self.metric.to_string(),
                path: self.answers.path.clone(),
                source,
            }),
        }
    }

    fn grade_values(&self) -> Result<f64, Fault> {
        let target = self.single_target()?;
        let y_true =
            numeric(self.answer_column(&target)?, &target).map_err(|r| answers_fault(self.answers, r))?;
        let (name, column) = self.prediction_for(&target)?;
        let y_pred = numeric(column, name)?;
        self.check_values(name, &y_pred)?;
        let y_pred = ordered(y_pred, &self.order);
        let weights = match self.metric.input_kind() {
            InputKind::WeightedValues => {
                let w = &self.options.weight_col;
                Some(numeric(self.answer_column(w)?, w).map_err(|r| answers_fault(self.answers, r))?)
            }
            _ => None,
        };
        regression::score_values(self.metric, &y_true, &y_pred, weights.as_deref())
            .map_err(|e| self.metric_fault(e))
    }

    fn grade_multi(&self) -> Result<f64, Fault> {
        let (mut truths, mut preds) = (Vec::new(), Vec::new());
        let targets = self.targets();
        if targets.is_empty() {
            return Err(answers_fault(
                self.answers,
                Invalid::TargetCount {
                    metric: self.metric.to_string(),
                    needs: self.metric.target_count(),
                    found: targets,
                },
            ));
        }
        for target in &targets {
            truths.push(
                numeric(self.answer_column(target)?, target).map_err(|r| answers_fault(self.answers, r))?,
            );
            let column = self.named_prediction(target, &targets)?;
            let values = numeric(column, target)?;
            self.check_values(target, &values)?;
            preds.push(ordered(values, &self.order));
        }
        let truths: Vec<&[f64]> = truths.iter().map(|t| t.as_ref()).collect();
        let preds: Vec<&[f64]> = preds.iter().map(|p| p.as_ref()).collect();
        regression::score_multi(self.metric, &truths, &preds).map_err(|e| self.metric_fault(e))
    }

    fn answer_labels(&self, target: &str) -> Result<LabelColumn, Fault> {
        labels::label_column(self.answer_column(target)?.as_ref())
            .map_err(|e| answers_fault(self.answers, label_invalid(target, e)))
    }

    fn grade_labels(&self) -> Result<f64, Fault> {
        let target = self.single_target()?;
        let (name, column) = self.prediction_for(&target)?;
        let (y_true, y_pred) = self.label_pair(&target, name, column)?;
        let pairs = LabelPairs::encode(y_true, reorder_labels(y_pred, &self.order));
        let result = match self.metric {
            Metric::Qwk(form) => kappa::quadratic_weighted_kappa(&pairs, form),
            metric => classification::score_labels(metric, &pairs),
        };
        result.map_err(|e| self.metric_fault(e))
    }

    /// The answer and prediction labels, read as the rules compare them: under
    /// [`Rules::V1`] a mix of numbers and text compares as text; under V2 it is refused (as
    /// scikit-learn refuses it), but where an MLE-bench `grade.py` reads labels otherwise
    /// ([`LabelRule`]).
    fn label_pair(
        &self,
        target: &str,
        name: &str,
        column: &ArrayRef,
    ) -> Result<(LabelColumn, LabelColumn), Fault> {
        let rule = self.options.mle_bench().map_or(LabelRule::Sklearn, |m| m.labels);
        let read = |column: &ArrayRef, fill: Option<&str>| match fill {
            Some(fill) => labels::text_labels(column.as_ref(), fill),
            None => labels::label_column(column.as_ref()),
        };
        let text_fill = (rule == LabelRule::Text).then_some("nan");
        let y_true = read(self.answer_column(target)?, text_fill)
            .map_err(|e| answers_fault(self.answers, label_invalid(target, e)))?;
        let empty_label =
            rule == LabelRule::EmptyIsLabel && matches!(column.data_type(), DataType::Utf8 | DataType::Null);
        let pred_fill = text_fill.or(empty_label.then_some(""));
        let y_pred = read(column, pred_fill).map_err(|e| label_invalid(name, e))?;
        if self.options.rules >= Rules::V2 && y_true.kind() != y_pred.kind() {
            if rule == LabelRule::Int {
                return Err(not_an_int(name, &y_pred).into());
            }
            return Err(mixed_labels(name, &y_true, &y_pred).into());
        }
        Ok((y_true, y_pred))
    }

    fn grade_lists(&self) -> Result<f64, Fault> {
        let target = self.single_target()?;
        let (name, column) = self.prediction_for(&target)?;
        let answers = self.answer_column(&target)?;
        let rules = self.options.rules;
        let mle = self.options.mle_bench();
        if rules >= Rules::V2 && self.metric == Metric::Map(MapForm::Ml2b) {
            return self.grade_ml2b_map(&target, answers, name, column);
        }
        if mle.is_some_and(|m| m.labels == LabelRule::FirstIntToken) {
            return self.grade_first_int_token(&target, answers, name, column);
        }
        let single_space = mle.is_some_and(|m| m.tokens == Tokens::SingleSpace);
        let read = |array: &ArrayRef, unique: bool| match single_space {
            true => labels::single_space_lists(array.as_ref(), unique),
            false => labels::list_column(array.as_ref()),
        };
        let y_true = read(answers, true).map_err(|e| answers_fault(self.answers, list_err(&target)(e)))?;
        let y_pred = gather_owned(read(column, false).map_err(list_err(name))?, &self.order);
        let lists = LabelLists::encode(&y_true, &y_pred);
        let result = match self.metric {
            Metric::Map(form) => ranking::mean_average_precision(&lists, form),
            Metric::FbetaMicro(beta) => classification::fbeta_micro(&lists, beta),
            Metric::F1MicroKnown => classification::f1_micro_known(&lists),
            Metric::Top1Error => classification::top1_error(&lists),
            _ => classification::f1_samples(&lists),
        };
        result.map_err(|e| self.metric_fault(e))
    }

    /// `map_ml2b` under [`Rules::V2`]: ML2B's `apk` on the two cells' text
    /// ([`ranking::ml2b_map`]).
    fn grade_ml2b_map(
        &self,
        target: &str,
        answers: &ArrayRef,
        name: &str,
        column: &ArrayRef,
    ) -> Result<f64, Fault> {
        let y_true = cells(answers, target).map_err(|r| answers_fault(self.answers, r))?;
        let y_pred = gather_owned(cells(column, name)?, &self.order);
        ranking::ml2b_map(&y_true, &y_pred).map_err(|e| self.metric_fault(e))
    }

    /// inaturalist-2019's top-1 error: `int()` of the answer against `int()` of the first
    /// predicted token (an integer column is its integers; a float column, an empty cell or
    /// a token that is no integer fails there).
    fn grade_first_int_token(
        &self,
        target: &str,
        answers: &ArrayRef,
        name: &str,
        column: &ArrayRef,
    ) -> Result<f64, Fault> {
        let y_true = first_ints(answers, target).map_err(|r| answers_fault(self.answers, r))?;
        let y_pred = gather_owned(first_ints(column, name)?, &self.order);
        let one = |v: Vec<i64>| v.into_iter().map(|x| vec![x.to_string()]).collect::<Vec<_>>();
        let lists = LabelLists::encode(&one(y_true), &one(y_pred));
        classification::top1_error(&lists).map_err(|e| self.metric_fault(e))
    }

    fn grade_probabilities(&self) -> Result<f64, Fault> {
        let targets = self.targets();
        if self.metric == Metric::LogLoss && targets.len() > 1 {
            return self.grade_one_hot(&targets);
        }
        let target = self.single_target()?;
        let (classes, mut codes) = labels::encode_columns(&[self.answer_labels(&target)?]);
        let y_true = codes.pop().unwrap_or_default();
        if classes.len() < 2 {
            let one_class =
                MetricError::undefined("roc_auc/log_loss", "only one class present in the answers");
            return Err(self.metric_fault(one_class));
        }
        let names = self.class_columns(&target, &classes)?;
        self.score_class_columns(&names, &y_true, classes.len())
    }

    /// Reads the prediction columns `names` (in class order) and scores them.
    fn score_class_columns(&self, names: &[String], y_true: &[u32], n_classes: usize) -> Result<f64, Fault> {
        let mut columns = Vec::with_capacity(names.len());
        for name in names {
            let values = numeric(self.predictions.column(name).expect("checked column"), name)?;
            self.check_values(name, &values)?;
            columns.push(values);
        }
        let float32 = names.iter().all(|n| {
            let column = self.predictions.column(n).expect("checked column");
            matches!(column.data_type(), DataType::Float32 | DataType::Float16)
        });
        self.check_row_sums(&columns, float32)?;
        let columns: Vec<Cow<[f64]>> = columns.iter().map(|c| gather(c, &self.order)).collect();
        let slices: Vec<&[f64]> = columns.iter().map(|c| c.as_ref()).collect();
        let input = ClassScores {
            y_true,
            n_classes,
            columns: &slices,
        };
        probabilistic::score_probabilities(self.metric, &input).map_err(|e| self.metric_fault(e))
    }

    /// `log_loss` over one-hot answers: every target column a class (whether or not a row
    /// holds it), each answers row exactly one 1 and 0 elsewhere, the predictions one column
    /// per target, by name.
    fn grade_one_hot(&self, targets: &[String]) -> Result<f64, Fault> {
        let mut y_true = vec![u32::MAX; self.answers.rows()];
        for (class, target) in targets.iter().enumerate() {
            let values =
                numeric(self.answer_column(target)?, target).map_err(|r| answers_fault(self.answers, r))?;
            for (row, &v) in values.iter().enumerate() {
                let fault = |value: String| {
                    answers_fault(
                        self.answers,
                        Invalid::NotOneHot {
                            column: target.clone(),
                            row: row + 1,
                            value,
                        },
                    )
                };
                if v == 1.0 && y_true[row] == u32::MAX {
                    y_true[row] = class as u32;
                } else if v == 1.0 {
                    return Err(fault("a second 1".into()));
                } else if v != 0.0 {
                    return Err(fault(v.to_string()));
                }
            }
        }
        if let Some(row) = y_true.iter().position(|&c| c == u32::MAX) {
            let fault = Invalid::NotOneHot {
                column: targets.join(", "),
                row: row + 1,
                value: "no 1".into(),
            };
            return Err(answers_fault(self.answers, fault));
        }
        for target in targets {
            self.named_prediction(target, targets)?;
        }
        self.score_class_columns(targets, &y_true, targets.len())
    }

    /// Prediction columns in class order: one per class, named by its label, or, for a
    /// binary task, one (the column named as the target, else the only non-id column).
    /// Other columns are left unread (and reported as warnings).
    fn class_columns(&self, target: &str, classes: &[Label]) -> Result<Vec<String>, Fault> {
        let got: Vec<String> = self.prediction_columns().into_iter().cloned().collect();
        let expected: Vec<String> = classes.iter().map(Label::to_string).collect();
        if self.options.mle_bench().is_some() {
            // grade.py reads the one column named as the target.
            return match got.iter().any(|g| g == target) {
                true => {
                    self.read(target);
                    Ok(vec![target.to_string()])
                }
                false => Err(Invalid::MissingColumn(target.to_string()).into()),
            };
        }
        let chosen = if expected.iter().all(|e| got.contains(e)) {
            expected
        } else if classes.len() == 2 && got.iter().any(|g| g == target) {
            vec![target.to_string()]
        } else if classes.len() == 2 && got.len() == 1 {
            got
        } else {
            return Err(Invalid::ClassColumns { expected, got }.into());
        };
        chosen.iter().for_each(|c| self.read(c));
        Ok(chosen)
    }

    fn needs_probabilities(&self) -> bool {
        matches!(
            self.metric,
            Metric::LogLoss | Metric::RocAucOvr(_) | Metric::RocAucOvo(_)
        )
    }

    /// The values' allowed range: probabilities for the metrics that read them, and on an
    /// MLE-bench competition the range its `grade.py` checks ([`MleBenchChecks::values`]).
    fn check_values(&self, column: &str, values: &[f64]) -> Result<(), Invalid> {
        let mle = self.options.mle_bench().map_or(Values::Any, |m| m.values);
        let range = match (self.needs_probabilities(), mle) {
            (true, _) | (_, Values::Probability) => Values::Probability.range(),
            (false, other) => other.range(),
        };
        let Some((lo, hi)) = range else { return Ok(()) };
        let Some(row) = values.iter().position(|v| !(lo..=hi).contains(v)) else {
            return Ok(());
        };
        let (column, value) = (column.to_string(), values[row]);
        Err(match mle {
            Values::Pawpularity => Invalid::ValueOutOfRange {
                column,
                row: row + 1,
                value,
                lo,
                hi,
            },
            _ => Invalid::OutOfRange {
                column,
                row: row + 1,
                value,
            },
        })
    }

    /// Rows of class scores that must sum to 1: multiclass ROC AUC's (`np.allclose`, as
    /// scikit-learn checks them), and under [`Rules::V2`] log loss's over several class
    /// columns (scikit-learn's test, at float32's epsilon for `float32` columns, or the
    /// MLE-bench `grade.py`'s: [`RowSums`]).
    fn check_row_sums(&self, columns: &[ScalarBuffer<f64>], float32: bool) -> Result<(), Invalid> {
        let auc = matches!(self.metric, Metric::RocAucOvr(_) | Metric::RocAucOvo(_)) && columns.len() >= 3;
        let log_loss =
            self.metric == Metric::LogLoss && columns.len() >= 2 && self.options.rules >= Rules::V2;
        let rule = self
            .options
            .mle_bench()
            .and_then(|m| m.row_sums)
            .unwrap_or(RowSums::Sklearn);
        let eps = if float32 {
            f64::from(f32::EPSILON)
        } else {
            f64::EPSILON
        };
        let accepts = |sum: f64| match auc {
            true => (1.0 - sum).abs() <= 1e-8 + 1e-5 * sum.abs(),
            false => rule.accepts(sum, eps),
        };
        if !(auc || log_loss) {
            return Ok(());
        }
        for row in 0..columns[0].len() {
            let sum: f64 = columns.iter().map(|c| c[row]).sum();
            if !accepts(sum) {
                return Err(Invalid::RowSum { row: row + 1, sum });
            }
        }
        Ok(())
    }
}

fn answers_fault(answers: &Table, reason: Invalid) -> Fault {
    Fault::Grade(GradeError::Answers {
        path: answers.path.clone(),
        reason,
    })
}

fn list_err(column: &str) -> impl Fn(LabelError) -> Invalid + '_ {
    move |e| label_invalid(column, e)
}

fn label_invalid(column: &str, error: LabelError) -> Invalid {
    let column = column.to_string();
    match error {
        LabelError::Null { row } => Invalid::EmptyValue { column, row: row + 1 },
        LabelError::Continuous { row, value } => Invalid::NotALabel {
            column,
            row: row + 1,
            value: value.to_string(),
        },
        LabelError::Type(dt) => Invalid::NotALabel {
            column,
            row: 1,
            value: format!("{dt}"),
        },
    }
}

fn reorder_labels(column: LabelColumn, order: &Order) -> LabelColumn {
    match (column, order) {
        (column, None) => column,
        (LabelColumn::Int(v), order) => LabelColumn::Int(gather(&v, order).into_owned()),
        (LabelColumn::Text(a), Some(order)) => {
            let indices = UInt32Array::from(order.clone());
            let taken = take(&a, &indices, None).expect("indices are in bounds");
            LabelColumn::Text(taken.as_string::<i32>().clone())
        }
    }
}

/// A column as finite `f64` values (shares the Arrow buffer when it already holds `f64`).
fn numeric(array: &ArrayRef, column: &str) -> Result<ScalarBuffer<f64>, Invalid> {
    if let Some(row) = array
        .logical_nulls()
        .and_then(|n| n.iter().position(|valid| !valid))
    {
        return Err(Invalid::EmptyValue {
            column: column.to_string(),
            row: row + 1,
        });
    }
    let values = match array.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            ScalarBuffer::from(parse_text(array, column)?)
        }
        _ => cast(array, &DataType::Float64)
            .map_err(|_| Invalid::NotNumeric {
                column: column.to_string(),
                row: 1,
                value: array.data_type().to_string(),
            })?
            .as_primitive::<Float64Type>()
            .values()
            .clone(),
    };
    match values.iter().position(|v| !v.is_finite()) {
        Some(row) => Err(Invalid::NotFinite {
            column: column.to_string(),
            row: row + 1,
            value: values[row],
        }),
        None => Ok(values),
    }
}

/// `values` in answer order, without a copy when already in order.
fn ordered(values: ScalarBuffer<f64>, order: &Order) -> ScalarBuffer<f64> {
    match order {
        None => values,
        Some(_) => ScalarBuffer::from(gather(&values, order).into_owned()),
    }
}

fn parse_text(array: &ArrayRef, column: &str) -> Result<Vec<f64>, Invalid> {
    let text = cast(array, &DataType::Utf8).expect("text casts to Utf8");
    let text = text.as_string::<i32>();
    let parse = |(row, cell): (usize, Option<&str>)| {
        let cell = cell.unwrap_or("").trim();
        cell.parse::<f64>().map_err(|_| Invalid::NotNumeric {
            column: column.to_string(),
            row: row + 1,
            value: cell.to_string(),
        })
    };
    text.iter().enumerate().map(parse).collect()
}

/// The refusal of labels of two kinds (scikit-learn's "Mix of label input types").
fn mixed_labels(column: &str, y_true: &LabelColumn, y_pred: &LabelColumn) -> Invalid {
    let (row, value) = first_text(y_pred)
        .or_else(|| first_text(y_true))
        .unwrap_or((0, String::new()));
    Invalid::MixedLabels {
        column: column.to_string(),
        answers: y_true.kind(),
        predictions: y_pred.kind(),
        row: row + 1,
        value,
    }
}

/// `int()` of a text label fails: the first cell that is no integer.
fn not_an_int(column: &str, y_pred: &LabelColumn) -> Invalid {
    let (row, value) = first_text(y_pred).unwrap_or((0, String::new()));
    Invalid::NotALabel {
        column: column.to_string(),
        row: row + 1,
        value,
    }
}

/// The first text cell (0-based row) that is not an integer.
fn first_text(column: &LabelColumn) -> Option<(usize, String)> {
    let LabelColumn::Text(text) = column else {
        return None;
    };
    text.iter()
        .enumerate()
        .find(|(_, c)| c.is_none_or(|c| c.trim().parse::<i64>().is_err()))
        .map(|(row, c)| (row, c.unwrap_or("").to_string()))
}

/// A column's cells as text (numbers in decimal); an empty cell is refused.
fn cells(array: &ArrayRef, column: &str) -> Result<Vec<String>, Invalid> {
    let text = cast(array, &DataType::Utf8).map_err(|_| Invalid::NotALabel {
        column: column.to_string(),
        row: 1,
        value: array.data_type().to_string(),
    })?;
    let text = text.as_string::<i32>();
    text.iter()
        .enumerate()
        .map(|(row, cell)| {
            cell.map(str::to_string).ok_or_else(|| Invalid::EmptyValue {
                column: column.to_string(),
                row: row + 1,
            })
        })
        .collect()
}

/// `int(y) if isinstance(y, int) else int(y.split()[0])` over a column: integers as they
/// are, text by its first whitespace-separated token, anything else refused.
fn first_ints(array: &ArrayRef, column: &str) -> Result<Vec<i64>, Invalid> {
    let bad = |row: usize, value: String| Invalid::NotALabel {
        column: column.to_string(),
        row: row + 1,
        value,
    };
    if let Some(row) = array
        .logical_nulls()
        .and_then(|n| n.iter().position(|valid| !valid))
    {
        return Err(Invalid::EmptyValue {
            column: column.to_string(),
            row: row + 1,
        });
    }
    let dt = array.data_type();
    if dt.is_integer() || *dt == DataType::Boolean {
        let ints = cast(array, &DataType::Int64).map_err(|_| bad(0, dt.to_string()))?;
        return Ok(ints
            .as_primitive::<arrow::datatypes::Int64Type>()
            .values()
            .to_vec());
    }
    if !matches!(dt, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) {
        return Err(bad(0, dt.to_string()));
    }
    let text = cast(array, &DataType::Utf8).map_err(|_| bad(0, dt.to_string()))?;
    let text = text.as_string::<i32>();
    text.iter()
        .enumerate()
        .map(|(row, cell)| {
            let cell = cell.unwrap_or("");
            let first = cell.split_whitespace().next().unwrap_or("");
            first.parse::<i64>().map_err(|_| bad(row, cell.to_string()))
        })
        .collect()
}
