//! An id, unit key or hex prefix of one, to the one event it names.
//!
//! Every log is searched (the pipeline's and any other stage's folder) through its row
//! index, whose entries are ordered by key, so a prefix is a range of each. A
//! prefix names one event when every event matching it is that event, or when all of
//! them share the unit key it matched: a unit key with several events (a forced re-run, a
//! regrade) names the latest, as the fold does. Otherwise it is ambiguous, and the error
//! lists the latest candidates.

use serde::Serialize;

use super::error::{Candidate, RecordError};
use super::logs::{Found as Located, Logs, newest_first};
use crate::log::rows::{Kind, prefix_range};
use crate::store::Hash;

/// How many candidates an ambiguous prefix lists.
const SHOWN: usize = 10;

/// The event a prefix names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Found {
    pub log: String,
    pub event_id: Hash,
    /// Other events of the same unit key, superseded by this one (oldest first).
    pub superseded: Vec<Hash>,
}

/// The one event `wanted` names in `logs` (see the module docs).
pub(super) fn resolve(logs: &Logs, wanted: &str) -> Result<Found, RecordError> {
    let prefix = wanted.trim().to_ascii_lowercase();
    if !is_id_prefix(&prefix) {
        return Err(RecordError::NotHex(wanted.to_string()));
    }
    let (count, candidates) = matches(logs, &prefix)?;
    decide(&prefix, count, candidates)
}

/// How many events match, and the latest of them (newest first; at most SHOWN + 1 per unit
/// key is enough to decide): index lookups, and a row read for each candidate returned.
fn matches(logs: &Logs, prefix: &str) -> Result<(usize, Vec<Candidate>), RecordError> {
    let (lo, hi) = prefix_range(prefix).ok_or_else(|| RecordError::NotHex(prefix.to_string()))?;
    let mut found = logs.prefix(&lo, &hi)?;
    // One per event: a match of its id wins over a match of its unit key.
    found.sort_by_key(|f| (f.log, f.entry.place(), f.entry.kind));
    found.dedup_by(|later, kept| later.log == kept.log && later.entry.place() == kept.entry.place());
    let total = found.len();
    newest_first(&mut found);
    found.truncate(SHOWN * 4);
    let candidates = found
        .iter()
        .map(|f| candidate(logs, f))
        .collect::<Result<_, _>>()?;
    Ok((total, candidates))
}

/// The candidate an index entry names, its id and unit key read from its row.
fn candidate(logs: &Logs, f: &Located) -> Result<Candidate, RecordError> {
    let row = logs.row(f)?;
    let first = |name: &str| -> Result<Hash, RecordError> {
        let hashes = crate::log::event::hashes(&row, name)?;
        hashes.first().copied().ok_or_else(|| malformed(name))
    };
    Ok(Candidate {
        log: f.log.to_string(),
        event_id: first("event_id")?,
        unit_key: first("unit_key")?,
        matched: if f.entry.kind == Kind::Event {
            "event_id"
        } else {
            "unit_key"
        },
    })
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
