//! The statistics SQL cannot express, as DataFusion aggregate functions.
//!
//! Each function collects its group's values and hands them to the one implementation in
//! `crate::metrics` (never a second code path), so `SELECT aup(r) …` and `ml2b aup` agree
//! bit for bit:
//!
//! | SQL                  | value                                                   |
//! |----------------------|---------------------------------------------------------|
//! | `aup(r)`             | AUP in ml2b's convention, mean(min(r, 1))               |
//! | `aup_ln(r)`          | AUP_{−ln τ}, exact                                      |
//! | `aup_invln(r)`       | AUP_{−1/ln τ} on [`crate::metrics::aup::INVLN_GRID`]    |
//! | `win_rate(r)`        | 100 · share of r ≥ 1                                    |
//! | `spearman_rho(x, y)` | Spearman's ρ with average ranks (`scipy.stats.spearmanr`)|
//! | `spearman_p(x, y)`   | its two-sided p-value                                   |
//! | `stable_sum(x)`      | Σx, the values added in sorted order                    |
//! | `stable_avg(x)`      | Σx / n, likewise                                        |
//! | `stable_var_pop(x)`  | Σ(x − mean)² / n, likewise                              |
//!
//! The `stable_` aggregates exist because DataFusion adds a group's floats in the order
//! its hash tables hand the rows over, which changes from run to run (the 16th digit of an
//! average moved between two runs of the same query): adding in sorted order makes a
//! result a function of the values alone. The queries of `queries/` use them for every
//! float they add up.
//!
//! Invariants: rows where any argument is NULL are skipped; the result never depends on the
//! order rows arrive in (values are sorted before the AUPs, and ranks are order-free), so a
//! partitioned plan gives the same bits as a serial one. A group without a non-NULL value
//! gives NULL (e.g. the runs of a competition without a baseline, whose r_p is NULL), and
//! so does Spearman where scipy gives NaN.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float64Array};
use arrow::datatypes::{DataType, Field, Float64Type};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{Accumulator, AggregateUDF, Volatility, create_udaf};
use datafusion::prelude::SessionContext;

use crate::metrics::aup::{Convention, aups};
use crate::metrics::spearman::spearman;

/// Turns the collected columns of one group into the statistic (`None` is SQL NULL).
type Finish = fn(&[Vec<f64>]) -> Option<f64>;

/// Registers every function of this module on `ctx`.
pub fn register(ctx: &SessionContext) {
    let one: [(&str, Finish); 4] = [
        ("aup", |c| profile(c).map(|a| a.aup)),
        ("aup_ln", |c| profile(c).map(|a| a.aup_ln)),
        ("aup_invln", |c| profile(c).map(|a| a.aup_invln)),
        ("win_rate", |c| profile(c).map(|a| a.win_rate)),
    ];
    let stable: [(&str, Finish); 3] = [
        ("stable_sum", |c| {
            (!c[0].is_empty()).then(|| sorted_sum(c[0].iter().copied()))
        }),
        ("stable_avg", |c| {
            (!c[0].is_empty()).then(|| sorted_sum(c[0].iter().copied()) / c[0].len() as f64)
        }),
        ("stable_var_pop", |c| var_pop(&c[0])),
    ];
    let two: [(&str, Finish); 2] = [
        ("spearman_rho", |c| finite(spearman(&c[0], &c[1]).ok()?.rho)),
        ("spearman_p", |c| finite(spearman(&c[0], &c[1]).ok()?.p_value)),
    ];
    for (name, finish) in one.into_iter().chain(stable) {
        ctx.register_udaf(collecting(name, 1, finish));
    }
    for (name, finish) in two {
        ctx.register_udaf(collecting(name, 2, finish));
    }
}

/// Σ of the values in ascending order (total order, so NaN and ±0 sort too).
fn sorted_sum(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    v.iter().sum()
}

/// Population variance, both passes in sorted order.
fn var_pop(x: &[f64]) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    let n = x.len() as f64;
    let mean = sorted_sum(x.iter().copied()) / n;
    Some(sorted_sum(x.iter().map(|v| (v - mean) * (v - mean))) / n)
}

