//! Label columns and their dense encoding.
//!
//! A label column is read either as integers (integer, boolean or integral float arrays) or as
//! text (string arrays). When the answers and the predictions disagree (say integers in the
//! answers, text in the predictions because a CSV had one odd value) both sides are compared as
//! text, integers written in decimal: a label is what its file says it is.
//!
//! Encoding maps every label to a code indexing the sorted class list, sorted as scikit-learn
//! sorts (`np.unique`): integers numerically, text by code point. Label lists (space-separated
//! cells, Kaggle's convention for multi-label and ranked answers) share one vocabulary.

use std::collections::HashMap;
use std::fmt;

use arrow::array::{Array, AsArray, StringArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type, Int64Type};

/// One class label.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Label {
    Int(i64),
    Text(String),
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Int(v) => write!(f, "{v}"),
            Self::Text(s) => f.write_str(s),
        }
    }
}

/// Why a column cannot be read as labels. `row` is 0-based.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LabelError {
    #[error("empty value at row {}", row + 1)]
    Null { row: usize },
    #[error("value {value} at row {} is not a class label (not an integer)", row + 1)]
    Continuous { row: usize, value: f64 },
    #[error("column type {0} cannot hold class labels")]
    Type(DataType),
}

/// A label column, as integers or as text.
#[derive(Debug, Clone)]
pub enum LabelColumn {
    Int(Vec<i64>),
    Text(StringArray),
}

impl LabelColumn {
    pub fn len(&self) -> usize {
        match self {
            Self::Int(v) => v.len(),
            Self::Text(a) => a.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The kind of label, as scikit-learn tells them apart: `number` or `text`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Int(_) => "number",
            Self::Text(_) => "text",
        }
    }

    /// The column as text (integers in decimal).
    pub fn into_text(self) -> StringArray {
        match self {
            Self::Int(v) => v.iter().map(|x| Some(x.to_string())).collect(),
            Self::Text(a) => a,
        }
    }
}

fn first_null(array: &dyn Array) -> Result<(), LabelError> {
    match array
        .logical_nulls()
        .and_then(|n| n.iter().position(|valid| !valid))
    {
        Some(row) => Err(LabelError::Null { row }),
        None => Ok(()),
    }
}

fn integral(row: usize, value: f64) -> Result<i64, LabelError> {
    let ok = value.is_finite() && value.fract() == 0.0 && value.abs() < 9.0e18;
    if ok {
        Ok(value as i64)
    } else {
        Err(LabelError::Continuous { row, value })
    }
}

fn float_labels(array: &dyn Array) -> Result<Vec<i64>, LabelError> {
    let floats = cast(array, &DataType::Float64).map_err(|_| LabelError::Type(array.data_type().clone()))?;
    let values = floats.as_primitive::<Float64Type>().values();
    values
        .iter()
        .enumerate()
        .map(|(row, &v)| integral(row, v))
        .collect()
}

/// Reads a label column from an Arrow array (no nulls allowed).
pub fn label_column(array: &dyn Array) -> Result<LabelColumn, LabelError> {
    first_null(array)?;
    let dt = array.data_type();
    let type_err = || LabelError::Type(dt.clone());
    match dt {
        DataType::Float16 | DataType::Float32 | DataType::Float64 => {
            Ok(LabelColumn::Int(float_labels(array)?))
        }
        DataType::Utf8 => Ok(LabelColumn::Text(array.as_string::<i32>().clone())),
        DataType::LargeUtf8 | DataType::Utf8View | DataType::Dictionary(_, _) => {
            let text = cast(array, &DataType::Utf8).map_err(|_| type_err())?;
            Ok(LabelColumn::Text(text.as_string::<i32>().clone()))
        }
        _ if dt.is_integer() || *dt == DataType::Boolean => {
            let ints = cast(array, &DataType::Int64).map_err(|_| type_err())?;
            Ok(LabelColumn::Int(
                ints.as_primitive::<Int64Type>().values().to_vec(),
            ))
        }
        _ => Err(type_err()),
    }
}

/// A column as text labels, an empty cell read as `fill` (pandas' `astype(str)` makes it
/// `nan`, `fillna("")` the empty string); numbers as Arrow writes them.
pub fn text_labels(array: &dyn Array, fill: &str) -> Result<LabelColumn, LabelError> {
    let text = cast(array, &DataType::Utf8).map_err(|_| LabelError::Type(array.data_type().clone()))?;
    let text = text.as_string::<i32>();
    Ok(LabelColumn::Text(
        text.iter().map(|c| Some(c.unwrap_or(fill))).collect(),
    ))
}

