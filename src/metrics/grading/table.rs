//! Reading an answers or predictions file (CSV with a header row, or Parquet) into named
//! Arrow columns.
//!
//! The format follows the extension (`.parquet`/`.pq` → Parquet, anything else → CSV) unless
//! the file starts with Parquet's `PAR1` magic. CSV types are inferred from every record, so
//! that a non-numeric value late in a file turns the column into text (reported later as a
//! validation failure with its row) instead of a parse error. pandas' index columns
//! (`__index_level_N__`) are dropped. Errors name the file.
//!
//! Limits: a CSV file is read into memory only up to [`MAX_CSV_BYTES`] (a larger one is
//! refused with [`ReadError::TooLarge`], which names the limit: convert it to Parquet);
//! [`shape`] reads what a file says of itself (its size, and a Parquet footer's row and column
//! counts) without decoding it, so that a grader can refuse an untrusted file before it
//! allocates anything for it. An empty file is [`ReadError::Empty`]. A value that CSV type
//! inference took for a number but that does not parse as one (digits of another script,
//! which inference accepts) makes the file read again with every column as text, so that the
//! grader names the row instead of failing on the file.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::compute::concat;
use arrow::csv::ReaderBuilder;
use arrow::csv::reader::Format;
use arrow::datatypes::{DataType, Schema};
use arrow::error::ArrowError;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::errors::ParquetError;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot open {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot parse CSV file {}", path.display())]
    Csv {
        path: PathBuf,
        #[source]
        source: ArrowError,
    },
    #[error("cannot read Parquet file {}", path.display())]
    Parquet {
        path: PathBuf,
        #[source]
        source: ParquetError,
    },
    #[error("cannot decode Parquet file {}", path.display())]
    ParquetBatch {
        path: PathBuf,
        #[source]
        source: ArrowError,
    },
    #[error("{}: column `{name}` appears twice", path.display())]
    DuplicateColumn { path: PathBuf, name: String },
    #[error("{} is empty: expected a CSV header row or a Parquet file", path.display())]
    Empty { path: PathBuf },
    #[error("{} is {bytes} bytes of CSV, over the {limit}-byte limit of what is read into memory (convert it to Parquet)", path.display())]
    TooLarge { path: PathBuf, bytes: u64, limit: u64 },
}

/// The most bytes of CSV read into memory (1 GiB).
pub const MAX_CSV_BYTES: u64 = 1 << 30;

/// What a file says of itself, read without decoding its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub parquet: bool,
    pub bytes: u64,
    /// A Parquet footer's row count (none for CSV).
    pub rows: Option<u64>,
    /// A Parquet schema's top-level column count (none for CSV).
    pub columns: Option<u64>,
}

/// Reads `path`'s size and, for Parquet, its footer's row and column counts.
pub fn shape(path: &Path) -> Result<Shape, ReadError> {
    let mut file = open(path)?;
    let bytes = file_len(path, &file)?;
    if !is_parquet(path, &mut file)? {
        return Ok(Shape {
            parquet: false,
            bytes,
            rows: None,
            columns: None,
        });
    }
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|source| ReadError::Parquet {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(Shape {
        parquet: true,
        bytes,
        rows: Some(builder.metadata().file_metadata().num_rows().max(0) as u64),
        columns: Some(builder.schema().fields().len() as u64),
    })
}

/// A file's columns, all of the same length.
#[derive(Debug, Clone)]
pub struct Table {
    pub path: PathBuf,
    names: Vec<String>,
    columns: Vec<ArrayRef>,
    rows: usize,
}

impl Table {
    /// Column names in file order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Number of data rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&ArrayRef> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| &self.columns[i])
    }

    /// The table with its text columns typed as pandas' `read_csv` types them: a column whose
    /// every non-empty cell, trimmed of whitespace, is an integer becomes integers, else one
    /// whose every such cell is a number (not NaN) becomes floats (` 311` is the number 311
    /// there; Arrow's CSV inference keeps it text). For a CSV file only: Parquet is typed.
    pub fn with_pandas_numbers(mut self) -> Self {
        for column in &mut self.columns {
            if let Some(typed) = pandas_number_column(column) {
                *column = typed;
            }
        }
        self
    }

    /// Builds a table from named columns (all the same length).
    pub fn from_columns(path: PathBuf, named: Vec<(String, ArrayRef)>) -> Result<Self, ReadError> {
        let rows = named.first().map_or(0, |(_, c)| c.len());
        let mut table = Self {
            path,
            names: Vec::new(),
            columns: Vec::new(),
            rows,
        };
        for (name, column) in named {
            if table.names.contains(&name) {
                return Err(ReadError::DuplicateColumn {
                    path: table.path,
                    name,
                });
            }
            table.names.push(name);
            table.columns.push(column);
        }
        Ok(table)
    }
}

