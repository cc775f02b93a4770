//! `ml2b agreement`: agreement coefficients of a ratings table.

use super::{ExitStatus, print_report};
use crate::metrics::text_files::agreement_file;
use crate::settings::{AgreementSettings, GlobalSettings};

/// Runs `ml2b agreement`.
pub(super) fn agreement(settings: &GlobalSettings, s: &AgreementSettings) -> anyhow::Result<ExitStatus> {
    let report = agreement_file(&s.ratings, s.categories.as_deref(), s.weights)?;
    print_report(settings, &report)?;
    Ok(ExitStatus::Success)
}
