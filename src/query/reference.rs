//! The benchmark's manifests as SQL tables, beside the stage logs.
//!
//! `languages(code, name, tier, position)` from `manifests/languages.toml` (position = the
//! paper's order, 0-based) and `competitions(id, title, domain, task, metric, direction,
//! rows, features, classes, domain_term_density)` from `manifests/competitions/*.toml`,
//! sorted by id. [`fingerprint`] hashes both tables' content, so an analyze event can name
//! the manifests it read as it names the logs' heads.

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::error::DataFusionError;
use datafusion::prelude::SessionContext;

use crate::competition::Benchmark;
use crate::events::serde_name;

fn strings(v: impl IntoIterator<Item = String>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(v))
}

fn field(name: &str, t: DataType) -> Field {
    Field::new(name, t, false)
}

/// The `languages` table.
pub fn languages(bench: &Benchmark) -> Result<RecordBatch, arrow::error::ArrowError> {
    let all = bench.languages.all();
    let schema = Schema::new(vec![
        field("code", DataType::Utf8),
        field("name", DataType::Utf8),
        field("tier", DataType::Utf8),
        field("position", DataType::UInt32),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            strings(all.iter().map(|l| l.code.clone())),
            strings(all.iter().map(|l| l.name.clone())),
            strings(all.iter().map(|l| serde_name(&l.tier))),
            Arc::new(UInt32Array::from_iter_values(0..all.len() as u32)),
        ],
    )
}

/// The `competitions` table.
pub fn competitions(bench: &Benchmark) -> Result<RecordBatch, arrow::error::ArrowError> {
    let mut all: Vec<_> = bench.competitions.iter().map(|c| &c.manifest).collect();
    all.sort_by(|a, b| a.id.cmp(&b.id));
    let schema = Schema::new(vec![
        field("id", DataType::Utf8),
        field("title", DataType::Utf8),
        field("domain", DataType::Utf8),
        field("task", DataType::Utf8),
        field("metric", DataType::Utf8),
        field("direction", DataType::Utf8),
        field("rows", DataType::UInt64),
        field("features", DataType::UInt64),
        field("classes", DataType::UInt64),
        field("domain_term_density", DataType::Float64),
    ]);
    let ch = |f: fn(&crate::manifest::competition::Characteristics) -> u64| -> ArrayRef {
        Arc::new(UInt64Array::from_iter_values(
            all.iter().map(|m| f(&m.characteristics)),
        ))
    };
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            strings(all.iter().map(|m| m.id.clone())),
            strings(all.iter().map(|m| m.title.clone())),
            strings(all.iter().map(|m| serde_name(&m.domain))),
            strings(all.iter().map(|m| serde_name(&m.task))),
            strings(all.iter().map(|m| m.metric.name.clone())),
            strings(all.iter().map(|m| serde_name(&m.metric.direction))),
            ch(|c| c.rows),
            ch(|c| c.features),
            ch(|c| c.classes),
            Arc::new(Float64Array::from_iter_values(
                all.iter().map(|m| m.characteristics.domain_term_density),
            )),
        ],
    )
}

/// Registers both tables on `ctx`.
pub fn register(ctx: &SessionContext, bench: &Benchmark) -> Result<(), DataFusionError> {
    for (name, batch) in [
        ("languages", languages(bench)?),
        ("competitions", competitions(bench)?),
    ] {
        let table = MemTable::try_new(batch.schema(), vec![vec![batch]])?;
        ctx.register_table(name, Arc::new(table))?;
    }
    Ok(())
}

/// The blake3 of both tables' content (their CSV form, floats printed round-trip exact).
pub fn fingerprint(bench: &Benchmark) -> Result<String, arrow::error::ArrowError> {
    let mut hasher = blake3::Hasher::new();
    for batch in [languages(bench)?, competitions(bench)?] {
        let mut buf = Vec::new();
        arrow::csv::WriterBuilder::new()
            .with_header(true)
            .build(&mut buf)
            .write(&batch)?;
        hasher.update(&(buf.len() as u64).to_le_bytes());
        hasher.update(&buf);
    }
    Ok(hasher.finalize().to_hex().to_string())
}
