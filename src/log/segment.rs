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
//! ml2b.slurm_job      the Slurm job that wrote it (an array's id)     } only when written
//! ml2b.slurm_task     its array task id ("" outside an array)         } under Slurm
//! ```
//! One segment is committed by one process, so where a segment's events ran is its host
//! and, under Slurm, its job and array task: kept in the footer, not in a column, so that
//! the Arrow schema of every stage stays as it was and segments written before these keys
//! existed read as written outside Slurm.
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
    /// The Slurm job and array task that wrote it, if any.
    pub slurm: Option<SlurmTask>,
}

/// The Slurm job (and array task) a process runs in.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SlurmTask {
    /// The array's job id (`SLURM_ARRAY_JOB_ID`), else the job's (`SLURM_JOB_ID`).
    pub job: String,
    /// The array task id (`SLURM_ARRAY_TASK_ID`), in an array.
    pub task: Option<u32>,
}

impl SlurmTask {
    /// The task this process runs in, from Slurm's environment; `None` outside Slurm.
    pub fn from_env() -> Option<Self> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let task = var("SLURM_ARRAY_TASK_ID").and_then(|t| t.trim().parse().ok());
        let job = var("SLURM_ARRAY_JOB_ID").filter(|_| task.is_some());
        Some(Self {
            job: job.or_else(|| var("SLURM_JOB_ID"))?.trim().to_string(),
            task,
        })
    }
}

/// Slurm's own notation: `JOB_TASK` for an array task, `JOB` otherwise.
impl std::fmt::Display for SlurmTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.task {
            Some(task) => write!(f, "{}_{task}", self.job),
            None => write!(f, "{}", self.job),
        }
    }
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
        .chain(self.slurm.iter().flat_map(|s| {
            let task = s.task.map(|t| t.to_string()).unwrap_or_default();
            [("ml2b.slurm_job", s.job.clone()), ("ml2b.slurm_task", task)]
        }))
        .map(|(k, v)| KeyValue::new(k.to_string(), v))
        .collect()
    }

    /// The optional Slurm keys: absent outside Slurm and in earlier segments.
    fn slurm_of(kv: &[KeyValue]) -> Result<Option<SlurmTask>, String> {
        let get = |k: &str| kv.iter().find(|e| e.key == k).and_then(|e| e.value.clone());
        let Some(job) = get("ml2b.slurm_job") else {
            return Ok(None);
        };
        let task = get("ml2b.slurm_task")
            .filter(|t| !t.is_empty())
            .map(|t| {
                t.parse()
                    .map_err(|_| format!("metadata key `ml2b.slurm_task` is not a task id: `{t}`"))
            })
            .transpose()?;
        Ok(Some(SlurmTask { job, task }))
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
            slurm: Self::slurm_of(kv)?,
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

/// Parses `{v:020}.parquet`.
pub fn parse_segment_name(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".parquet")?;
    (digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// The file name of version `v`.
pub fn segment_name(v: u64) -> String {
    format!("{v:020}.parquet")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(slurm: Option<SlurmTask>) -> SegmentMeta {
        SegmentMeta {
            stage: "tick".into(),
            stage_version: 1,
            seq: 3,
            parent: Some(Hash::of(b"parent")),
            config: None,
            ml2b_version: "0.0.0".into(),
            created_at: DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
                .unwrap()
                .with_timezone(&Utc),
            host: "n1".into(),
            events: 2,
            slurm,
        }
    }

    #[test]
    fn the_slurm_task_round_trips_and_its_absence_reads_as_none() {
        for slurm in [
            None,
            Some(SlurmTask {
                job: "41".into(),
                task: Some(7),
            }),
            Some(SlurmTask {
                job: "42".into(),
                task: None,
            }),
        ] {
            let m = meta(slurm);
            assert_eq!(SegmentMeta::from_key_values(&m.to_key_values()).unwrap(), m);
        }
        let outside = meta(None).to_key_values();
        assert!(
            outside.iter().all(|kv| !kv.key.starts_with("ml2b.slurm")),
            "{outside:?}"
        );
        let mut bad = meta(Some(SlurmTask {
            job: "41".into(),
            task: Some(7),
        }))
        .to_key_values();
        bad.last_mut().unwrap().value = Some("x".into());
        let err = SegmentMeta::from_key_values(&bad).unwrap_err();
        assert!(err.contains("ml2b.slurm_task"), "{err}");
    }

    #[test]
    fn the_slurm_task_comes_from_the_environment_slurm_sets() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        let array = SlurmTask::from_vars(env(&[
            ("SLURM_JOB_ID", "57"),
            ("SLURM_ARRAY_JOB_ID", "50"),
            ("SLURM_ARRAY_TASK_ID", "7"),
        ]));
        assert_eq!(
            array,
            Some(SlurmTask {
                job: "50".into(),
                task: Some(7)
            })
        );
        assert_eq!(array.unwrap().to_string(), "50_7");
        let job = SlurmTask::from_vars(env(&[("SLURM_JOB_ID", "57")]));
        assert_eq!(job.unwrap().to_string(), "57");
        assert_eq!(SlurmTask::from_vars(env(&[])), None);
    }
}
