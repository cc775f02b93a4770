//! Views computed on first use and kept for the session, for the columns their readers use.
//!
//! A view of `queries/views/` is read by several tables, and one table often reads it several
//! times: `cells` reads `runs` twice, and a CTE that two branches of a `UNION` read is
//! planned twice. A plain DataFusion view re-runs its whole plan at every reference, so the
//! `aup` table computed the 1,000,000-row `runs` view four times. A [`MaterializedView`]
//! runs its plan once, keeps the result in memory, and answers every later scan of the
//! session that needs no other column from it.
//!
//! It computes only the columns a query reads. Every scan of a query is planned before any
//! is executed, so a scan the kept rows do not cover adds its columns to a pending set and
//! returns a [`LazyScan`]; the first of them executed computes the view once for the whole
//! pending set (the optimizer then prunes whatever the view's plan computes for the other
//! columns), and the others read that result. A later query that needs a column no kept
//! result has computes the view again, for its own columns. A session that never reads the
//! view never computes it.
//!
//! A view is computed on every core (one partition per core, whatever the session plans
//! with): its rows are the plain view's rows, in an order that may change from run to run.
//! Its values do not, as the views add floats only with the order-free `stable_`
//! aggregates; a reader that adds floats in row order (plain `sum`, `avg`) over a view may
//! see its last digit move, which is why the tables of `queries/` use `stable_` ones.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow::array::{RecordBatch, RecordBatchOptions};
use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::memory::MemorySourceConfig;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::dataframe::DataFrame;
use datafusion::error::Result;
use datafusion::execution::{SessionStateBuilder, TaskContext};
use datafusion::logical_expr::{Expr, TableType};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties, SendableRecordBatchStream,
};
use datafusion::prelude::SessionConfig;
use futures::{StreamExt, TryStreamExt};

/// A view whose rows are computed on first use and then shared by every scan they cover.
pub struct MaterializedView {
    inner: Arc<Inner>,
}

struct Inner {
    name: &'static str,
    plan: DataFrame,
    schema: SchemaRef,
    /// Columns that planned scans need and no kept result covers.
    pending: Mutex<BTreeSet<usize>>,
    /// The results kept (none covers another's columns); held across a computation so
    /// that it runs once.
    kept: tokio::sync::Mutex<Vec<Rows>>,
    /// How many times the plan ran.
    runs: AtomicUsize,
}

/// The view's rows for some of its columns.
#[derive(Clone)]
struct Rows {
    /// The view's column indices, ascending; the batches' columns are these.
    columns: Vec<usize>,
    schema: SchemaRef,
    partitions: Arc<Vec<Vec<RecordBatch>>>,
}

impl Rows {
    /// Where each of the view's `columns` is in this result, if it holds them all.
    fn positions(&self, columns: &[usize]) -> Option<Vec<usize>> {
        columns
            .iter()
            .map(|c| self.columns.binary_search(c).ok())
            .collect()
    }
}

impl MaterializedView {
    /// The view `name` of the planned query `plan`.
    pub fn new(name: &'static str, plan: DataFrame) -> Self {
        let schema = Arc::new(plan.schema().as_arrow().clone());
        Self {
            inner: Arc::new(Inner {
                name,
                plan: on_every_core(plan),
                schema,
                pending: Mutex::default(),
                kept: tokio::sync::Mutex::default(),
                runs: AtomicUsize::new(0),
            }),
        }
    }

    /// How many times the view was computed, and the column sets kept.
    #[cfg(test)]
    async fn computed(&self) -> (usize, Vec<Vec<usize>>) {
        let kept = self.inner.kept.lock().await;
        let columns = kept.iter().map(|r| r.columns.clone()).collect();
        (self.inner.runs.load(Ordering::Relaxed), columns)
    }
}

/// `plan`, to run with one partition per core (DataFusion's default) whatever its session
/// plans with; why that leaves a view's values as they are is in the module docs.
fn on_every_core(plan: DataFrame) -> DataFrame {
    let (state, logical) = plan.into_parts();
    let config = state
        .config()
        .clone()
        .with_target_partitions(SessionConfig::new().target_partitions())
        // The session's catalog (shared) already holds every table the view reads.
        .with_create_default_catalog_and_schema(false);
    let state = SessionStateBuilder::new_from_existing(state)
        .with_config(config)
        .build();
    DataFrame::new(state, logical)
}

