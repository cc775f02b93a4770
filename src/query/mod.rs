//! SQL over the event logs with DataFusion.
//!
//! Each stage log is one table named after the stage, registered from its
//! committed segment list only (never a directory glob, so a staging file or a
//! stray file is never read). Every segment is re-hashed before it is
//! registered: a damaged log fails the query instead of answering it. The
//! session allows queries only — no DDL, DML or `SET` — so nothing but the logs
//! is visible.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::error::DataFusionError;
use datafusion::execution::context::SQLOptions;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::log::{LogError, StageLog, stages};
use crate::store::Store;

/// A failure to answer a query.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The statement is not valid SQL or refers to something that does not exist.
    #[error("invalid query")]
    Invalid(#[source] DataFusionError),
    /// The engine failed while running a valid query.
    #[error("query failed")]
    Failed(#[source] DataFusionError),
    /// A log could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
}

impl QueryError {
    fn classify(e: DataFusionError) -> Self {
        match e.find_root() {
            DataFusionError::SQL(..)
            | DataFusionError::Plan(_)
            | DataFusionError::SchemaError(..)
            | DataFusionError::NotImplemented(_) => Self::Invalid(e),
            _ => Self::Failed(e),
        }
    }
}

/// A session with one table per stage log.
pub async fn session(store: &Store) -> Result<SessionContext, QueryError> {
    let config = SessionConfig::new().with_information_schema(false);
    let ctx = SessionContext::new_with_config(config);
    for stage in stages(store)? {
        register_stage(&ctx, &StageLog::new(store, &stage)?).await?;
    }
    Ok(ctx)
}

async fn register_stage(ctx: &SessionContext, log: &StageLog) -> Result<(), QueryError> {
    let refs = log.list()?;
    let Some(last) = refs.last() else { return Ok(()) };
    let schema: SchemaRef = log
        .read(last)?
        .schema()
        .map_err(|m| LogError::damaged(&last.path, m))?;
    for r in &refs[..refs.len() - 1] {
        log.check(r)?;
    }
    let urls = refs
        .iter()
        .map(|r| ListingTableUrl::parse(r.path.to_string_lossy()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(QueryError::Failed)?;
    let options = ListingOptions::new(Arc::new(ParquetFormat::default())).with_file_extension(".parquet");
    let config = ListingTableConfig::new_with_multi_paths(urls)
        .with_listing_options(options)
        .with_schema(schema);
    let table = ListingTable::try_new(config).map_err(QueryError::Failed)?;
    ctx.register_table(log.stage(), Arc::new(table))
        .map_err(QueryError::Failed)?;
    Ok(())
}

/// Runs one read-only statement.
pub async fn run(ctx: &SessionContext, sql: &str) -> Result<(SchemaRef, Vec<RecordBatch>), QueryError> {
    let options = SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false);
    let df = ctx
        .sql_with_options(sql, options)
        .await
        .map_err(QueryError::classify)?;
    let schema: SchemaRef = Arc::new(df.schema().as_arrow().clone());
    let batches = df.collect().await.map_err(QueryError::classify)?;
    Ok((schema, batches))
}
