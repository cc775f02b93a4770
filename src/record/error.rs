//! Why a record could not be read ([`RecordError`]), and the candidates an ambiguous
//! prefix matched, as its message lists them. A leaf of `record/`.

use serde::Serialize;

use crate::log::LogError;
use crate::query::QueryError;
use crate::store::{Hash, ObjectError};
use crate::terminal::Column;

/// An event a prefix matched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Candidate {
    pub log: String,
    pub event_id: Hash,
    pub unit_key: Hash,
    /// Which of its hashes the prefix matched: `event_id` or `unit_key`.
    pub matched: &'static str,
}

/// The columns of [`candidate_lines`] (the last, what matched, is free).
const CANDIDATES: [Column; 5] = [
    Column::left(18),
    Column::left(0),
    Column::left(0).gap(2),
    Column::left(0),
    Column::left(0).gap(2),
];

/// The candidates as a table, one indented line each (no newline after the last).
fn candidate_lines(candidates: &[Candidate]) -> String {
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

/// Why a record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("`{0}` is not an event id, unit key or hex prefix of one")]
    NotHex(String),
    #[error("no event of any log has an id or unit key starting with `{0}`")]
    NotFound(String),
    #[error("{}", ambiguous(.prefix, .count, .candidates))]
    Ambiguous {
        prefix: String,
        count: usize,
        candidates: Vec<Candidate>,
    },
    #[error("listing runs needs the benchmark's manifests (see --root): the runs view joins them")]
    NoBenchmark,
    #[error("this {log} event has no {kind}")]
    NoArtefact { log: String, kind: String },
    #[error("cannot read the logs")]
    Query(#[from] QueryError),
    #[error("cannot read the logs")]
    Log(#[from] LogError),
    #[error("cannot read an object the event names")]
    Object(#[from] ObjectError),
    #[error("{what} is malformed: {reason}")]
    Malformed { what: String, reason: String },
}

/// The ambiguity, with the candidates one per line.
fn ambiguous(prefix: &str, count: &usize, candidates: &[Candidate]) -> String {
    let shown = if *count > candidates.len() {
        format!(" (the {} latest shown)", candidates.len())
    } else {
        String::new()
    };
    let text = format!("`{prefix}` is ambiguous: {count} events match{shown}");
    if candidates.is_empty() {
        return text;
    }
    format!("{text}\n{}", candidate_lines(candidates))
}

impl crate::error::IsInputError for RecordError {
    fn is_input_error(&self) -> bool {
        matches!(
            self,
            Self::NotHex(_)
                | Self::NotFound(_)
                | Self::Ambiguous { .. }
                | Self::NoArtefact { .. }
                | Self::NoBenchmark
        )
    }
}
crate::error::input_error!(RecordError);
