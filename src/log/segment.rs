//! One segment: a Parquet file of events plus ml2b's key-value metadata.
//!
//! Parquet key-value metadata of every segment:
//! ```text
//! ml2b.format         "ml2b-segment/1"
//! ml2b.stage          stage name          ml2b.stage_version  body schema version
//! ml2b.seq            its version number  ml2b.parent         hash of segment seq-1 ("" for 0)
//! ml2b.config         config hash or ""   ml2b.version        ml2b release that wrote it
//! ml2b.created_at     RFC 3339            ml2b.host           writer's host
//! ml2b.events         number of rows
//! ```
//! The segment's own hash is the BLAKE3 hash of the whole file; it is not
//! stored inside the file but is the file's object name, and the next segment
//! names it as its parent.

use std::sync::Arc;

use arrow::array::RecordBatch;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use parquet::arrow::ArrowWriter;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::reader::ChunkReader;
use parquet::schema::types::ColumnPath;

use super::LogError;
use crate::store::Hash;

/// The segment format tag.
pub const FORMAT: &str = "ml2b-segment/1";

/// What a segment says about itself.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SegmentMeta {
    pub stage: String,
    pub stage_version: u32,
    pub seq: u64,
    pub parent: Option<Hash>,
    pub config: Option<Hash>,
    pub ml2b_version: String,
    pub created_at: DateTime<Utc>,
    pub host: String,
    pub events: u64,
}

impl SegmentMeta {
    fn to_key_values(&self) -> Vec<KeyValue> {
        let opt = |h: &Option<Hash>| h.map(|h| h.to_hex()).unwrap_or_default();
        [
            ("ml2b.format", FORMAT.to_string()),
            ("ml2b.stage", self.stage.clone()),
            ("ml2b.stage_version", self.stage_version.to_string()),
            ("ml2b.seq", self.seq.to_string()),
            ("ml2b.parent", opt(&self.parent)),
            ("ml2b.config", opt(&self.config)),
            ("ml2b.version", self.ml2b_version.clone()),
            ("ml2b.created_at", self.created_at.to_rfc3339()),
            ("ml2b.host", self.host.clone()),
            ("ml2b.events", self.events.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| KeyValue::new(k.to_string(), v))
        .collect()
    }

    fn from_key_values(kv: &[KeyValue]) -> Result<Self, String> {
        let get = |k: &str| {
            kv.iter()
                .find(|e| e.key == k)
                .and_then(|e| e.value.clone())
                .ok_or_else(|| format!("metadata key `{k}` is missing"))
        };
        let num = |k: &str| {
            get(k)?
                .parse::<u64>()
                .map_err(|_| format!("metadata key `{k}` is not a number"))
        };
        let hash = |k: &str| -> Result<Option<Hash>, String> {
            let v = get(k)?;
            (!v.is_empty())
                .then(|| v.parse().map_err(|_| format!("metadata key `{k}` is not a hash")))
                .transpose()
        };
        if get("ml2b.format")? != FORMAT {
            return Err(format!("not an {FORMAT} file"));
        }
        let created_at = DateTime::parse_from_rfc3339(&get("ml2b.created_at")?)
            .map_err(|_| "metadata key `ml2b.created_at` is not RFC 3339".to_string())?;
        Ok(Self {
            stage: get("ml2b.stage")?,
            stage_version: u32::try_from(num("ml2b.stage_version")?).map_err(|e| e.to_string())?,
            seq: num("ml2b.seq")?,
            parent: hash("ml2b.parent")?,
            config: hash("ml2b.config")?,
            ml2b_version: get("ml2b.version")?,
            created_at: created_at.with_timezone(&Utc),
            host: get("ml2b.host")?,
            events: num("ml2b.events")?,
        })
    }
}

fn writer_properties(meta: &SegmentMeta) -> WriterProperties {
    let mut builder = WriterProperties::builder();
    // Hash columns are unique random hex: a dictionary or min/max statistics
    // would cost time and buy nothing.
    for col in ["event_id", "unit_key", "upstream.list.item"] {
        let path = ColumnPath::from(col.split('.').map(str::to_string).collect::<Vec<_>>());
        builder = builder
            .set_column_dictionary_enabled(path.clone(), false)
            .set_column_statistics_enabled(path, EnabledStatistics::None);
    }
    builder
        .set_compression(Compression::SNAPPY)
        .set_created_by(format!("ml2b {}", meta.ml2b_version))
        .set_key_value_metadata(Some(meta.to_key_values()))
        .build()
}

/// Encodes a batch as segment bytes.
pub fn encode(batch: &RecordBatch, meta: &SegmentMeta) -> Result<Vec<u8>, LogError> {
    let mut buf = Vec::with_capacity(4096 + batch.get_array_memory_size() / 2);
    let props = writer_properties(meta);
    let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props))?;
    w.write(batch)?;
    w.close()?;
    Ok(buf)
}

/// Reads a segment's metadata from its footer alone, without decoding a row.
pub fn read_meta(file: std::fs::File) -> Result<SegmentMeta, String> {
    meta_of(file)
}

fn meta_of<R: ChunkReader + 'static>(reader: R) -> Result<SegmentMeta, String> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(reader)
        .map_err(|e| format!("not a readable Parquet file: {e}"))?;
    let kv = builder.metadata().file_metadata().key_value_metadata();
    SegmentMeta::from_key_values(kv.map(Vec::as_slice).unwrap_or_default())
}

/// Segment bytes whose hash has been checked.
pub struct SegmentBytes {
    pub hash: Hash,
    pub bytes: Bytes,
}

impl SegmentBytes {
    /// Reads the segment's metadata.
    pub fn meta(&self) -> Result<SegmentMeta, String> {
        meta_of(self.bytes.clone())
    }

    /// Decodes all rows, or only the named columns.
    pub fn batches(&self, columns: Option<&[&str]>) -> Result<Vec<RecordBatch>, String> {
        let builder = ParquetRecordBatchReaderBuilder::try_new(self.bytes.clone())
            .map_err(|e| format!("not a readable Parquet file: {e}"))?;
        let builder = match columns {
            None => builder,
            Some(cols) => {
                let mask = ProjectionMask::columns(builder.parquet_schema(), cols.iter().copied());
                builder.with_projection(mask)
            }
        };
        let reader = builder
            .with_batch_size(64 * 1024)
            .build()
            .map_err(|e| e.to_string())?;
        reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("rows do not decode: {e}"))
    }

    /// The schema written in the segment.
    pub fn schema(&self) -> Result<Arc<arrow::datatypes::Schema>, String> {
        ParquetRecordBatchReaderBuilder::try_new(self.bytes.clone())
            .map(|b| b.schema().clone())
            .map_err(|e| format!("not a readable Parquet file: {e}"))
    }
}
