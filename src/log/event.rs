//! Typed events and their Arrow form.
//!
//! An [`Event`] is one finished unit of a stage: its unit key, the upstream
//! event ids it consumed, a stage-specific body, and provenance (time, host,
//! duration). The event id hashes everything except provenance (see
//! [`Event::compute_id`]), so a deterministic stage re-derives identical ids.
//!
//! Arrow layout of a segment (one row per event):
//! ```text
//! event_id: utf8 | unit_key: utf8 | upstream: list<utf8> | <body fields…> |
//! created_at: timestamp[us, UTC] | host: utf8 | duration_ms: uint64
//! ```
//! Body fields come from the body type through `serde_arrow`; hashes are 64 hex
//! digits so that SQL can join on them.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, ListArray, ListBuilder, RecordBatch, StringArray, StringBuilder,
    TimestampMicrosecondArray, UInt64Array,
};
use arrow::datatypes::{DataType, Field, FieldRef, Schema, TimeUnit};
use chrono::{DateTime, TimeZone, Utc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_arrow::schema::{SchemaLike, TracingOptions};

use super::LogError;
use crate::store::{Hash, KeyHasher};

/// The closed set of fields every event has besides its body.
pub const COMMON_COLUMNS: [&str; 6] = [
    "event_id",
    "unit_key",
    "upstream",
    "created_at",
    "host",
    "duration_ms",
];

/// The body of one stage's events.
///
/// `STAGE` names the log (`store/log/<STAGE>/`) and the SQL table;
/// `SCHEMA_VERSION` changes whenever the body or the stage's semantics change,
/// and is part of every unit key and event id.
pub trait EventBody: Serialize + DeserializeOwned + Clone + Send + Sync + 'static {
    /// Stage name: lowercase ASCII letters, digits and `_`.
    const STAGE: &'static str;
    /// Schema version of the body.
    const SCHEMA_VERSION: u32;
    /// The columns whose values, together, another log's event finds this one by (an
    /// execution by the competition, format and code of the generation it ran): the row
    /// index keeps one entry per event for them ([`crate::log::rows`]).
    const LOOKUP: &'static [&'static str] = &[];

    /// The tokens a model wrote for this event (a generation's, a translation's answer):
    /// what progress counts as tokens per second. None by default.
    fn output_tokens(&self) -> u64 {
        0
    }
}

/// When, where and how long: kept out of every hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// When the unit finished (microsecond precision).
    pub created_at: DateTime<Utc>,
    /// The host that ran it.
    pub host: String,
    /// How long the unit took.
    pub duration_ms: u64,
}

impl Provenance {
    /// Now, on this host.
    pub fn now(duration_ms: u64) -> Self {
        let now = Utc::now();
        let micros = now.timestamp_micros();
        Self {
            created_at: Utc.timestamp_micros(micros).single().unwrap_or(now),
            host: host_name(),
            duration_ms,
        }
    }
}

/// This machine's host name (lossy).
pub fn host_name() -> String {
    gethostname::gethostname().to_string_lossy().into_owned()
}

/// One committed (or about to be committed) event.
#[derive(Clone, Debug, PartialEq)]
pub struct Event<B> {
    pub id: Hash,
    pub unit_key: Hash,
    pub upstream: Vec<Hash>,
    pub body: B,
    pub provenance: Provenance,
}

impl<B: EventBody> Event<B> {
    /// Builds an event, computing its id.
    pub fn new(
        unit_key: Hash,
        upstream: Vec<Hash>,
        body: B,
        provenance: Provenance,
    ) -> Result<Self, LogError> {
        let id = Self::compute_id(&unit_key, &upstream, &body)?;
        Ok(Self {
            id,
            unit_key,
            upstream,
            body,
            provenance,
        })
    }

    /// The id: stage, schema version, unit key, upstream ids and body.
    pub fn compute_id(unit_key: &Hash, upstream: &[Hash], body: &B) -> Result<Hash, LogError> {
        let mut k = KeyHasher::new("event");
        k.str(B::STAGE).u64(B::SCHEMA_VERSION.into());
        k.hash(unit_key).hashes(upstream);
        k.json(body).map_err(LogError::Json)?;
        Ok(k.finish())
    }
}

