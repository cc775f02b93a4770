//! Errors as the user sees them: the one place that walks a cause chain, to print it
//! ([`print`]) or to store it on one line ([`chain`]), and the question each error type
//! answers about itself ([`IsInputError`]).
//!
//! A leaf: it imports nothing of the crate but the terminal's [`message`], so every layer
//! may use it. Each error type that can carry bad input implements [`IsInputError`] beside
//! its definition and joins the registry there (`input_error!(Type)`); a wrapper
//! (`PipelineError`, `StageError`) asks the error it wraps, so the answer survives
//! `#[error(transparent)]`, which hides the wrapped error from the cause chain. The exit
//! status ([`is_input_error`] on each cause) asks every registered type, and no list of
//! them exists anywhere: an error type says what it is where it is defined.
//!
//! Invariant: a cause whose text is already shown (some libraries repeat their inner
//! error in their own message) is said once.

use crate::terminal::message;

/// An error that knows whether it is the user's input being wrong (exit 2) rather than
/// the work failing (exit 1).
pub trait IsInputError {
    fn is_input_error(&self) -> bool;
}

/// One error type's answer, for a type-erased error: `None` when `e` is not of that type.
pub struct InputErrorType(pub fn(&(dyn std::error::Error + 'static)) -> Option<bool>);

inventory::collect!(InputErrorType);

/// Registers an error type that implements [`IsInputError`], beside its definition, so
/// that [`is_input_error`] asks it.
macro_rules! input_error {
    ($t:ty) => {
        inventory::submit! {
            $crate::error::InputErrorType(|e| {
                e.downcast_ref::<$t>()
                    .map(<$t as $crate::error::IsInputError>::is_input_error)
            })
        }
    };
}
pub(crate) use input_error;

/// Whether `err` or one of its causes is an error of a registered type that says it is
/// the user's input.
pub fn is_input_error(err: &(dyn std::error::Error + 'static)) -> bool {
    std::iter::successors(Some(err), |e| e.source()).any(|e| {
        inventory::iter::<InputErrorType>
            .into_iter()
            .find_map(|t| (t.0)(e))
            .unwrap_or(false)
    })
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