/// Brings two label columns to a common representation (text if either is text).
pub fn unify(a: LabelColumn, b: LabelColumn) -> (LabelColumn, LabelColumn) {
    match (a, b) {
        (LabelColumn::Int(a), LabelColumn::Int(b)) => (LabelColumn::Int(a), LabelColumn::Int(b)),
        (a, b) => (LabelColumn::Text(a.into_text()), LabelColumn::Text(b.into_text())),
    }
}

/// Answers and predictions as codes into one sorted class list (the union of both).
#[derive(Debug, Clone, PartialEq)]
pub struct LabelPairs {
    pub classes: Vec<Label>,
    pub y_true: Vec<u32>,
    pub y_pred: Vec<u32>,
}

impl LabelPairs {
    /// Encodes two aligned label columns over the union of their labels.
    pub fn encode(y_true: LabelColumn, y_pred: LabelColumn) -> Self {
        let (classes, mut codes) = encode_columns(&unify_pair(y_true, y_pred));
        let y_pred = codes.pop().unwrap_or_default();
        let y_true = codes.pop().unwrap_or_default();
        Self {
            classes,
            y_true,
            y_pred,
        }
    }

    /// Reads and encodes two aligned Arrow label arrays.
    pub fn from_arrays(y_true: &dyn Array, y_pred: &dyn Array) -> Result<Self, LabelError> {
        Ok(Self::encode(label_column(y_true)?, label_column(y_pred)?))
    }

    /// Number of classes in the union.
    pub fn n_classes(&self) -> usize {
        self.classes.len()
    }
}

fn unify_pair(a: LabelColumn, b: LabelColumn) -> [LabelColumn; 2] {
    let (a, b) = unify(a, b);
    [a, b]
}

/// Encodes columns of one kind over the union of their labels, sorted.
pub fn encode_columns(columns: &[LabelColumn]) -> (Vec<Label>, Vec<Vec<u32>>) {
    let ints: Vec<&[i64]> = columns
        .iter()
        .filter_map(|c| match c {
            LabelColumn::Int(v) => Some(v.as_slice()),
            LabelColumn::Text(_) => None,
        })
        .collect();
    if ints.len() == columns.len() {
        return encode_ints(&ints);
    }
    let texts: Vec<StringArray> = columns.iter().cloned().map(LabelColumn::into_text).collect();
    encode_texts(&texts)
}

const DENSE_RANGE: i64 = 1 << 20;