impl Inner {
    /// A kept result holding all of `columns`, computing one (for them and every pending
    /// column) when none does.
    async fn rows(&self, columns: &[usize]) -> Result<(Rows, Vec<usize>)> {
        let mut kept = self.kept.lock().await;
        if let Some(found) = kept
            .iter()
            .find_map(|r| r.positions(columns).map(|p| (r.clone(), p)))
        {
            return Ok(found);
        }
        let mut wanted = std::mem::take(&mut *self.pending.lock().expect("pending columns"));
        wanted.extend(columns);
        // A scan that reads no column (count(*)) still needs the rows: take the first.
        if wanted.is_empty() {
            wanted.insert(0);
        }
        let rows = self.compute(wanted.into_iter().collect()).await?;
        let positions = rows.positions(columns).expect("computed for these columns");
        // A result whose columns the new one holds too is dropped: it would never be read.
        kept.retain(|old| rows.positions(&old.columns).is_none());
        kept.push(rows.clone());
        Ok((rows, positions))
    }

    async fn compute(&self, columns: Vec<usize>) -> Result<Rows> {
        let schema = Arc::new(self.schema.project(&columns)?);
        let all = self.plan.schema().columns();
        let exprs: Vec<Expr> = columns.iter().map(|&i| Expr::Column(all[i].clone())).collect();
        self.runs.fetch_add(1, Ordering::Relaxed);
        let partitions = self.plan.clone().select(exprs)?.collect_partitioned().await?;
        // The physical plan may state a column's nullability differently from the logical
        // schema every reader planned against; the rows are the same.
        let partitions = partitions
            .into_iter()
            .map(|batches| {
                batches
                    .into_iter()
                    .map(|b| RecordBatch::try_new(schema.clone(), b.columns().to_vec()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Rows {
            columns,
            schema,
            partitions: Arc::new(partitions),
        })
    }
}

impl fmt::Debug for MaterializedView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaterializedView")
            .field("name", &self.inner.name)
            .finish()
    }
}

#[async_trait]
impl TableProvider for MaterializedView {
    fn schema(&self) -> SchemaRef {
        self.inner.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    async fn scan(
        &self,
        _: &dyn Session,
        projection: Option<&Vec<usize>>,
        _: &[Expr],
        _: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let columns: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.inner.schema.fields().len()).collect(),
        };
        if let Ok(kept) = self.inner.kept.try_lock()
            && let Some((rows, positions)) = kept.iter().find_map(|r| r.positions(&columns).map(|p| (r, p)))
        {
            // Like a MemTable's scan: the filters and the limit are applied above it.
            let schema = rows.schema.clone();
            return Ok(MemorySourceConfig::try_new_exec(
                &rows.partitions,
                schema,
                Some(positions),
            )?);
        }
        self.inner
            .pending
            .lock()
            .expect("pending columns")
            .extend(&columns);
        Ok(Arc::new(LazyScan::new(self.inner.clone(), columns)?))
    }
}

/// A scan of a view whose rows are computed when the scan first runs.
struct LazyScan {
    view: Arc<Inner>,
    columns: Vec<usize>,
    properties: Arc<PlanProperties>,
}

impl LazyScan {
    fn new(view: Arc<Inner>, columns: Vec<usize>) -> Result<Self> {
        let schema = Arc::new(view.schema.project(&columns)?);
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        );
        Ok(Self {
            view,
            columns,
            properties: Arc::new(properties),
        })
    }
}

impl fmt::Debug for LazyScan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LazyScan({}, {:?})", self.view.name, self.columns)
    }
}

impl DisplayAs for LazyScan {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "LazyScan: view={}, columns={:?}", self.view.name, self.columns)
    }
}

impl ExecutionPlan for LazyScan {
    fn name(&self) -> &str {
        "LazyScan"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(self: Arc<Self>, _: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    /// Every kept partition's rows, in order: the scan is one partition.
    fn execute(&self, _: usize, _: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let (view, columns) = (self.view.clone(), self.columns.clone());
        let schema = self.schema();
        let out = schema.clone();
        let batches = futures::stream::once(async move {
            let (rows, positions) = view.rows(&columns).await?;
            let batches: Vec<RecordBatch> = rows
                .partitions
                .iter()
                .flatten()
                .map(|b| {
                    let b = b.project(&positions)?;
                    // A scan of no column (count(*)) still carries the row count.
                    let options = RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
                    Ok(RecordBatch::try_new_with_options(
                        out.clone(),
                        b.columns().to_vec(),
                        &options,
                    )?)
                })
                .collect::<Result<_>>()?;
            Ok::<_, datafusion::error::DataFusionError>(futures::stream::iter(batches.into_iter().map(Ok)))
        })
        .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches.boxed())))
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow::util::pretty::pretty_format_batches;
    use datafusion::catalog::MemTable;
    use datafusion::prelude::SessionContext;

    use super::*;

