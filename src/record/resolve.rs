//! An id, unit key or hex prefix of one, to the one event it names.
//!
//! Every log of the session is searched (the pipeline's and any other stage's folder). A
//! prefix names one event when every event matching it is that event, or when all of
//! them share the unit key it matched: a unit key with several events (a forced re-run, a
//! regrade) names the latest, as the fold does. Otherwise it is ambiguous, and the error
//! lists the latest candidates.

use arrow::array::{AsArray, RecordBatch};
use datafusion::common::TableReference;
use datafusion::error::DataFusionError;
use datafusion::functions_aggregate::count::count_all_window;
use datafusion::logical_expr::when;
use datafusion::prelude::{DataFrame, SessionContext, col, lit, starts_with};
use serde::Serialize;

use super::RecordError;
use crate::store::Hash;
use crate::terminal::Column;

/// How many candidates an ambiguous prefix lists.
const SHOWN: usize = 10;

/// An event a prefix matched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Candidate {
    pub log: String,
    pub event_id: Hash,
    pub unit_key: Hash,
    /// Which of its hashes the prefix matched: `event_id` or `unit_key`.
    pub matched: &'static str,
}

/// The columns of [`candidates`] (the last, what matched, is free).
const CANDIDATES: [Column; 5] = [
    Column::left(18),
    Column::left(0),
    Column::left(0).gap(2),
    Column::left(0),
    Column::left(0).gap(2),
];

/// The candidates as a table, one indented line each (no newline after the last).
pub(super) fn candidates(candidates: &[Candidate]) -> String {
    let rows: Vec<Vec<String>> = candidates
        .iter()
        .map(|c| {
            vec![
                c.log.clone(),
                "event".into(),
                c.event_id.to_string(),
                "unit".into(),
                c.unit_key.to_string(),
                format!("({} matched)", c.matched),
            ]
        })
        .collect();
    let table = crate::terminal::table(&CANDIDATES, &rows);
    let lines: Vec<String> = table.lines().map(|line| format!("  {line}")).collect();
    lines.join("\n")
}

/// The event a prefix names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Found {
    pub log: String,
    pub event_id: Hash,
    /// Other events of the same unit key, superseded by this one (oldest first).
    pub superseded: Vec<Hash>,
}

/// The one event `wanted` names in the logs of `ctx` (see the module docs).
pub(super) async fn resolve(
    ctx: &SessionContext,
    logs: &[String],
    wanted: &str,
) -> Result<Found, RecordError> {
    let prefix = wanted.trim().to_ascii_lowercase();
    if !is_id_prefix(&prefix) {
        return Err(RecordError::NotHex(wanted.to_string()));
    }
    let (count, candidates) = matches(ctx, logs, &prefix).await?;
    decide(&prefix, count, candidates)
}

/// How many events match, and the latest of them (newest first, at most SHOWN + 1 per
/// unit key is enough to decide; the total is counted apart).
async fn matches(
    ctx: &SessionContext,
    logs: &[String],
    prefix: &str,
) -> Result<(usize, Vec<Candidate>), RecordError> {
    if logs.is_empty() {
        return Ok((0, Vec::new()));
    }
    let latest = matching(ctx, logs, prefix).await.and_then(|df| {
        df.select(vec![
            col("log"),
            col("event_id"),
            col("unit_key"),
            col("matched"),
            count_all_window().alias("total"),
            col("created_at"),
        ])?
        .sort(vec![
            col("created_at").sort(false, true),
            col("event_id").sort(false, true),
        ])?
        .limit(0, Some(SHOWN * 4))
    });
    let (_, batches) = crate::query::run_frame(latest).await?;
    let mut total = 0;
    let mut out = Vec::new();
    for b in &batches {
        total = total.max(read_candidates(b, &mut out)?);
    }
    Ok((total, out))
}

/// Every log's events whose id or unit key starts with `prefix` (`log`, `event_id`,
/// `unit_key`, `created_at`, and which of the two `matched`), one log after the other.
async fn matching(ctx: &SessionContext, logs: &[String], prefix: &str) -> Result<DataFrame, DataFusionError> {
    let mut all: Option<DataFrame> = None;
    for log in logs {
        let by_id = starts_with(col("event_id"), lit(prefix));
        let df = ctx
            .table(TableReference::bare(log.as_str()))
            .await?
            .filter(by_id.clone().or(starts_with(col("unit_key"), lit(prefix))))?
            .select(vec![
                lit(log.as_str()).alias("log"),
                col("event_id"),
                col("unit_key"),
                col("created_at"),
                when(by_id, lit("event_id"))
                    .otherwise(lit("unit_key"))?
                    .alias("matched"),
            ])?;
        all = Some(match all {
            Some(all) => all.union(df)?,
            None => df,
        });
    }
    all.ok_or_else(|| DataFusionError::Plan("no log to search".into()))
}

