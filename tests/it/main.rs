//! The integration tests: one binary that drives the library and the real
//! `ml2b` executable in temp workspaces.
//!
//! Some tests re-execute this binary as a worker process (see `worker`): the
//! race and crash tests need several real processes writing one store.

// A test or bench binary prints what it measured, and its helpers are `pub` for its modules.
#![allow(clippy::print_stdout, clippy::print_stderr, unreachable_pub)]

mod agents;
mod aide;
mod analyze;
mod annotate;
mod architecture;
mod baselines;
mod browser;
mod cdp;
mod check;
mod cli;
mod common;
mod compat;
mod competitions;
mod docker;
mod docs;
mod doctor;
mod external;
mod faults;
mod fixture;
mod generate;
mod grading;
mod import_ml2b;
mod local_model;
mod log;
mod medals;
mod mle_bench;
mod mle_layouts;
mod module_graph;
mod network;
mod query;
mod react;
mod readme;
mod run;
mod s3;
mod sandbox;
mod show;
mod slurm;
mod stages;
mod stats;
mod status;
mod throughput;
mod translate;
mod viewer;
mod viewer_pages;
mod worker;
