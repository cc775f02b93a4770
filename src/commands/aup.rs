//! `ml2b aup`: AUP variants and win rates per (model, language) from a ratios file.

use super::{ExitStatus, parse_flag, print_report};
use crate::cli::AupArgs;
use crate::metrics::aup::aup_file;
use crate::settings::GlobalSettings;

/// Runs `ml2b aup`.
pub fn aup(settings: &GlobalSettings, args: &AupArgs) -> anyhow::Result<ExitStatus> {
    let convention = parse_flag("--convention", &args.convention)?;
    let report = aup_file(&args.ratios, convention)?;
    print_report(settings, &report)?;
    Ok(ExitStatus::Success)
}
