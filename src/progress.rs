//! Progress and messages from the core to whoever shows them.
//!
//! The core never prints: long work calls a [`Progress`]. The CLI implements it with
//! indicatif bars and its printer (bars hidden when stderr is not a terminal or with
//! `--quiet`); tests and libraries use [`NoProgress`].

use crate::log::stage_log::Committed;

/// Receives progress events. Every method has an empty default.
pub trait Progress: Send + Sync {
    /// A phase of `total` steps begins (e.g. "grade", 490 units).
    fn begin(&self, _phase: &str, _total: u64) {}
    /// A unit started running.
    fn unit_started(&self, _label: &str) {}
    /// A unit finished; `ok` is false when it failed and was not committed.
    fn unit_finished(&self, _label: &str, _ok: bool) {}
    /// A unit's model wrote `n` tokens (its answer): progress shows tokens per second.
    fn tokens(&self, _n: u64) {}
    /// One step of a phase without units (e.g. one object verified).
    fn advance(&self, _n: u64) {}
    /// A segment was committed.
    fn committed(&self, _stage: &str, _commit: &Committed) {}
    /// The current phase ended.
    fn end(&self) {}
    /// Something the user should know (hidden with `--quiet`).
    fn info(&self, _message: &str) {}
    /// Something the user must know (always shown).
    fn warn(&self, _message: &str) {}
    /// A slow step with no measurable progress begins (e.g. creating the Python
    /// environment); it lasts until [`Progress::slow_step_ended`].
    fn slow_step(&self, _message: &str) {}
    /// The slow step ended.
    fn slow_step_ended(&self) {}
}

/// Reports nothing.
pub struct NoProgress;

impl Progress for NoProgress {}
