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

#[cfg(test)]
mod tests {
    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow::util::pretty::pretty_format_batches;
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

    /// The view answers what the plain SQL answers, is computed on first use only, and its
    /// outer-join columns (nullable in the plan) survive the cast to the planned schema.
    #[tokio::test]
    async fn a_view_is_computed_once_on_first_use_and_answers_like_its_sql() {
        let ctx = context().await;
        let sql = "SELECT t.k, sum(t.v) AS total, o.v AS other FROM t \
                   LEFT JOIN t o ON o.k = t.k AND o.v > 2 GROUP BY t.k, o.v";
        let view = Arc::new(MaterializedView::new("v", ctx.sql(sql).await.unwrap()));
        ctx.register_table("v", view.clone()).unwrap();
        assert!(!view.rows.initialized(), "registering computes nothing");

        let query = "SELECT k, total, other FROM v ORDER BY k, other";
        let plain = show(&ctx, &format!("SELECT * FROM ({sql}) ORDER BY k, other")).await;
        assert_eq!(show(&ctx, query).await, plain);
        assert!(view.rows.initialized());
        let first = Arc::as_ptr(view.rows.get().unwrap());
        assert_eq!(show(&ctx, query).await, plain);
        assert_eq!(
            Arc::as_ptr(view.rows.get().unwrap()),
            first,
            "the second scan reuses the rows"
        );
    }
}