/// A unit's key: stage, schema version, upstream ids and result-changing parameters.
pub fn unit_key<P: Serialize + ?Sized>(
    stage: &str,
    schema_version: u32,
    upstream: &[Hash],
    params: &P,
) -> Result<Hash, LogError> {
    let mut k = KeyHasher::new("unit");
    k.str(stage).u64(schema_version.into()).hashes(upstream);
    k.json(params).map_err(LogError::Json)?;
    Ok(k.finish())
}

/// The Arrow fields of a body type.
pub fn body_fields<B: EventBody>() -> Result<Vec<FieldRef>, LogError> {
    let options = TracingOptions::default()
        .strings_as_large_utf8(false)
        .sequence_as_large_list(false)
        .enums_without_data_as_strings(true);
    let fields =
        crate::store::traced(|| Vec::<FieldRef>::from_type::<B>(options)).map_err(LogError::Arrow)?;
    let fields: Vec<FieldRef> = fields.into_iter().map(plain_strings).collect();
    if let Some(f) = fields
        .iter()
        .find(|f| COMMON_COLUMNS.contains(&f.name().as_str()))
    {
        return Err(LogError::Schema {
            stage: B::STAGE.to_string(),
            reason: format!("body field `{}` shadows a common column", f.name()),
        });
    }
    Ok(fields)
}

/// A closed set of a body (an enum of names: a format, an outcome) is traced as a
/// dictionary of strings; its column is a plain string column, as it was before bodies
/// typed it, so segments keep one schema whatever the Rust type.
fn plain_strings(field: FieldRef) -> FieldRef {
    match field.data_type() {
        DataType::Dictionary(_, value) if value.as_ref() == &DataType::Utf8 => Arc::new(
            Field::new(field.name(), DataType::Utf8, field.is_nullable())
                .with_metadata(field.metadata().clone()),
        ),
        _ => field,
    }
}

/// The full Arrow schema of a stage's segments.
pub fn schema<B: EventBody>() -> Result<Schema, LogError> {
    let body = body_fields::<B>()?;
    Ok(assemble_schema(&body))
}

/// The schema of the common columns alone: a log of an unknown stage with no segment.
pub fn common_schema() -> Schema {
    assemble_schema(&[])
}

fn assemble_schema(body: &[FieldRef]) -> Schema {
    let hex = |n: &str| Arc::new(Field::new(n, DataType::Utf8, false));
    let item = Arc::new(Field::new("item", DataType::Utf8, true));
    let mut fields: Vec<FieldRef> = vec![
        hex("event_id"),
        hex("unit_key"),
        Arc::new(Field::new("upstream", DataType::List(item), false)),
    ];
    fields.extend(body.iter().cloned());
    fields.push(Arc::new(Field::new(
        "created_at",
        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        false,
    )));
    fields.push(hex("host"));
    fields.push(Arc::new(Field::new("duration_ms", DataType::UInt64, false)));
    Schema::new(fields)
}

/// Events to one record batch.
pub fn to_batch<B: EventBody>(events: &[Event<B>]) -> Result<RecordBatch, LogError> {
    let body_fields = body_fields::<B>()?;
    let bodies: Vec<&B> = events.iter().map(|e| &e.body).collect();
    let body = serde_arrow::to_record_batch(&body_fields, &bodies).map_err(LogError::Arrow)?;
    let mut columns: Vec<ArrayRef> = vec![
        hex_column(events.iter().map(|e| &e.id)),
        hex_column(events.iter().map(|e| &e.unit_key)),
        upstream_column(events),
    ];
    columns.extend(body.columns().iter().cloned());
    columns.extend(provenance_columns(events));
    let schema = Arc::new(assemble_schema(&body_fields));
    Ok(RecordBatch::try_new(schema, columns)?)
}

fn hex_column<'a>(hashes: impl Iterator<Item = &'a Hash>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(hashes.map(Hash::to_hex)))
}

