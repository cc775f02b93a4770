//! The pipeline's stages and the machinery they share.
//!
//! ```text
//! translate_validate ─► generate ─► execute ─► grade ─► analyze
//! ```
//! Each stage is a [`Stage`]: it plans units (each with a key derived from the
//! upstream event ids and result-changing parameters), and runs one unit into
//! one event body. [`runner::run_stage`] does the rest for every stage alike:
//! it skips units already committed, runs the others with bounded concurrency,
//! and commits finished events in batches, so a crash loses at most the units
//! in flight and a re-run appends only what is missing.

pub mod analyze;
pub mod execute;
pub mod generate;
pub mod grade;
pub mod requests;
pub mod runner;
pub mod solution;
mod stage;
pub mod translate;
pub mod translate_validate;

pub use runner::{RunOptions, RunSummary, Shard, run_stage, shard_of};
pub(crate) use stage::file_blake3;
pub use stage::{Planned, Stage, StageError, rederive, version_after};
