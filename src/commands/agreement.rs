//! `ml2b agreement`: agreement coefficients of a ratings table.

use super::{ExitStatus, parse_flag, print_report};
use crate::cli::AgreementArgs;
use crate::metrics::text_report::agreement_file;
use crate::settings::GlobalSettings;

/// Runs `ml2b agreement`.
pub fn agreement(settings: &GlobalSettings, args: &AgreementArgs) -> anyhow::Result<ExitStatus> {
    let weights = parse_flag("--weights", &args.weights)?;
    let report = agreement_file(&args.ratings, args.categories.as_deref(), weights)?;
    print_report(settings, &report)?;
    Ok(ExitStatus::Success)
}
