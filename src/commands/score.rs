//! `ml2b score`: grade one prediction file, like a Kaggle submission.
//!
//! A valid submission prints its score and exits 0; an invalid one prints the
//! reason (`{"valid": false, "reason"}` with `--json`) and exits 1. Predictions columns that
//! grading ignores are warned about on stderr and listed in the JSON's `warnings`. A problem
//! with the answers (or with targets taken from them) is an error naming the answers file
//! (exit 2); an invalid submission's line names the predictions file.

use std::io::Write;

use super::{ExitStatus, print_report};
use crate::metrics::grading::{GradeOptions, Score, score_files_graded};
use crate::settings::{GlobalSettings, ScoreSettings};

/// Runs `ml2b score`.
pub(super) fn score(settings: &GlobalSettings, s: &ScoreSettings) -> anyhow::Result<ExitStatus> {
    let options = GradeOptions {
        id_col: s.id_col.clone(),
        targets: s.targets.clone(),
        ..GradeOptions::default()
    };
    let graded = score_files_graded(&s.metric, &s.answers, &s.predictions, &options)?;
    for warning in &graded.warnings {
        settings.printer.warn(warning);
    }
    match &graded.score {
        Score::Invalid { reason } if !settings.printer.json => writeln!(
            settings.printer.stdout(),
            "invalid submission (predictions file {}): {reason}",
            s.predictions.display()
        )?,
        _ => print_report(settings, &graded)?,
    }
    Ok(match graded.score {
        Score::Valid { .. } => ExitStatus::Success,
        Score::Invalid { .. } => ExitStatus::Failure,
    })
}
