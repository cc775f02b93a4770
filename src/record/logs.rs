//! The logs as records read them: for each log, the segments listed when the records were
//! opened (a snapshot, as the query session's), its row index ([`crate::log::rows`]), and
//! single rows read from its segments.
//!
//! A row is read from its segment after the checks every read makes (the segment re-hashed,
//! its content a committed object, its metadata naming this log and version), decoding only
//! the pages that hold it, and is widened to the log's table schema as the query session
//! widens it (the last segment's columns, then the ones today's event schema adds, null
//! where a segment lacks them): a record reads the same fields either way. The last few
//! segments read are kept, so the events of one record cost one check per segment.

use std::sync::{Arc, Mutex, OnceLock};

use arrow::array::{ArrayRef, RecordBatch, new_null_array};
use arrow::datatypes::{Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{
    ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};
use parquet::file::metadata::PageIndexPolicy;

use super::RecordError;
use crate::log::rows::reader::Rows;
use crate::log::rows::{Entry, Kind};
use crate::log::segment::SegmentBytes;
use crate::log::{LogError, StageLog};
use crate::store::{Hash, Store};

/// Segments kept after a read.
const KEPT: usize = 8;

/// The logs of a store, each with its row index.
pub(super) struct Logs {
    logs: Vec<Log>,
    /// The segments read last: (log, version, bytes), oldest first.
    kept: Mutex<Vec<(usize, u64, Arc<SegmentBytes>)>>,
}

struct Log {
    name: String,
    log: StageLog,
    rows: Rows,
    schema: OnceLock<SchemaRef>,
}

/// An event an index lookup found: its log and entry.
#[derive(Clone, Copy, Debug)]
pub(super) struct Found<'a> {
    pub log: &'a str,
    pub entry: Entry,
}

impl Logs {
    /// Opens the logs named `names` of `store` (a log without segments finds nothing).
    pub(super) fn open(store: &Store, names: &[String]) -> Result<Self, RecordError> {
        let mut logs = Vec::new();
        for name in names {
            let log = StageLog::new(store, name)?;
            let refs = log.list()?;
            let rows = Rows::open(&log, refs, crate::events::lookup_columns(name))?;
            logs.push(Log {
                name: name.clone(),
                log,
                rows,
                schema: OnceLock::new(),
            });
        }
        Ok(Self {
            logs,
            kept: Mutex::default(),
        })
    }

    /// The entries of `kind` for `key` in the log named `log`.
    pub(super) fn find(&self, log: &str, kind: Kind, key: &Hash) -> Result<Vec<Entry>, RecordError> {
        match self.logs.iter().find(|l| l.name == log) {
            Some(l) => Ok(l.rows.find(kind, key)?),
            None => Ok(Vec::new()),
        }
    }