/// A text column whose every non-null cell, trimmed, is a number, as numbers (see
/// [`Table::with_pandas_numbers`]); `None` when it is not text or a cell is not a number.
fn pandas_number_column(column: &ArrayRef) -> Option<ArrayRef> {
    use arrow::array::{Float64Array, Int64Array};
    if !matches!(
        column.data_type(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    ) {
        return None;
    }
    let text = arrow::compute::cast(column, &DataType::Utf8).ok()?;
    if text.null_count() == text.len() {
        return None;
    }
    let text = text.as_any().downcast_ref::<arrow::array::StringArray>()?;
    let cells = || text.iter().map(|c| c.map(str::trim));
    if cells().all(|c| c.is_none_or(|c| c.parse::<i64>().is_ok())) {
        let ints: Int64Array = cells()
            .map(|c| c.map(|c| c.parse::<i64>().expect("checked")))
            .collect();
        return Some(Arc::new(ints));
    }
    let float = |c: &str| c.parse::<f64>().ok().filter(|v| !v.is_nan());
    if cells().all(|c| c.is_none_or(|c| float(c).is_some())) {
        let floats: Float64Array = cells().map(|c| c.and_then(float)).collect();
        return Some(Arc::new(floats));
    }
    None
}

fn file_len(path: &Path, file: &File) -> Result<u64, ReadError> {
    file.metadata()
        .map(|m| m.len())
        .map_err(|source| ReadError::Open {
            path: path.to_path_buf(),
            source,
        })
}

pub(super) fn open(path: &Path) -> Result<File, ReadError> {
    File::open(path).map_err(|source| ReadError::Open {
        path: path.to_path_buf(),
        source,
    })
}

pub(super) fn is_parquet(path: &Path, file: &mut File) -> Result<bool, ReadError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ext == "parquet" || ext == "pq" {
        return Ok(true);
    }
    let mut magic = [0u8; 4];
    let io = |source| ReadError::Open {
        path: path.to_path_buf(),
        source,
    };
    let n = file.read(&mut magic).map_err(io)?;
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    Ok(n == 4 && &magic == b"PAR1")
}

/// Reads a CSV or Parquet file.
pub fn read_table(path: &Path) -> Result<Table, ReadError> {
    read_table_with(path, Dates::Inferred)
}

/// What CSV type inference does with a column of dates or times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dates {
    /// Typed as Arrow infers it (a date, a timestamp): the grading rules of grade schema ≤ 3.
    Inferred,
    /// Kept as the text the file holds, as pandas' `read_csv` keeps it (it parses no date
    /// unless told to): a timestamp id such as new-york-city-taxi's `key` then matches the
    /// same text in a Parquet file of predictions.
    Text,
}

/// [`read_table`], with CSV dates and times read as `dates` says.
pub fn read_table_with(path: &Path, dates: Dates) -> Result<Table, ReadError> {
    let mut file = open(path)?;
    let batches = if is_parquet(path, &mut file)? {
        read_parquet(path, file)?
    } else {
        read_csv(path, file, dates)?
    };
    from_batches(path, batches)
}

