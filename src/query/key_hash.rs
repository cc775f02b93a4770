//! `key_hash(a, b, …)`: a 64-bit hash of a row's key columns, for planning only.
//!
//! The views find the few keys a log holds several events for (a regenerated sample, a
//! re-execution, a regrade) by counting events per key. The three logs have keys of
//! different shapes (five columns, three, one); hashed, each is one `UInt64`, so the repeated
//! keys of every log fit one short list (the view `repeated_keys`, computed once per session)
//! and the joins against it compare one integer. Rows whose hash is repeated take the exact
//! path, grouped on the key columns themselves.
//!
//! Invariant that makes this exact: equal keys have equal hashes, so a key with several
//! events always has a repeated hash and never takes the single-event path. A collision
//! only sends a lone event down the exact path, where it is its own group: it costs time,
//! never a different row. No result depends on a hash value, so the function may change
//! with DataFusion's hashing (it is DataFusion's `create_hashes` with a fixed seed: the same
//! value within and across sessions of one build). NULL hashes like any other value.

use std::sync::Arc;

use arrow::array::UInt64Array;
use arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::common::hash_utils::{RandomState, create_hashes};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

/// The seed of every `key_hash` (any fixed value works; see the module docs).
const SEED: u64 = 0x6d6c_3262;

/// The `key_hash` function.
pub fn udf() -> ScalarUDF {
    ScalarUDF::new_from_impl(KeyHash {
        signature: Signature::variadic_any(Volatility::Immutable),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct KeyHash {
    signature: Signature,
}

impl ScalarUDFImpl for KeyHash {
    fn name(&self) -> &str {
        "key_hash"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    /// A variadic signature already refuses a call without arguments.
    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::UInt64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let mut hashes = vec![0u64; args.number_rows];
        create_hashes(&arrays, &RandomState::with_seed(SEED), &mut hashes)?;
        Ok(ColumnarValue::Array(Arc::new(UInt64Array::from(hashes))))
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::UInt64Type;
    use datafusion::prelude::SessionContext;

    async fn hashes(sql: &str) -> Vec<Option<u64>> {
        let ctx = SessionContext::new();
        ctx.register_udf(super::udf());
        let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        let column = batches[0].column(0).as_primitive::<UInt64Type>().clone();
        (0..column.len())
            .map(|i| column.is_valid(i).then(|| column.value(i)))
            .collect()
    }

    #[tokio::test]
    async fn equal_keys_hash_equal_and_every_column_counts() {
        let h = hashes(
            "SELECT key_hash(a, b, c) FROM (VALUES ('x', 1, NULL), ('x', 1, NULL), \
             ('x', 2, NULL), ('y', 1, NULL), ('x', 1, 'z')) AS t(a, b, c)",
        )
        .await;
        assert!(h.iter().all(Option::is_some), "never NULL: {h:?}");
        assert_eq!(h[0], h[1]);
        for other in &h[2..] {
            assert_ne!(h[0], *other, "{h:?}");
        }
    }

    #[tokio::test]
    async fn the_value_is_stable_across_sessions_and_batches() {
        let sql = "SELECT key_hash(s) FROM (VALUES ('a'), ('b')) AS t(s)";
        assert_eq!(hashes(sql).await, hashes(sql).await);
        let one = hashes("SELECT key_hash(s) FROM (VALUES ('b')) AS t(s)").await;
        assert_eq!(one[0], hashes(sql).await[1]);
    }

    #[tokio::test]
    async fn no_argument_is_a_plan_error() {
        let ctx = SessionContext::new();
        ctx.register_udf(super::udf());
        let err = ctx.sql("SELECT key_hash()").await.unwrap_err();
        assert!(
            err.to_string()
                .contains("'key_hash' does not support zero arguments"),
            "{err}"
        );
    }
}
