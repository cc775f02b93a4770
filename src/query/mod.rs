//! SQL over the event logs with DataFusion.
//!
//! Each stage log is one table named after the stage, registered from its
//! committed segment list only (never a directory glob, so a staging file or a
//! stray file is never read). Every segment is checked as `ml2b verify` checks it
//! before it is registered (re-hashed, its metadata naming this stage and its file's
//! version, its parent the previous segment): a damaged log, or a segment copied to
//! another version or into another stage's log, fails the query instead of answering
//! it. A stage of the pipeline that has not run yet, or whose log folder holds no
//! segment, is an empty table with its event schema, so every query plans on any store.
//! With a benchmark root, the manifests are tables too ([`reference`]) and the views of
//! `queries/views/` are registered
//! ([`catalog`]), each computed on first use and kept for the columns read ([`view`]); the
//! statistics SQL cannot express are aggregate functions ([`udf`]), and the views find
//! repeated keys through [`key_hash`]. The session allows queries only — no DDL, DML or `SET`.
//! A value a query depends on reaches the engine as a value, never spliced into SQL text:
//! as a parameter of [`plan`] or a literal of a `DataFrame`'s expressions ([`run_frame`]).
//!
//! A session plans its queries on one partition, so every float sum a query adds over the
//! logs is added in one order (with two partitions, `var_pop` moved in its 17th digit
//! between runs). The views are computed on every core ([`view`]): their rows come in no
//! fixed order, and their floats are added by the order-free `stable_` aggregates
//! ([`udf`]), which every table of `queries/` uses too. So a table's bits are a function of
//! the logs alone: `ml2b query` and the analyze stage give the same digits, run after run.

pub mod catalog;
pub mod key_hash;
pub mod reference;
pub mod udf;
pub mod view;

#[cfg(test)]
mod leaderboard_tests;

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{Schema, SchemaRef};
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::error::DataFusionError;
use datafusion::execution::context::SQLOptions;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::prelude::{DataFrame, SessionConfig, SessionContext};
use datafusion::scalar::ScalarValue;

use datafusion::datasource::MemTable;

use crate::competition::Benchmark;
use crate::log::{LogError, StageLog, event, stages};
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
    /// A view of `queries/views/` does not plan on this store.
    #[error("view `{0}` (queries/views/{0}.sql) is invalid")]
    View(&'static str, #[source] DataFusionError),
    /// A log could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
}

impl crate::error::IsInputError for QueryError {
    fn is_input_error(&self) -> bool {
        matches!(self, Self::Invalid(_))
    }
}
crate::error::input_error!(QueryError);

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

/// What a session sees besides the logs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Session<'a> {
    /// The benchmark whose manifests become tables and whose views are registered.
    pub bench: Option<&'a Benchmark>,
}

/// A session with one table per stage log (and see [`Session`]).
pub async fn session(store: &Store) -> Result<SessionContext, QueryError> {
    Session::default().open(store).await
}

impl Session<'_> {
    /// Opens the session over `store`.
    pub async fn open(&self, store: &Store) -> Result<SessionContext, QueryError> {
        let config = SessionConfig::new()
            .with_information_schema(false)
            .with_target_partitions(1);
        let ctx = SessionContext::new_with_config(config);
        register_s3(&ctx, store)?;
        udf::register(&ctx);
        ctx.register_udf(key_hash::udf());
        register_logs(&ctx, store).await?;
        if let Some(bench) = self.bench {
            reference::register(&ctx, bench).map_err(QueryError::Failed)?;
            for view in catalog::VIEWS {
                let df = ctx
                    .sql(view.sql)
                    .await
                    .map_err(|e| QueryError::View(view.name, e))?;
                ctx.register_table(
                    view.name,
                    Arc::new(self::view::MaterializedView::new(view.name, df)),
                )
                .map_err(QueryError::Failed)?;
            }
        }
        Ok(ctx)
    }
}

/// Lets the engine read an S3 store's segments: their paths are their `s3://` URLs.
fn register_s3(ctx: &SessionContext, store: &Store) -> Result<(), QueryError> {
    let Some(s3) = store.s3() else {
        return Ok(());
    };
    let (url, client) = s3.new_client().map_err(LogError::from)?;
    let url = ObjectStoreUrl::parse(url).map_err(QueryError::Failed)?;
    ctx.register_object_store(url.as_ref(), client);
    Ok(())
}