fn encode_ints(columns: &[&[i64]]) -> (Vec<Label>, Vec<Vec<u32>>) {
    let all = || columns.iter().flat_map(|c| c.iter().copied());
    let (lo, hi) = all().fold((i64::MAX, i64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo <= hi && hi.checked_sub(lo).is_some_and(|r| r < DENSE_RANGE) {
        return encode_dense(columns, lo, (hi - lo + 1) as usize);
    }
    let mut values: Vec<i64> = all()
        .collect::<std::collections::HashSet<_>>()
        .into_iter()
        .collect();
    values.sort_unstable();
    let index: HashMap<i64, u32> = values.iter().enumerate().map(|(i, &v)| (v, i as u32)).collect();
    let codes = columns
        .iter()
        .map(|c| c.iter().map(|v| index[v]).collect())
        .collect();
    (values.into_iter().map(Label::Int).collect(), codes)
}

fn encode_dense(columns: &[&[i64]], lo: i64, width: usize) -> (Vec<Label>, Vec<Vec<u32>>) {
    let mut table = vec![u32::MAX; width];
    for c in columns {
        for &v in c.iter() {
            table[(v - lo) as usize] = 0;
        }
    }
    let mut classes = Vec::new();
    for (offset, slot) in table.iter_mut().enumerate() {
        if *slot == 0 {
            *slot = classes.len() as u32;
            classes.push(Label::Int(lo + offset as i64));
        }
    }
    let codes = columns
        .iter()
        .map(|c| c.iter().map(|&v| table[(v - lo) as usize]).collect())
        .collect();
    (classes, codes)
}

fn encode_texts(columns: &[StringArray]) -> (Vec<Label>, Vec<Vec<u32>>) {
    let mut first_seen: HashMap<&str, u32> = HashMap::new();
    let raw: Vec<Vec<u32>> = columns
        .iter()
        .map(|c| {
            c.iter()
                .map(|s| {
                    let next = first_seen.len() as u32;
                    *first_seen.entry(s.unwrap_or("")).or_insert(next)
                })
                .collect()
        })
        .collect();
    let mut names: Vec<(&str, u32)> = first_seen.into_iter().collect();
    names.sort_unstable();
    let mut remap = vec![0u32; names.len()];
    for (sorted, (_, seen)) in names.iter().enumerate() {
        remap[*seen as usize] = sorted as u32;
    }
    let codes = raw
        .into_iter()
        .map(|c| c.into_iter().map(|v| remap[v as usize]).collect())
        .collect();
    (
        names
            .into_iter()
            .map(|(s, _)| Label::Text(s.to_string()))
            .collect(),
        codes,
    )
}

/// Encodes one column against a fixed, sorted class list; an unknown label is returned with
/// its 0-based row.
pub fn encode_against(classes: &[Label], column: &LabelColumn) -> Result<Vec<u32>, (usize, Label)> {
    let index: HashMap<String, u32> = classes
        .iter()
        .enumerate()
        .map(|(i, c)| (c.to_string(), i as u32))
        .collect();
    let lookup = |row: usize, label: Label| index.get(&label.to_string()).copied().ok_or((row, label));
    match column {
        LabelColumn::Int(v) => v
            .iter()
            .enumerate()
            .map(|(row, &x)| lookup(row, Label::Int(x)))
            .collect(),
        LabelColumn::Text(a) => (0..a.len())
            .map(|row| lookup(row, Label::Text(a.value(row).to_string())))
            .collect(),
    }
}

/// Rows of label lists (space-separated cells), encoded over one shared vocabulary.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelLists {
    pub labels: Vec<String>,
    pub y_true: Vec<Vec<u32>>,
    pub y_pred: Vec<Vec<u32>>,
}

/// Splits a cell into tokens the way Python's `str.split()` does for ASCII whitespace.
fn tokens(cell: &str) -> impl Iterator<Item = &str> {
    cell.split_ascii_whitespace()
}

/// Reads a column of label lists; an empty or null cell is an empty list.
pub fn list_column(array: &dyn Array) -> Result<Vec<Vec<String>>, LabelError> {
    let text = cast(array, &DataType::Utf8).map_err(|_| LabelError::Type(array.data_type().clone()))?;
    let text = text.as_string::<i32>();
    Ok(text
        .iter()
        .map(|cell| tokens(cell.unwrap_or("")).map(str::to_string).collect())
        .collect())
}

/// Reads a column of label lists as `astype(str).str.split(" ")`: every single space splits,
/// so a run of spaces leaves empty tokens, and an empty cell is the one token `nan`. With
/// `unique`, a row keeps each token once (MLE-bench makes the answers a `set`).
pub fn single_space_lists(array: &dyn Array, unique: bool) -> Result<Vec<Vec<String>>, LabelError> {
    let text = cast(array, &DataType::Utf8).map_err(|_| LabelError::Type(array.data_type().clone()))?;
    let text = text.as_string::<i32>();
    let row = |cell: Option<&str>| {
        let mut tokens: Vec<String> = Vec::new();
        for t in cell.unwrap_or("nan").split(' ') {
            if !(unique && tokens.iter().any(|seen| seen == t)) {
                tokens.push(t.to_string());
            }
        }
        tokens
    };
    Ok(text.iter().map(row).collect())
}

fn code_rows<'a>(index: &mut HashMap<&'a str, u32>, rows: &'a [Vec<String>]) -> Vec<Vec<u32>> {
    let mut code = |t: &'a String| {
        let next = index.len() as u32;
        *index.entry(t.as_str()).or_insert(next)
    };
    rows.iter()
        .map(|row| row.iter().map(&mut code).collect())
        .collect()
}

impl LabelLists {
    /// Encodes aligned answer and prediction lists (codes in order of first appearance).
    pub fn encode(y_true: &[Vec<String>], y_pred: &[Vec<String>]) -> Self {
        let mut index: HashMap<&str, u32> = HashMap::new();
        let t = code_rows(&mut index, y_true);
        let p = code_rows(&mut index, y_pred);
        let mut labels = vec![String::new(); index.len()];
        for (name, i) in index {
            labels[i as usize] = name.to_string();
        }
        Self {
            labels,
            y_true: t,
            y_pred: p,
        }
    }

    /// Reads and encodes two aligned Arrow columns of label lists.
    pub fn from_arrays(y_true: &dyn Array, y_pred: &dyn Array) -> Result<Self, LabelError> {
        Ok(Self::encode(&list_column(y_true)?, &list_column(y_pred)?))
    }
}
