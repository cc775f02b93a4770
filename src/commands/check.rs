//! `ml2b check FILE.py --format modular|mono`: the static checks and the leakage detector
//! (`crate::check`) on one submission, without running it.
//!
//! Prints one line per finding, `LINE: KIND: message`, or with `--json`
//! `{"file", "format", "findings": [{"kind", "line", "message"}]}`. Exit 0 when there is no
//! finding, 1 when there is one, 2 when the file cannot be read.

use std::io::Write;

use super::{ExitStatus, InputError};
use crate::settings::{CheckSettings, GlobalSettings};

/// Runs `ml2b check`.
pub(super) fn check(settings: &GlobalSettings, args: &CheckSettings) -> anyhow::Result<ExitStatus> {
    let source = std::fs::read_to_string(&args.file)
        .map_err(|e| InputError(format!("cannot read {}: {e}", args.file.display())))?;
    let findings = crate::check::check(&source, args.format);
    if settings.printer.json {
        settings.printer.json(&serde_json::json!({
            "file": args.file, "format": args.format, "findings": findings,
        }))?;
    } else if findings.is_empty() {
        writeln!(settings.printer.stdout(), "{}: no findings", args.file.display())?;
    } else {
        for f in &findings {
            writeln!(
                settings.printer.stdout(),
                "{}:{}: {}: {}",
                args.file.display(),
                f.line,
                f.kind,
                f.message
            )?;
        }
    }
    Ok(if findings.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