fn upstream_column<B>(events: &[Event<B>]) -> ArrayRef {
    let mut b =
        ListBuilder::new(StringBuilder::new()).with_field(Arc::new(Field::new("item", DataType::Utf8, true)));
    for e in events {
        for h in &e.upstream {
            b.values().append_value(h.to_hex());
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

fn provenance_columns<B>(events: &[Event<B>]) -> [ArrayRef; 3] {
    let times = events.iter().map(|e| e.provenance.created_at.timestamp_micros());
    let created = TimestampMicrosecondArray::from_iter_values(times).with_timezone("UTC");
    let hosts = StringArray::from_iter_values(events.iter().map(|e| e.provenance.host.as_str()));
    let durations = UInt64Array::from_iter_values(events.iter().map(|e| e.provenance.duration_ms));
    [Arc::new(created), Arc::new(hosts), Arc::new(durations)]
}

/// One record batch back to events.
pub fn from_batch<B: EventBody>(batch: &RecordBatch) -> Result<Vec<Event<B>>, LogError> {
    let ids = hashes(batch, "event_id")?;
    let keys = hashes(batch, "unit_key")?;
    let upstream = upstream(batch)?;
    let bodies: Vec<B> = serde_arrow::from_record_batch(&body_only(batch)?).map_err(LogError::Arrow)?;
    let provenance = provenance(batch)?;
    let rows = ids
        .into_iter()
        .zip(keys)
        .zip(upstream)
        .zip(bodies)
        .zip(provenance);
    Ok(rows
        .map(|((((id, unit_key), upstream), body), provenance)| Event {
            id,
            unit_key,
            upstream,
            body,
            provenance,
        })
        .collect())
}

fn body_only(batch: &RecordBatch) -> Result<RecordBatch, LogError> {
    let schema = batch.schema();
    let keep: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| !COMMON_COLUMNS.contains(&schema.field(i).name().as_str()))
        .collect();
    Ok(batch.project(&keep)?)
}

fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a T, LogError> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| LogError::Column(name.to_string()))
}

/// Parses a column of hex hashes.
pub fn hashes(batch: &RecordBatch, name: &str) -> Result<Vec<Hash>, LogError> {
    let col: &StringArray = column(batch, name)?;
    col.iter()
        .map(|v| {
            v.unwrap_or_default()
                .parse()
                .map_err(|_| LogError::Column(name.to_string()))
        })
        .collect()
}

/// Parses the `upstream` column: each row's list of hashes.
pub(crate) fn upstream(batch: &RecordBatch) -> Result<Vec<Vec<Hash>>, LogError> {
    let lists: &ListArray = column(batch, "upstream")?;
    let err = || LogError::Column("upstream".to_string());
    (0..lists.len())
        .map(|i| {
            let values = lists.value(i);
            let strings = values.as_any().downcast_ref::<StringArray>().ok_or_else(err)?;
            strings
                .iter()
                .map(|v| v.unwrap_or_default().parse().map_err(|_| err()))
                .collect()
        })
        .collect()
}

/// The `created_at` column: microseconds since the epoch, UTC.
pub(crate) fn created_micros(batch: &RecordBatch) -> Result<&[i64], LogError> {
    let times: &TimestampMicrosecondArray = column(batch, "created_at")?;
    Ok(times.values())
}

fn provenance(batch: &RecordBatch) -> Result<Vec<Provenance>, LogError> {
    let times: &TimestampMicrosecondArray = column(batch, "created_at")?;
    let hosts: &StringArray = column(batch, "host")?;
    let durations: &UInt64Array = column(batch, "duration_ms")?;
    (0..batch.num_rows())
        .map(|i| {
            let created_at = Utc
                .timestamp_micros(times.value(i))
                .single()
                .ok_or_else(|| LogError::Column("created_at".to_string()))?;
            Ok(Provenance {
                created_at,
                host: hosts.value(i).to_string(),
                duration_ms: durations.value(i),
            })
        })
        .collect()
}
