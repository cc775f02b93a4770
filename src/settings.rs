//! Resolved settings: what commands receive instead of clap types.

use std::io::IsTerminal;

use crate::cli::GlobalArgs;
use crate::store::Store;

/// Settings shared by every command.
#[derive(Clone, Debug)]
pub struct GlobalSettings {
    pub store: Store,
    pub printer: Printer,
}

impl GlobalSettings {
    /// Resolves the global flags.
    pub fn resolve(args: &GlobalArgs) -> Self {
        Self {
            store: Store::open(&args.store),
            printer: Printer {
                json: args.json,
                quiet: args.quiet,
                progress: !args.quiet && std::io::stderr().is_terminal(),
            },
        }
    }
}

/// How a command talks to the user: data on stdout, messages on stderr.
#[derive(Clone, Copy, Debug)]
pub struct Printer {
    /// Machine-readable JSON on stdout.
    pub json: bool,
    /// No informational messages.
    pub quiet: bool,
    /// Draw progress bars.
    pub progress: bool,
}

impl Printer {
    /// An informational message on stderr (hidden with `--quiet` or `--json`).
    pub fn info(&self, msg: impl std::fmt::Display) {
        if !self.quiet && !self.json {
            eprintln!("{msg}");
        }
    }

    /// A warning on stderr (always shown).
    pub fn warn(&self, msg: impl std::fmt::Display) {
        eprintln!("warning: {msg}");
    }

    /// Prints a value as pretty JSON on stdout.
    pub fn json<T: serde::Serialize>(&self, value: &T) -> anyhow::Result<()> {
        println!("{}", serde_json::to_string_pretty(value)?);
        Ok(())
    }
}
