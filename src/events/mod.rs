//! The events: what every stage appends to its log, the vocabulary every reader shares.
//!
//! One body type per log, kept here and not in the stage that writes it (as delta-rs keeps
//! its actions apart from the operations that write them), so that `query`, `grade`,
//! `baselines`, `journal` and the report read events without importing a stage. The closed
//! sets the bodies name (`Format`, `Outcome`, `Provider`) are defined here too
//! (`vocabulary.rs`, a leaf), so the sandbox, the providers and the manifests share them
//! without depending on one another. This module imports only the log's framing
//! ([`EventBody`]) and the store's hashes: everything else depends on it, never the
//! reverse.
//!
//! ```text
//! log (table)          body                 one event per …                      upstream
//! translate            TranslatedText       (competition, from, to, source text, the forward event
//!                                            model, request)                      (back leg)
//! rating               Rating               (competition, language, field,        the rating it
//!                                            annotator, texts, score)              replaces
//! translate_validate   TranslationCheck     (competition, language ≠ en)         —
//! generate             Generation           (competition, language, model,        —
//!                                            format, seed)
//! journal              Attempt              (aide search, step)                  —
//! trajectory           TrajectoryStep       (react search, step)                 —
//! gateway              GatewayCall          (external agent's run, call)         —
//! external             ExternalRun          external agent's run                 —
//! execute              Execution            (competition, format, code, sandbox) the generate event
//! grade                Grade                execute event (+ its baseline runs)  execute, baselines
//! analyze              Analysis             table of queries/ (+ input heads)    —
//! planned              PlannedSample        generate unit planned                 —
//! fault                Fault                (stage, failed unit, message)         the unit's
//! ```
//! Every event also has the common columns of [`crate::log::event`] (`event_id`,
//! `unit_key`, `upstream`, `created_at`, `host`, `duration_ms`); a body's fields are the
//! log's other columns, in declaration order, through `serde_arrow`. Hashes are typed
//! ([`Hash`](crate::store::Hash)) and written as 64 hex digits, so SQL joins on them. Closed
//! sets (`Format`, `Outcome`, `Provider`, [`Agent`]) are typed here and written as the strings
//! they always were (`modular`, `ok`, `openai`, `one-shot`), so the columns and the event ids
//! (which hash a body's JSON) are unchanged; a stored value that is not what its type says
//! fails to decode, naming the segment.
//!
//! The fold: the state of a log is "latest event per unit key wins" (log order: segment
//! version, then row; [`crate::log::State`]). A unit key is committed at most once per
//! log, so the rule decides only across schema versions and forced re-runs.
//!
//! Invariants: a body's JSON (which the event id hashes) and its Arrow columns are the
//! schema its `SCHEMA_VERSION` names; a change to either bumps the version, and every
//! earlier version stays readable: a version only adds nullable columns at the end of its
//! body, which the query session reads as null in older segments ([`LOGS`] widens them)
//! and `StageLog::read_events` as `None`; a stage whose events `ml2b verify --rerun`
//! re-derives keeps the earlier body to hash them as written (`grade`: [`GradeV2`], and
//! [`GradeV3`], whose columns are today's but whose verdicts followed the grading rules V1).

mod analysis;
mod execution;
mod external;
mod fault;
mod gateway;
mod generation;
mod grade;
mod journal;
mod planned;
mod rating;
mod trajectory;
mod translated;
mod translation;
mod vocabulary;

pub use analysis::Analysis;
pub use execution::{Execution, UNIT_KEY_VERSION as EXECUTE_KEY_VERSION};
pub use external::ExternalRun;
pub use fault::Fault;
pub use gateway::GatewayCall;
pub use generation::{Agent, Generation, UNIT_KEY_VERSION as GENERATE_KEY_VERSION};
pub use grade::{Grade, GradeV2, GradeV3};
pub use journal::Attempt;
pub use planned::{PlannedSample, UNIT_KEY_VERSION as PLANNED_KEY_VERSION};
pub use rating::Rating;
pub use trajectory::TrajectoryStep;
pub use translated::TranslatedText;
pub use translation::{RATING_SCALE, TranslationCheck, TranslationCheckV1};
pub use vocabulary::{Format, Outcome, ParseFormatError, Provider, serde_name};

use arrow::datatypes::Schema;

use crate::log::event::schema;
use crate::log::{EventBody, LogError};

/// One log of the pipeline: its name (the SQL table) and its current event schema.
#[derive(Clone, Copy, Debug)]
pub struct Log {
    pub stage: &'static str,
    pub schema_version: u32,
    /// The columns another log's event finds this log's events by ([`EventBody::LOOKUP`]).
    pub lookup: &'static [&'static str],
    schema: fn() -> Result<Schema, LogError>,
}

impl Log {
    const fn of<B: EventBody>() -> Self {
        Self {
            stage: B::STAGE,
            schema_version: B::SCHEMA_VERSION,
            lookup: B::LOOKUP,
            schema: schema::<B>,
        }
    }

    /// The Arrow schema of this log's segments today.
    pub fn schema(&self) -> Result<Schema, LogError> {
        (self.schema)()
    }
}

/// Every log of the pipeline, in pipeline order.
pub const LOGS: [Log; 13] = [
    Log::of::<TranslatedText>(),
    Log::of::<Rating>(),
    Log::of::<TranslationCheck>(),
    Log::of::<PlannedSample>(),
    Log::of::<Generation>(),
    Log::of::<Attempt>(),
    Log::of::<TrajectoryStep>(),
    Log::of::<GatewayCall>(),
    Log::of::<ExternalRun>(),
    Log::of::<Execution>(),
    Log::of::<Grade>(),
    Log::of::<Analysis>(),
    Log::of::<Fault>(),
];

/// The lookup columns of the log named `stage` (none for a log the pipeline does not
/// know): what its row index keys by besides ids ([`crate::log::rows`]).
pub fn lookup_columns(stage: &str) -> &'static [&'static str] {
    match LOGS.iter().find(|l| l.stage == stage) {
        Some(log) => log.lookup,
        None => &[],
    }
}

/// The logs the paper's tables read (`analyze` records their heads).
pub const TABLE_INPUTS: [&str; 4] = [
    TranslationCheck::STAGE,
    Generation::STAGE,
    Execution::STAGE,
    Grade::STAGE,
];

/// The logs the tables read since ml2b records them: `analyze` records their heads only
/// where the store holds them, so that a store written before keeps its tables' keys.
pub const LATER_TABLE_INPUTS: [&str; 2] = [PlannedSample::STAGE, Fault::STAGE];

#[cfg(test)]
mod tests {
    use super::*;

    /// The columns of every log, as the stores written before this module existed hold
    /// them: a body type that drifts from these fails here before it writes a segment.
    #[test]
    fn every_log_keeps_its_columns() {
        let mut text = String::new();
        for log in LOGS {
            text.push_str(&format!("{} v{}\n", log.stage, log.schema_version));
            for f in log.schema().unwrap().fields() {
                let null = if f.is_nullable() { "?" } else { "" };
                text.push_str(&format!("  {}: {}{null}\n", f.name(), f.data_type()));
            }
        }
        insta::assert_snapshot!(text);
    }
}
