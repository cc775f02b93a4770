//! `ml2b score`: grade one prediction file, like a Kaggle submission.
//!
//! A valid submission prints its score and exits 0; an invalid one prints the
//! reason (`{"valid": false, "reason"}` with `--json`) and exits 1.

use super::{ExitStatus, print_report};
use crate::metrics::grading::{Score, score_files};
use crate::settings::{GlobalSettings, ScoreSettings};

/// Runs `ml2b score`.
pub(super) fn score(settings: &GlobalSettings, s: &ScoreSettings) -> anyhow::Result<ExitStatus> {
    let score = score_files(&s.metric, &s.answers, &s.predictions, &s.id_col)?;
    print_report(settings, &score)?;
    Ok(match score {
        Score::Valid { .. } => ExitStatus::Success,
        Score::Invalid { .. } => ExitStatus::Failure,
    })
}