/// One table per stage log of `store`, and an empty one for each log of the pipeline that
/// has no segment yet (with its event schema; a folder of another stage with no segment
/// has the common columns).
async fn register_logs(ctx: &SessionContext, store: &Store) -> Result<(), QueryError> {
    let schemas = crate::events::LOGS
        .iter()
        .map(|log| Ok((log.stage, log.schema()?)))
        .collect::<Result<Vec<_>, LogError>>()?;
    let mut registered = Vec::new();
    for stage in stages(store)? {
        let current = schemas
            .iter()
            .find(|(s, _)| *s == stage)
            .map(|(_, schema)| schema);
        if register_stage(ctx, &StageLog::new(store, &stage)?, current).await? {
            registered.push(stage);
        } else if current.is_none() {
            register_empty(ctx, &stage, event::common_schema())?;
        }
    }
    for (stage, schema) in schemas {
        if !registered.iter().any(|s| s == stage) {
            register_empty(ctx, stage, schema)?;
        }
    }
    Ok(())
}

fn register_empty(ctx: &SessionContext, stage: &str, schema: Schema) -> Result<(), QueryError> {
    let table = MemTable::try_new(Arc::new(schema), vec![vec![]]).map_err(QueryError::Failed)?;
    ctx.register_table(stage, Arc::new(table))
        .map_err(QueryError::Failed)?;
    Ok(())
}

/// Registers a stage's segments as one table; `false` when the log has none. Every
/// segment is checked as a reader checks it ([`StageLog::checked`]) before the engine
/// sees its path. The table's schema is the last segment's, widened by the columns today's
/// event schema (`current`) adds: a log written before a column existed reads it as null,
/// so the views can name every column of every schema version.
async fn register_stage(
    ctx: &SessionContext,
    log: &StageLog,
    current: Option<&Schema>,
) -> Result<bool, QueryError> {
    let refs = log.checked()?;
    let Some(last) = refs.last() else {
        return Ok(false);
    };
    let written = log
        .read(last)?
        .schema()
        .map_err(|m| LogError::damaged(&last.path, m))?;
    let mut fields: Vec<arrow::datatypes::FieldRef> = written.fields().iter().cloned().collect();
    for field in current.map(|c| c.fields().iter()).into_iter().flatten() {
        if written.field_with_name(field.name()).is_err() {
            fields.push(Arc::new(field.as_ref().clone().with_nullable(true)));
        }
    }
    let schema: SchemaRef = Arc::new(Schema::new(fields));
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
    Ok(true)
}

/// Runs one read-only statement.
pub async fn run(ctx: &SessionContext, sql: &str) -> Result<(SchemaRef, Vec<RecordBatch>), QueryError> {
    run_frame(plan(ctx, sql, Vec::new()).await).await
}

/// Plans one read-only statement (no DDL, DML or `SET`) whose placeholders (`$1`, `$2`, …)
/// are bound to `params` in order: a value reaches the engine as a value, never as SQL text.
pub async fn plan(
    ctx: &SessionContext,
    sql: &str,
    params: Vec<ScalarValue>,
) -> Result<DataFrame, DataFusionError> {
    let options = SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false);
    let df = ctx.sql_with_options(sql, options).await?;
    if params.is_empty() {
        return Ok(df);
    }
    df.with_param_values(params)
}

/// Runs a plan: one of [`plan`], or a `DataFrame` built with DataFusion's expression API
/// (`ctx.table(…)?.filter(col(…).eq(lit(…)))…`). A failure to build it (an unknown table or
/// column, a statement that does not parse) is [`QueryError::Invalid`], as for [`run`].
pub async fn run_frame(
    df: Result<DataFrame, DataFusionError>,
) -> Result<(SchemaRef, Vec<RecordBatch>), QueryError> {
    let df = df.map_err(QueryError::classify)?;
    let schema: SchemaRef = Arc::new(df.schema().as_arrow().clone());
    let batches = df.collect().await.map_err(QueryError::classify)?;
    Ok((schema, batches))
}