    async fn context() -> SessionContext {
        let ctx = SessionContext::new();
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, false),
            Field::new("v", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from(vec!["a", "b", "a", "c"])),
                Arc::new(Int64Array::from(vec![1, 2, 3, 4])),
            ],
        )
        .unwrap();
        ctx.register_table(
            "t",
            Arc::new(MemTable::try_new(schema, vec![vec![batch]]).unwrap()),
        )
        .unwrap();
        ctx
    }

    async fn show(ctx: &SessionContext, sql: &str) -> String {
        let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        pretty_format_batches(&batches).unwrap().to_string()
    }

    async fn view(ctx: &SessionContext, sql: &str) -> Arc<MaterializedView> {
        let view = Arc::new(MaterializedView::new("v", ctx.sql(sql).await.unwrap()));
        ctx.register_table("v", view.clone()).unwrap();
        view
    }

    /// The view answers what the plain SQL answers, is computed on first use only, and its
    /// outer-join columns (nullable in the plan) survive the cast to the planned schema.
    #[tokio::test]
    async fn a_view_is_computed_once_on_first_use_and_answers_like_its_sql() {
        let ctx = context().await;
        let sql = "SELECT t.k, sum(t.v) AS total, o.v AS other FROM t \
                   LEFT JOIN t o ON o.k = t.k AND o.v > 2 GROUP BY t.k, o.v";
        let view = view(&ctx, sql).await;
        assert_eq!(view.computed().await, (0, vec![]), "registering computes nothing");

        let query = "SELECT k, total, other FROM v ORDER BY k, other";
        let plain = show(&ctx, &format!("SELECT * FROM ({sql}) ORDER BY k, other")).await;
        assert_eq!(show(&ctx, query).await, plain);
        assert_eq!(view.computed().await, (1, vec![vec![0, 1, 2]]));
        assert_eq!(show(&ctx, query).await, plain);
        assert_eq!(
            show(&ctx, "SELECT count(*) AS n FROM v").await,
            show(&ctx, &format!("SELECT count(*) AS n FROM ({sql})")).await
        );
        assert_eq!(
            view.computed().await,
            (1, vec![vec![0, 1, 2]]),
            "later scans reuse the rows"
        );
    }

    /// In a session that plans on one partition, the view still runs on every core, and
    /// computing it leaves the session's own catalog as it was.
    #[tokio::test]
    async fn a_view_runs_on_every_core_in_a_one_partition_session() {
        let ctx = context().await;
        let one = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
        one.register_table("t", ctx.table_provider("t").await.unwrap())
            .unwrap();
        let sql = "SELECT k, sum(v) AS total FROM t GROUP BY k";
        let view = view(&one, sql).await;
        let planned = view.inner.plan.task_ctx().session_config().target_partitions();
        assert_eq!(planned, SessionConfig::new().target_partitions());
        assert_eq!(one.state().config().target_partitions(), 1);
        assert_eq!(
            show(&one, "SELECT k, total FROM v ORDER BY k").await,
            show(&one, &format!("SELECT * FROM ({sql}) ORDER BY k")).await
        );
        assert_eq!(
            show(&one, "SELECT count(*) AS n FROM t").await,
            "+---+\n| n |\n+---+\n| 4 |\n+---+"
        );
    }

    /// A query that reads the view twice, for different columns, computes it once, for
    /// both; a later query that needs a column no kept result has computes it again, and
    /// one that needs fewer reuses what is kept.
    #[tokio::test]
    async fn a_view_is_computed_for_the_columns_its_readers_use() {
        let ctx = context().await;
        let sql = "SELECT k, v, v * 10 AS w FROM t";
        let view = view(&ctx, sql).await;
        let query = "SELECT a.k, a.v, b.w FROM (SELECT k, max(v) AS v FROM v GROUP BY k) a \
                     JOIN (SELECT k, w FROM v) b ON a.k = b.k ORDER BY a.k, b.w";
        let plain = show(&ctx, &query.replace("FROM v", &format!("FROM ({sql})"))).await;
        assert_eq!(show(&ctx, query).await, plain);
        assert_eq!(view.computed().await, (1, vec![vec![0, 1, 2]]));

        let ctx = context().await;
        let view = self::view(&ctx, sql).await;
        assert_eq!(
            show(&ctx, "SELECT k FROM v ORDER BY k").await,
            show(&ctx, "SELECT k FROM t ORDER BY k").await
        );
        assert_eq!(view.computed().await, (1, vec![vec![0]]));
        assert_eq!(
            show(&ctx, "SELECT k, w FROM v ORDER BY w").await,
            show(&ctx, "SELECT k, v * 10 AS w FROM t ORDER BY w").await
        );
        assert_eq!(
            show(&ctx, "SELECT w FROM v WHERE k = 'a' ORDER BY w").await,
            "+----+\n| w  |\n+----+\n| 10 |\n| 30 |\n+----+"
        );
        assert_eq!(
            view.computed().await,
            (2, vec![vec![0, 2]]),
            "[0] is dropped, [0, 2] reused"
        );
    }
}
