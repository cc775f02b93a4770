//! The latest runs, filtered: what `ml2b show` without an id lists.
//!
//! A run is a row of the `runs` view (`queries/views/runs.sql`: one per generated sample,
//! with its execution's outcome and its grade), ordered by its generate event's time,
//! newest first. The view needs the benchmark's tables, so listing needs a benchmark root.

use datafusion::prelude::SessionContext;
use datafusion::scalar::ScalarValue;
use serde::{Deserialize, Serialize};

use super::RecordError;
use crate::store::Hash;

/// Which runs to list; every filter is an exact match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filters {
    /// The entrant (`<model>+aide` for an aide search).
    pub model: Option<String>,
    pub language: Option<String>,
    pub competition: Option<String>,
    /// The execution's outcome (`ok`, `runtime_error`, …, `not_executed`).
    pub outcome: Option<String>,
    pub limit: usize,
}

/// One listed run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub generation_id: Hash,
    pub created_at: String,
    pub model: String,
    pub competition: String,
    pub language: String,
    pub format: String,
    pub seed: u32,
    pub outcome: String,
    pub valid: bool,
    pub score: Option<f64>,
    pub r_p: Option<f64>,
}

impl Filters {
    /// The SQL condition on the `runs` view (`r`), its values the parameters `$1`, `$2`, …
    /// that follow it.
    fn condition(&self) -> (String, Vec<ScalarValue>) {
        let pairs = [
            ("model", &self.model),
            ("language", &self.language),
            ("competition", &self.competition),
            ("outcome", &self.outcome),
        ];
        let mut terms = Vec::new();
        let mut params = Vec::new();
        for (column, value) in pairs {
            if let Some(v) = value {
                params.push(ScalarValue::Utf8(Some(v.clone())));
                terms.push(format!("r.{column} = ${}", params.len()));
            }
        }
        if terms.is_empty() {
            terms.push("true".into());
        }
        (terms.join(" AND "), params)
    }
}

/// The latest runs matching `filters` (the session must have the views).
pub(super) async fn latest_runs(ctx: &SessionContext, filters: &Filters) -> Result<Vec<RunRow>, RecordError> {
    let (condition, params) = filters.condition();
    let sql = format!(
        "SELECT generation_id, CAST(t AS VARCHAR) AS created_at, model, competition, language, \
         format, seed, outcome, valid, score, r_p FROM (\
           SELECT r.generation_id, g.created_at AS t, r.model, r.competition, r.language, \
           r.format, r.seed, r.outcome, r.valid, r.score, r.r_p \
           FROM runs r JOIN generate g ON g.event_id = r.generation_id WHERE {condition}\
         ) ORDER BY t DESC, generation_id DESC"
    );
    let plan = crate::query::plan(ctx, &sql, params).await;
    let plan = plan.and_then(|df| df.limit(0, Some(filters.limit)));
    let (_, batches) = crate::query::run_frame(plan).await?;
    let mut rows = Vec::new();
    for b in &batches {
        let part: Vec<RunRow> = serde_arrow::from_record_batch(b).map_err(|e| RecordError::Malformed {
            what: "a row of the runs view".into(),
            reason: e.to_string(),
        })?;
        rows.extend(part);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_parameters() {
        let f = Filters {
            model: Some("o'brien".into()),
            outcome: Some("ok".into()),
            ..Filters::default()
        };
        let (condition, params) = f.condition();
        assert_eq!(condition, "r.model = $1 AND r.outcome = $2");
        assert_eq!(
            params,
            vec![
                ScalarValue::Utf8(Some("o'brien".into())),
                ScalarValue::Utf8(Some("ok".into()))
            ]
        );
        assert_eq!(Filters::default().condition(), ("true".into(), Vec::new()));
    }
}
