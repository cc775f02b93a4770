//! The score of one execution's predictions on its competition's private answers: what the
//! grade stage and the baselines' verdicts share. A leaf of `stages/grade/`.

use crate::competition::Competition;
use crate::competition::grading::score_file_graded;
use crate::events::Execution;
use crate::log::LogError;
use crate::metrics::grading::{Rules, Score};
use crate::stages::StageError;
use crate::store::Store;

/// The score of an execution's predictions under `rules`: `Err(reason)` when the run is not
/// `ok` or its predictions fail the grader's checks.
pub fn score_execution(
    store: &Store,
    c: &Competition,
    x: &Execution,
    rules: Rules,
) -> Result<Result<f64, String>, StageError> {
    let Some(hash) = x
        .predictions_blake3
        .filter(|_| x.outcome == crate::events::Outcome::Ok)
    else {
        return Ok(Err(format!("the run ended {}", x.outcome)));
    };
    let predictions = store.objects().local_file(&hash).map_err(LogError::from)?;
    let score = score_file_graded(c, &predictions, rules)
        .map_err(|e| StageError::failed(format!("grading {}", x.competition), e))?
        .score;
    Ok(match score {
        Score::Valid { score, .. } => Ok(score),
        Score::Invalid { reason } => Err(reason.to_string()),
    })
}