fn read_csv(
    path: &Path,
    mut file: File,
    dates: Dates,
) -> Result<(Arc<arrow::datatypes::Schema>, Vec<RecordBatch>), ReadError> {
    let csv_err = |source| ReadError::Csv {
        path: path.to_path_buf(),
        source,
    };
    let bytes = file_len(path, &file)?;
    if bytes == 0 {
        return Err(ReadError::Empty {
            path: path.to_path_buf(),
        });
    }
    if bytes > MAX_CSV_BYTES {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            bytes,
            limit: MAX_CSV_BYTES,
        });
    }
    let format = Format::default().with_header(true);
    let (schema, _) = format.infer_schema(&mut file, None).map_err(csv_err)?;
    let inferred = Arc::new(match dates {
        Dates::Inferred => schema,
        Dates::Text => text_where(&schema, DataType::is_temporal),
    });
    match decode_csv(path, &mut file, &format, inferred.clone()) {
        Err(ArrowError::ParseError(_)) => {
            // Inference took a value for a number that the decoder refuses: read text.
            let text = Arc::new(text_where(&inferred, |_| true));
            let batches = decode_csv(path, &mut file, &format, text.clone()).map_err(csv_err)?;
            Ok((text, batches))
        }
        decoded => Ok((inferred, decoded.map_err(csv_err)?)),
    }
}

/// `schema` with the columns whose type `pick` picks read as text.
fn text_where(schema: &Schema, pick: fn(&DataType) -> bool) -> Schema {
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .map(|f| match pick(f.data_type()) {
            true => f.as_ref().clone().with_data_type(DataType::Utf8),
            false => f.as_ref().clone(),
        })
        .collect();
    Schema::new(fields)
}

fn decode_csv(
    path: &Path,
    file: &mut File,
    format: &Format,
    schema: Arc<arrow::datatypes::Schema>,
) -> Result<Vec<RecordBatch>, ArrowError> {
    file.seek(SeekFrom::Start(0))
        .map_err(|e| ArrowError::IoError(format!("seeking {}", path.display()), e))?;
    ReaderBuilder::new(schema)
        .with_format(format.clone())
        .with_batch_size(1 << 16)
        .build(&mut *file)?
        .collect()
}

fn read_parquet(
    path: &Path,
    file: File,
) -> Result<(Arc<arrow::datatypes::Schema>, Vec<RecordBatch>), ReadError> {
    let pq_err = |source| ReadError::Parquet {
        path: path.to_path_buf(),
        source,
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(pq_err)?;
    let schema = builder.schema().clone();
    // One batch for the whole file: the columns need no concatenation (no second copy).
    let rows = builder.metadata().file_metadata().num_rows().max(1) as usize;
    let reader = builder.with_batch_size(rows).build().map_err(pq_err)?;
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| ReadError::ParquetBatch {
            path: path.to_path_buf(),
            source,
        })?;
    Ok((schema, batches))
}

/// pandas' index columns (`__index_level_N__`), which a table leaves out.
pub(super) fn is_index_column(name: &str) -> bool {
    name.starts_with("__index_level_")
}

fn from_batches(
    path: &Path,
    (schema, batches): (Arc<arrow::datatypes::Schema>, Vec<RecordBatch>),
) -> Result<Table, ReadError> {
    let mut named = Vec::new();
    for (i, field) in schema.fields().iter().enumerate() {
        if is_index_column(field.name()) {
            continue;
        }
        let column = concat_column(path, &batches, i, field.data_type())?;
        named.push((field.name().clone(), column));
    }
    Table::from_columns(path.to_path_buf(), named)
}

fn concat_column(
    path: &Path,
    batches: &[RecordBatch],
    i: usize,
    dt: &arrow::datatypes::DataType,
) -> Result<ArrayRef, ReadError> {
    let parts: Vec<&dyn arrow::array::Array> = batches.iter().map(|b| b.column(i).as_ref()).collect();
    match parts.as_slice() {
        [] => Ok(arrow::array::new_empty_array(dt)),
        [one] => Ok(arrow::array::make_array(one.to_data())),
        many => concat(many).map_err(|source| ReadError::Csv {
            path: path.to_path_buf(),
            source,
        }),
    }
}
