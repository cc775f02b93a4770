//! ml2b: the ML2B benchmark as an event-sourced batch pipeline over files.
//!
//! One way down. The command line is resolved once, at the top, into what to run; the
//! pipeline drives the stages over the store, here or through an engine below it; the
//! stages use the core; the core shares one vocabulary of events. Each layer imports only
//! from the layers under it, never from above, and no two files import each other, even
//! through others, a `mod.rs` and its own children included: what a module's parts share
//! (its error, its types) lives in a leaf file beside them, which the `mod.rs` re-exports
//! (`tests/it/architecture.rs` checks every rule below on the import graph of `src/`,
//! transitively, and names the import that breaks one):
//!
//! ```text
//! main ─► commands             one file per command, thin: resolve, run, print
//!           │  ├─► settings ─► cli      clap types, resolved once (the only readers of cli)
//!           │  ├─► record, report, viewer   the read side (show, report, view): reads the
//!           │  │                            store, runs no stage
//!           ▼  ▼
//!         pipeline, preflight  runs stages from `config`, loads the benchmark once
//!           ▼
//!         cluster              the Slurm engine: plans, shards, arrays; never calls up
//!           ▼
//!         config               what to run, resolved: selection, agent, sandbox, engine
//!           ▼
//!         stages               translate-validate, generate (agents), execute, grade,
//!           ▼                  analyze, and the runner they share
//!   core: providers ─╮ sandbox ─╮ (neither reaches the other)
//!         competition, query, check, manifest, metrics (pure)
//!         log, progress ─► events (the vocabulary: bodies, Format, Outcome, Provider)
//!         store
//! leaves: error (chains, input errors), terminal (the one printer), backoff
//! ```
//!
//! - [`store`]: content-addressed objects and the store layout;
//! - [`log`]: the append-only, hash-chained Parquet event log of each stage;
//! - [`events`]: every log's event body and the closed sets they name, the vocabulary all
//!   layers share;
//! - [`stages`]: the pipeline's stages and the runner they share;
//! - [`providers`]: who answers a model's requests;
//! - [`sandbox`]: running untrusted solutions;
//! - [`config`]: what to run, as the pipeline and its engines take it;
//! - [`pipeline`]: runs stages from resolved settings, below every command;
//! - [`cluster`]: the Slurm engine: a stage's units as job arrays (plans, shards,
//!   `ml2b worker`);
//! - [`query`]: DataFusion SQL over the logs;
//! - [`record`]: everything the store holds about one event (`ml2b show`, `ml2b view`);
//! - [`viewer`]: the read-only web viewer of a store (`ml2b view`), and the annotation
//!   page (`ml2b annotate serve`), which writes ratings and nothing else;
//! - [`error`], [`terminal`]: how errors and messages reach the user;
//! - [`cli`], [`settings`], [`commands`]: the `ml2b` command line.

// Tests report how close they came to the reference values.
#![cfg_attr(test, allow(clippy::print_stdout, clippy::print_stderr))]

pub mod backoff;
pub mod check;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod competition;
pub mod config;
pub mod error;
pub mod events;
pub mod log;
pub mod manifest;
pub mod metrics;
pub mod pipeline;
pub mod preflight;
pub mod progress;
pub mod providers;
pub mod query;
pub mod record;
pub mod report;
pub mod sandbox;
pub mod settings;
pub mod stages;
pub mod store;
pub mod terminal;
pub mod viewer;
