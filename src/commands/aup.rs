//! `ml2b aup`: AUP variants and win rates per (model, language) from a ratios file.

use super::{ExitStatus, print_report};
use crate::metrics::aup::aup_file;
use crate::settings::{AupSettings, GlobalSettings};

/// Runs `ml2b aup`.
pub(super) fn aup(settings: &GlobalSettings, s: &AupSettings) -> anyhow::Result<ExitStatus> {
    let report = aup_file(&s.ratios, s.convention)?;
    print_report(settings, &report)?;
    Ok(ExitStatus::Success)
}
