//! `ml2b bleu`: corpus or sentence BLEU (and chrF) of one hypothesis file.

use super::{ExitStatus, print_report};
use crate::metrics::text_files::bleu_files;
use crate::settings::{BleuSettings, GlobalSettings};

/// Runs `ml2b bleu`.
pub(super) fn bleu(settings: &GlobalSettings, s: &BleuSettings) -> anyhow::Result<ExitStatus> {
    let report = bleu_files(&s.hyp, &s.refs, &s.options, s.sentence, s.chrf)?;
    print_report(settings, &report)?;
    Ok(ExitStatus::Success)
}
