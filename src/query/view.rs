//! Views computed at most once per session.
//!
//! A view of `queries/views/` is read by several tables, and one table often reads it several
//! times: `cells` reads `runs` twice, and a CTE that two branches of a `UNION` read is
//! planned twice. A plain DataFusion view re-runs its whole plan at every reference, so the
//! `aup` table computed the 1,000,000-row `runs` view four times. A [`MaterializedView`]
//! runs its plan on its first scan, keeps the result in memory (a [`MemTable`]), and answers
//! every later scan of the session from it. The rows are the plain view's rows in the same
//! order (the session plans on one partition); a session that never reads the view never
//! computes it.

use std::fmt;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{MemTable, Session, TableProvider};
use datafusion::dataframe::DataFrame;
use datafusion::error::Result;
use datafusion::logical_expr::{Expr, TableType};
use datafusion::physical_plan::ExecutionPlan;
use tokio::sync::OnceCell;

/// A view whose rows are computed on first use and then shared by every scan.
pub struct MaterializedView {
    name: &'static str,
    plan: DataFrame,
    schema: SchemaRef,
    rows: OnceCell<Arc<MemTable>>,
}

impl MaterializedView {
    /// The view `name` of the planned query `plan`.
    pub fn new(name: &'static str, plan: DataFrame) -> Self {
        let schema = Arc::new(plan.schema().as_arrow().clone());
        Self {
            name,
            plan,
            schema,
            rows: OnceCell::new(),
        }
    }

    async fn rows(&self) -> Result<&Arc<MemTable>> {
        self.rows
            .get_or_try_init(|| async {
                let partitions = self.plan.clone().collect_partitioned().await?;
                // The physical plan may state a column's nullability differently from the
                // logical schema every reader planned against; the rows are the same.
                let partitions = partitions
                    .into_iter()
                    .map(|batches| {
                        batches
                            .into_iter()
                            .map(|b| RecordBatch::try_new(self.schema.clone(), b.columns().to_vec()))
                            .collect::<Result<Vec<_>, _>>()
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Arc::new(MemTable::try_new(self.schema.clone(), partitions)?))
            })
            .await
    }
}

impl fmt::Debug for MaterializedView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaterializedView")
            .field("name", &self.name)
            .field("materialized", &self.rows.initialized())
            .finish()
    }
}

#[async_trait]
impl TableProvider for MaterializedView {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.rows().await?.scan(state, projection, filters, limit).await
    }
}
