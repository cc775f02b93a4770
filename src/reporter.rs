//! Progress reporting from the core to whoever draws it.
//!
//! The core never prints: long work calls a [`Reporter`]. The CLI implements it
//! with indicatif progress bars (hidden when stderr is not a terminal or with
//! `--quiet`); tests and libraries use [`NoReporter`].

use crate::log::Committed;

/// Receives progress events. Every method has an empty default.
pub trait Reporter: Send + Sync {
    /// A phase of `total` steps begins (e.g. "grade", 490 units).
    fn begin(&self, _phase: &str, _total: u64) {}
    /// A unit started running.
    fn unit_started(&self, _label: &str) {}
    /// A unit finished; `ok` is false when it failed and was not committed.
    fn unit_finished(&self, _label: &str, _ok: bool) {}
    /// One step of a phase without units (e.g. one object verified).
    fn advance(&self, _n: u64) {}
    /// A segment was committed.
    fn committed(&self, _stage: &str, _commit: &Committed) {}
    /// The current phase ended.
    fn end(&self) {}
}

/// Reports nothing.
pub struct NoReporter;

impl Reporter for NoReporter {}
