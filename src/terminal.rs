//! What ml2b writes to a terminal: one line on stderr ([`message`]), text made safe to
//! show there ([`visible`]), and the diagnostics' subscriber ([`init_tracing`]).
//!
//! A leaf: everything that prints goes through here, and it imports nothing of the crate.
//!
//! Invariant: what ml2b writes holds no control character but newline and tab. A model's
//! answer, a run's output, a server's error and everything else shown comes from outside
//! ml2b, and a terminal obeys the escape sequences in them (clear the screen, set the
//! window title, move the cursor back over a line to print a score of its own), so every
//! message goes through [`visible`].

use std::borrow::Cow;
use std::fmt::Write as _;

/// One line on stderr; a closed stderr loses the message, never the command.
pub fn message(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{}", visible(&line.to_string()));
}

/// `text` safe to print to a terminal: every control character but newline and tab (and
/// the carriage return of a CRLF) is shown instead of sent, C0 controls and DEL as their
/// Unicode control pictures (`\x1b` as `␛`, a lone `\r` as `␍`), C1 controls and the
/// bidirectional overrides (which reorder what a line shows) as `\u{…}`.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => out.push(c),
            '\0'..='\x1f' if c != '\n' && c != '\t' => {
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('?'));
            }
            '\x7f' => out.push('\u{2421}'),
            c if hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A character [`visible`] shows instead of sending.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

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
