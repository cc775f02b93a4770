//! Errors as the user sees them: the one place that walks a cause chain, to print it
//! ([`print`]) or to store it on one line ([`chain`]), and the question each error type
//! answers about itself ([`IsInputError`]).
//!
//! A leaf: it imports nothing of the crate but the terminal's [`message`], so every layer
//! may use it. Each error type that can carry bad input implements [`IsInputError`] beside
//! its definition; a wrapper (`PipelineError`, `StageError`) asks the error it wraps, so
//! the answer survives `#[error(transparent)]`, which hides the wrapped error from the
//! cause chain. Which types the exit status asks is decided at the edge
//! (`commands::status_of`), the one place that knows them all.
//!
//! Invariant: a cause whose text is already shown (some libraries repeat their inner
//! error in their own message) is said once.

use crate::terminal::message;

/// An error that knows whether it is the user's input being wrong (exit 2) rather than
/// the work failing (exit 1).
pub trait IsInputError {
    fn is_input_error(&self) -> bool;
}

/// The texts of `err` and its causes, outermost first.
fn texts<'a>(err: &'a (dyn std::error::Error + 'static)) -> impl Iterator<Item = String> + 'a {
    std::iter::successors(Some(err), |e| e.source()).map(|e| e.to_string())
}

/// Prints an error and its cause chain on stderr, once: a cause the cause before it
/// already quotes is not said again.
pub fn print(err: &anyhow::Error) {
    let mut last = String::new();
    for (i, text) in texts(err.as_ref()).enumerate() {
        if i == 0 {
            message(format_args!("error: {text}"));
        } else if !last.contains(&text) {
            message(format_args!("  caused by: {text}"));
        }
        last = text;
    }
}

/// An error and its causes on one line (`a: b: c`), for messages stored in events: a
/// cause the line already holds is not added again.
pub fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut line = String::new();
    for (i, text) in texts(err).enumerate() {
        if i == 0 {
            line = text;
        } else if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}
