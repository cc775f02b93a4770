//! Stage 5, `analyze`: the paper's tables, from SQL over the other stages' logs.
//!
//! One unit per table of `queries/` ([`catalog::TABLES`]). The unit key covers the query's
//! blake3, the heads of the four upstream logs (translate_validate, generate, execute,
//! grade), the heads of the `planned` and `fault` logs when the store has them
//! ([`LATER_TABLE_INPUTS`]), and the fingerprint of the manifests' tables, so a table is recomputed exactly
//! when something it reads changed, and a re-run over unchanged logs appends nothing.
//!
//! The result is stored as an object, a Parquet file written deterministically (one
//! partition, rows in the query's ORDER BY, no timestamps), and the event names it by
//! blake3 together with everything it was derived from:
//!
//! ```text
//! analyze event ── query_blake3 ──► queries/<table>.sql (compiled in)
//!               ── inputs ────────► translate_validate=<head> generate=<head> …
//!                                   manifests=<fingerprint>
//!               ── result_blake3 ─► store/objects/…  (Parquet)
//! ```
//!
//! Invariant: the heads are read when the stage plans and checked again when its one
//! session opens; if a log moved in between, every unit fails (nothing is committed) and
//! a re-run analyzes the new heads. `ml2b verify --rerun` recomputes every event of the
//! current heads (`stages::rederive`); that re-derivation also plans each table's
//! superseded texts ([`Analyze::with_superseded`]), so an event an earlier ml2b derived
//! from a query since changed is re-derived from the text it ran.

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::prelude::SessionContext;
use parquet::arrow::ArrowWriter;
use std::sync::Arc;
use tokio::sync::OnceCell;

use super::{Planned, Stage, StageError};
use crate::competition::Benchmark;
use crate::events::{Analysis, LATER_TABLE_INPUTS, TABLE_INPUTS};
use crate::log::{Event, EventBody, StageLog, unit_key};
use crate::query::catalog::{self, Query};
use crate::query::{Session, reference};
use crate::store::Store;

/// One unit: a table and the inputs it will read.
#[derive(Clone, Debug)]
pub struct Unit {
    query: &'static Query,
    inputs: Vec<String>,
}

/// The stage.
pub struct Analyze {
    pub bench: Arc<Benchmark>,
    pub store: Store,
    /// Only these tables (default: all).
    pub tables: Vec<String>,
    /// Also the tables' superseded texts (`catalog::SUPERSEDED`), for `verify --rerun`.
    superseded: bool,
    session: OnceCell<SessionContext>,
}

impl Analyze {
    pub fn new(bench: Arc<Benchmark>, store: Store, tables: Vec<String>) -> Self {
        Self {
            bench,
            store,
            tables,
            superseded: false,
            session: OnceCell::new(),
        }
    }

    /// The stage that also plans every superseded text of its tables: what re-derives the
    /// events of a store analyzed before a query changed (never committed as new units).
    pub fn with_superseded(self) -> Self {
        Self {
            superseded: true,
            ..self
        }
    }

    /// What a table computed now would read.
    fn inputs(&self) -> Result<Vec<String>, StageError> {
        let mut inputs = Vec::new();
        for stage in TABLE_INPUTS {
            let head = StageLog::new(&self.store, stage)?.head()?;
            let hash = head.hash.map_or_else(|| "-".to_string(), |h| h.to_hex());
            inputs.push(format!("{stage}={hash}"));
        }
        // The plan and the faults are inputs once the store holds them: a store written
        // before ml2b recorded either keeps its tables' keys (and so re-derives them as
        // they were).
        for stage in LATER_TABLE_INPUTS {
            if let Some(head) = StageLog::new(&self.store, stage)?.head()?.hash {
                inputs.push(format!("{stage}={}", head.to_hex()));
            }
        }
        let manifests = reference::fingerprint(&self.bench)
            .map_err(|e| StageError::failed("fingerprinting the manifests", e))?;
        inputs.push(format!("manifests={manifests}"));
        Ok(inputs)
    }