    /// The entries of `kind` for `key` in every log.
    pub(super) fn find_all(&self, kind: Kind, key: &Hash) -> Result<Vec<Found<'_>>, RecordError> {
        let mut out = Vec::new();
        for l in &self.logs {
            for entry in l.rows.find(kind, key)? {
                out.push(Found { log: &l.name, entry });
            }
        }
        Ok(out)
    }

    /// The event id and unit key entries of every log whose key lies in `lo..=hi`.
    pub(super) fn prefix(&self, lo: &[u8; 32], hi: &[u8; 32]) -> Result<Vec<Found<'_>>, RecordError> {
        let mut out = Vec::new();
        for l in &self.logs {
            for entry in l.rows.prefix(lo, hi)? {
                out.push(Found { log: &l.name, entry });
            }
        }
        Ok(out)
    }

    /// The row of `found`, with the columns of its log's table.
    pub(super) fn row(&self, found: &Found) -> Result<RecordBatch, RecordError> {
        let (i, l) = self
            .logs
            .iter()
            .enumerate()
            .find(|(_, l)| l.name == found.log)
            .ok_or_else(|| RecordError::NotFound(found.log.to_string()))?;
        let (version, row) = found.entry.place();
        let segment = self.segment(i, l, version)?;
        let path = &l.rows.refs()[version as usize].path;
        let batch = one_row(&segment, row).map_err(|m| LogError::damaged(path, m))?;
        let schema = self.schema(l)?;
        Ok(widen(&batch, &schema).map_err(LogError::from)?)
    }

    /// Segment `version` of log `i`, read and checked once while it is kept.
    fn segment(&self, i: usize, l: &Log, version: u64) -> Result<Arc<SegmentBytes>, RecordError> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, seg)) = kept.iter().find(|(li, v, _)| *li == i && *v == version) {
            return Ok(seg.clone());
        }
        let r = l.rows.refs().get(version as usize).ok_or_else(|| {
            LogError::damaged(
                l.log.dir(),
                format!("the index names segment {version}, which the log lacks"),
            )
        })?;
        let (seg, _) = l.log.read_with_meta(r)?;
        let seg = Arc::new(seg);
        if kept.len() == KEPT {
            kept.remove(0);
        }
        kept.push((i, version, seg.clone()));
        Ok(seg)
    }

    /// The log's table schema: its last segment's, widened by today's event schema.
    fn schema(&self, l: &Log) -> Result<SchemaRef, RecordError> {
        if let Some(s) = l.schema.get() {
            return Ok(s.clone());
        }
        let last = l
            .rows
            .refs()
            .last()
            .ok_or_else(|| RecordError::NotFound(l.name.clone()))?;
        let written = segment_schema(&l.log, last)?;
        let current = crate::events::LOGS.iter().find(|log| log.stage == l.name);
        let current = current.map(|c| c.schema()).transpose()?;
        let mut fields: Vec<Field> = written.fields().iter().map(|f| f.as_ref().clone()).collect();
        for field in current.iter().flat_map(|c| c.fields().iter()) {
            if written.field_with_name(field.name()).is_err() {
                fields.push(field.as_ref().clone().with_nullable(true));
            }
        }
        Ok(l.schema.get_or_init(|| Arc::new(Schema::new(fields))).clone())
    }
}

/// The Arrow schema a segment was written with, from its footer (an S3 segment is read).
fn segment_schema(log: &StageLog, r: &crate::log::SegmentRef) -> Result<SchemaRef, LogError> {
    if log.is_s3() {
        return log.read(r)?.schema().map_err(|m| LogError::damaged(&r.path, m));
    }
    let file = std::fs::File::open(&r.path).map_err(|e| LogError::io(&r.path, e))?;
    ParquetRecordBatchReaderBuilder::try_new(file)
        .map(|b| b.schema().clone())
        .map_err(|e| LogError::damaged(&r.path, format!("not a readable Parquet file: {e}")))
}

/// Row `row` of a segment, decoding only the pages that hold it.
fn one_row(segment: &SegmentBytes, row: u32) -> Result<RecordBatch, String> {
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
    let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(segment.bytes.clone(), options)
        .map_err(|e| format!("not a readable Parquet file: {e}"))?;
    let rows = builder.metadata().file_metadata().num_rows();
    if i64::from(row) >= rows {
        return Err(format!("the index names row {row} of a segment of {rows} rows"));
    }
    let selection = RowSelection::from(vec![RowSelector::skip(row as usize), RowSelector::select(1)]);
    let schema = builder.schema().clone();
    let batches = builder
        .with_row_selection(selection)
        .build()
        .map_err(|e| e.to_string())?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("rows do not decode: {e}"))?;
    arrow::compute::concat_batches(&schema, &batches).map_err(|e| e.to_string())
}

/// `batch` with the columns of `schema`, in its order: a column the batch lacks is null, and
/// one of another type is cast, as the query session reads an earlier segment.
fn widen(batch: &RecordBatch, schema: &Schema) -> Result<RecordBatch, arrow::error::ArrowError> {
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        match batch.column_by_name(field.name()) {
            Some(c) if c.data_type() == field.data_type() => columns.push(c.clone()),
            Some(c) => columns.push(arrow::compute::cast(c, field.data_type())?),
            None => {
                columns.push(new_null_array(field.data_type(), batch.num_rows()));
                fields.push(field.as_ref().clone().with_nullable(true));
                continue;
            }
        }
        fields.push(field.as_ref().clone());
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

/// The entries newest first ("the latest by `created_at`, then event id").
pub(super) fn newest_first(found: &mut [Found]) {
    found.sort_by_key(|f| std::cmp::Reverse(f.entry.age()));
}

/// The entries oldest first.
pub(super) fn oldest_first(found: &mut [Found]) {
    found.sort_by_key(|f| f.entry.age());
}