/// The profile statistics of a non-empty group.
fn profile(c: &[Vec<f64>]) -> Option<crate::metrics::aup::Aups> {
    (!c[0].is_empty()).then(|| aups(&c[0], Convention::Ml2b))
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// An aggregate of `arity` Float64 arguments that collects them and applies `finish`.
fn collecting(name: &str, arity: usize, finish: Finish) -> AggregateUDF {
    let list = DataType::List(Arc::new(Field::new_list_field(DataType::Float64, true)));
    create_udaf(
        name,
        vec![DataType::Float64; arity],
        Arc::new(DataType::Float64),
        Volatility::Immutable,
        Arc::new(move |_| Ok(Box::new(Collect::new(arity, finish)))),
        Arc::new(vec![list; arity]),
    )
}

/// Collects one group's argument values.
#[derive(Debug)]
struct Collect {
    columns: Vec<Vec<f64>>,
    finish: Finish,
}

impl Collect {
    fn new(arity: usize, finish: Finish) -> Self {
        Self {
            columns: vec![Vec::new(); arity],
            finish,
        }
    }

    /// Appends the rows where every column is non-null.
    fn extend(&mut self, columns: &[&Float64Array]) {
        let rows = columns.first().map_or(0, |c| c.len());
        for i in 0..rows {
            if columns.iter().all(|c| c.is_valid(i)) {
                for (dst, c) in self.columns.iter_mut().zip(columns) {
                    dst.push(c.value(i));
                }
            }
        }
    }
}

impl Accumulator for Collect {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let columns: Vec<&Float64Array> = values.iter().map(|v| v.as_primitive::<Float64Type>()).collect();
        self.extend(&columns);
        Ok(())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64((self.finish)(&self.columns)))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.columns.iter().map(|c| c.capacity() * 8).sum::<usize>()
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(self
            .columns
            .iter()
            .map(|c| {
                let values: Vec<ScalarValue> = c.iter().map(|&v| ScalarValue::Float64(Some(v))).collect();
                ScalarValue::List(ScalarValue::new_list_nullable(&values, &DataType::Float64))
            })
            .collect())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let lists: Vec<_> = states.iter().map(|s| s.as_list::<i32>()).collect();
        for row in 0..lists.first().map_or(0, |l| l.len()) {
            let values: Vec<ArrayRef> = lists.iter().map(|l| l.value(row)).collect();
            let columns: Vec<&Float64Array> =
                values.iter().map(|v| v.as_primitive::<Float64Type>()).collect();
            self.extend(&columns);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn one(sql: &str) -> Option<f64> {
        let ctx = SessionContext::new();
        register(&ctx);
        let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        let col = batches[0].column(0).as_primitive::<Float64Type>().clone();
        col.is_valid(0).then(|| col.value(0))
    }

    #[tokio::test]
    async fn aup_matches_the_library() {
        let r = [0.5, 1.2, 0.0, 0.9, 1.0];
        let values = r.iter().map(|v| format!("({v:?})")).collect::<Vec<_>>().join(",");
        let from = format!("FROM (VALUES {values}) AS t(r)");
        let want = aups(&r, Convention::Ml2b);
        assert_eq!(one(&format!("SELECT aup(r) {from}")).await, Some(want.aup));
        assert_eq!(one(&format!("SELECT aup_ln(r) {from}")).await, Some(want.aup_ln));
        assert_eq!(
            one(&format!("SELECT aup_invln(r) {from}")).await,
            Some(want.aup_invln)
        );
        assert_eq!(
            one(&format!("SELECT win_rate(r) {from}")).await,
            Some(want.win_rate)
        );
    }

    #[tokio::test]
    async fn spearman_matches_scipy_and_skips_nulls() {
        // STATISTICS.md §4's example, plus a row with a NULL that must be skipped.
        let sql = "SELECT spearman_rho(x, y) FROM (VALUES (1.0,2.0),(2.0,1.0),(2.0,3.0),(3.0,3.0),\
                   (4.0,5.0),(4.0,4.0),(4.0,6.0),(5.0,6.0),(NULL,9.0)) AS t(x, y)";
        let rho = one(sql).await.unwrap();
        assert!((rho - 0.9007775105401477).abs() < 1e-12, "{rho}");
        let p = one(&sql.replace("spearman_rho", "spearman_p")).await.unwrap();
        assert!((p - 0.0022640090646742616).abs() / p < 1e-9, "{p}");
    }

    #[tokio::test]
    async fn stable_aggregates_do_not_depend_on_row_order() {
        let values = [0.1, 0.7, 1e-17, 0.2, 0.3, 1e16, -1e16];
        let rows = |v: &[f64]| v.iter().map(|x| format!("({x:?})")).collect::<Vec<_>>().join(",");
        let mut reversed = values;
        reversed.reverse();
        for f in ["stable_sum", "stable_avg", "stable_var_pop"] {
            let a = one(&format!("SELECT {f}(x) FROM (VALUES {}) AS t(x)", rows(&values))).await;
            let b = one(&format!(
                "SELECT {f}(x) FROM (VALUES {}) AS t(x)",
                rows(&reversed)
            ))
            .await;
            assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits), "{f}");
        }
        let mean = one("SELECT stable_avg(x) FROM (VALUES (1.0),(2.0),(4.0)) AS t(x)").await;
        assert_eq!(mean, Some(7.0 / 3.0));
        let var = one("SELECT stable_var_pop(x) FROM (VALUES (1.0),(2.0),(4.0)) AS t(x)").await;
        assert!((var.unwrap() - 14.0 / 9.0).abs() < 1e-15);
    }

    #[tokio::test]
    async fn constant_input_gives_null() {
        let sql = "SELECT spearman_rho(x, y) FROM (VALUES (1.0,2.0),(1.0,3.0),(1.0,4.0)) AS t(x, y)";
        assert_eq!(one(sql).await, None);
    }
}