    async fn session(&self, planned: &[String]) -> Result<&SessionContext, StageError> {
        self.session
            .get_or_try_init(|| async {
                let ctx = Session {
                    bench: Some(&self.bench),
                }
                .open(&self.store)
                .await
                .map_err(|e| StageError::failed("opening the query session", e))?;
                if self.inputs()? != planned {
                    return Err(StageError::Moved);
                }
                Ok(ctx)
            })
            .await
    }
}

impl Stage for Analyze {
    type Body = Analysis;
    type Unit = Unit;

    fn plan(&self, _store: &Store) -> Result<Vec<Planned<Unit>>, StageError> {
        let inputs = self.inputs()?;
        let mut planned = Vec::new();
        let superseded: &[Query] = if self.superseded {
            &catalog::SUPERSEDED
        } else {
            &[]
        };
        for q in catalog::TABLES.iter().chain(superseded) {
            if !self.tables.is_empty() && !self.tables.iter().any(|t| t == q.name) {
                continue;
            }
            let params = (q.name, q.blake3(), &inputs);
            planned.push(Planned {
                key: unit_key(Analysis::STAGE, Analysis::SCHEMA_VERSION, &[], &params)?,
                upstream: Vec::new(),
                label: q.name.to_string(),
                unit: Unit {
                    query: q,
                    inputs: inputs.clone(),
                },
            });
        }
        Ok(planned)
    }

    async fn run(&self, unit: Unit) -> Result<Analysis, StageError> {
        let ctx = self.session(&unit.inputs).await?;
        let fail = |e: &(dyn std::error::Error + 'static)| StageError::Unit {
            label: unit.query.name.to_string(),
            message: crate::error::chain(e),
        };
        let (schema, batches) = crate::query::run(ctx, unit.query.sql)
            .await
            .map_err(|e| fail(&e))?;
        let bytes = parquet_bytes(&schema, &batches).map_err(|e| fail(&e))?;
        let hash = self
            .store
            .objects()
            .put(&bytes)
            .map_err(crate::log::LogError::from)?;
        Ok(Analysis {
            name: unit.query.name.to_string(),
            query_blake3: unit.query.blake3(),
            result_blake3: hash,
            rows: batches.iter().map(|b| b.num_rows() as u64).sum(),
            columns: schema.fields().iter().map(|f| f.name().clone()).collect(),
            inputs: unit.inputs,
        })
    }
}

/// A table as Parquet bytes; the same batches always give the same bytes.
pub fn parquet_bytes(
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<Vec<u8>, parquet::errors::ParquetError> {
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, schema.clone(), None)?;
    for b in batches {
        w.write(b)?;
    }
    w.close()?;
    Ok(buf)
}

/// The latest analyze event of each table of the catalog, in catalog order.
pub fn latest(store: &Store) -> Result<Vec<Event<Analysis>>, StageError> {
    let events = StageLog::new(store, Analysis::STAGE)?.read_events::<Analysis>(0)?;
    let mut out = Vec::new();
    for q in &catalog::TABLES {
        if let Some(e) = events.iter().rev().find(|e| e.body.name == q.name) {
            out.push(e.clone());
        }
    }
    Ok(out)
}

/// Reads a stored table back.
pub fn load(store: &Store, analysis: &Analysis) -> Result<(SchemaRef, Vec<RecordBatch>), StageError> {
    let bytes = store
        .objects()
        .get(&analysis.result_blake3)
        .map_err(crate::log::LogError::from)?;
    let builder =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))
            .map_err(|e| StageError::failed(format!("table {}", analysis.name), e))?;
    let schema = builder.schema().clone();
    let reader = builder
        .build()
        .map_err(|e| StageError::failed(format!("table {}", analysis.name), e))?;
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| StageError::failed(format!("table {}", analysis.name), e))?;
    Ok((schema, batches))
}