fn read_candidates(b: &RecordBatch, out: &mut Vec<Candidate>) -> Result<usize, RecordError> {
    let text = |name: &str, i: usize| -> Result<String, RecordError> {
        let col = b.column_by_name(name).ok_or_else(|| malformed(name))?;
        let col =
            arrow::compute::cast(col, &arrow::datatypes::DataType::Utf8).map_err(|_| malformed(name))?;
        Ok(col.as_string::<i32>().value(i).to_string())
    };
    let hash = |name: &str, i: usize| -> Result<Hash, RecordError> {
        text(name, i)?.parse().map_err(|_| malformed(name))
    };
    let mut total = 0;
    for i in 0..b.num_rows() {
        let totals = b.column_by_name("total").ok_or_else(|| malformed("total"))?;
        let totals = totals.as_primitive::<arrow::datatypes::Int64Type>();
        total = totals.value(i) as usize;
        out.push(Candidate {
            log: text("log", i)?,
            event_id: hash("event_id", i)?,
            unit_key: hash("unit_key", i)?,
            matched: if text("matched", i)? == "event_id" {
                "event_id"
            } else {
                "unit_key"
            },
        });
    }
    Ok(total)
}

fn malformed(column: &str) -> RecordError {
    RecordError::Malformed {
        what: format!("the `{column}` column of a log"),
        reason: "not the type every log has".into(),
    }
}

/// Whether `value` can name an event: 1 to 64 hex digits (an id, a unit key or a prefix
/// of one).
pub fn is_id_prefix(value: &str) -> bool {
    (1..=64).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_hexdigit())
}

/// One event, one unit key's events (the latest wins), or an ambiguity.
fn decide(prefix: &str, count: usize, candidates: Vec<Candidate>) -> Result<Found, RecordError> {
    let Some(latest) = candidates.first() else {
        return Err(RecordError::NotFound(prefix.to_string()));
    };
    let one_event = candidates.iter().all(|c| c.event_id == latest.event_id);
    let one_unit = candidates
        .iter()
        .all(|c| c.log == latest.log && c.unit_key == latest.unit_key && c.matched == "unit_key");
    if count <= candidates.len() && (one_event || one_unit) {
        let mut superseded: Vec<Hash> = candidates[1..]
            .iter()
            .map(|c| c.event_id)
            .filter(|id| *id != latest.event_id)
            .collect();
        superseded.reverse();
        return Ok(Found {
            log: latest.log.clone(),
            event_id: latest.event_id,
            superseded,
        });
    }
    let mut shown = candidates;
    shown.dedup_by(|a, b| a.event_id == b.event_id && a.log == b.log);
    shown.truncate(SHOWN);
    Err(RecordError::Ambiguous {
        prefix: prefix.to_string(),
        count,
        candidates: shown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(log: &str, id: u8, key: u8, matched: &'static str) -> Candidate {
        Candidate {
            log: log.into(),
            event_id: Hash([id; 32]),
            unit_key: Hash([key; 32]),
            matched,
        }
    }

    #[test]
    fn a_unit_key_names_its_latest_event() {
        let found = decide(
            "0202",
            2,
            vec![cand("grade", 9, 2, "unit_key"), cand("grade", 8, 2, "unit_key")],
        )
        .unwrap();
        assert_eq!(found.event_id, Hash([9; 32]));
        assert_eq!(found.superseded, vec![Hash([8; 32])]);
    }

    #[test]
    fn two_events_are_ambiguous_and_listed() {
        let err = decide(
            "0",
            2,
            vec![
                cand("grade", 9, 2, "event_id"),
                cand("generate", 8, 3, "event_id"),
            ],
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("2 events match"), "{text}");
        assert!(text.contains(&Hash([8; 32]).to_hex()), "{text}");
    }

    #[test]
    fn more_matches_than_fetched_is_ambiguous() {
        let err = decide("0", 50, vec![cand("grade", 9, 2, "event_id")]).unwrap_err();
        assert!(
            err.to_string().contains("50 events match (the 1 latest shown)"),
            "{err}"
        );
    }

    #[test]
    fn nothing_found() {
        let err = decide("abcd", 0, vec![]).unwrap_err();
        assert!(matches!(err, RecordError::NotFound(_)));
    }
}
