//! ml2b: the ML2B benchmark as an event-sourced batch pipeline over files.
//!
//! - [`store`]: content-addressed objects and the store layout;
//! - [`log`]: the append-only, hash-chained Parquet event log of each stage;
//! - [`events`]: every log's event body, the vocabulary all readers share;
//! - [`stages`]: the pipeline's stages and the runner they share;
//! - [`providers`]: who answers a model's requests;
//! - [`sandbox`]: running untrusted solutions;
//! - [`pipeline`]: runs stages from resolved settings, below every command;
//! - [`cluster`]: a stage's units as a Slurm job array (plans, shards, `ml2b worker`);
//! - [`query`]: DataFusion SQL over the logs;
//! - [`record`]: everything the store holds about one event (`ml2b show`, `ml2b view`);
//! - [`viewer`]: the read-only web viewer of a store (`ml2b view`);
//! - [`cli`], [`settings`], [`commands`]: the `ml2b` command line.

// Tests report how close they came to the reference values.
#![cfg_attr(test, allow(clippy::print_stdout, clippy::print_stderr))]

pub mod check;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod competition;
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
pub mod viewer;

/// Diagnostics on stderr: `RUST_LOG` wins, else `-v` picks the level.
pub fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Prints an error and its cause chain on stderr, once.
pub fn print_error(err: &anyhow::Error) {
    settings::message(format_args!("error: {err}"));
    let mut last = err.to_string();
    for cause in err.chain().skip(1) {
        // Some libraries repeat their inner error in their own message; say it once.
        let text = cause.to_string();
        if !last.contains(&text) {
            settings::message(format_args!("  caused by: {text}"));
        }
        last = text;
    }
}

/// An error and its causes on one line (`a: b: c`), for messages stored in events.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        let s = c.to_string();
        if !text.contains(&s) {
            text.push_str(": ");
            text.push_str(&s);
        }
        cause = c.source();
    }
    text
}
