//! Stage 4, `grade`: score every execution's predictions on the private answers.
//!
//! One unit per execute event (upstream: that event); the key also covers the metric and
//! the answers file's blake3, so a corrected answers file regrades. A run that is not `ok`
//! scores nothing (`valid = false`, the execute outcome as the reason); an ok run whose
//! predictions fail the grader's checks is invalid with the grader's reason. The
//! performance ratio r_p is against the manifest's baseline (the reference solution), in
//! ml2b's convention (`metrics::aup::run_ratio`; 0 for a failed or invalid run).
//!
//! `since` grades only the executions committed after a given execute segment; because a
//! unit's key and its event's id depend only on the execute event and the answers, grading
//! in several `--since` steps gives exactly the events of grading once.
//! [`GradeStage::rederive`] recomputes every grade event for `ml2b verify --rerun`.

use serde::{Deserialize, Serialize};

use super::execute::Execution;
use super::{Planned, Stage, StageError};
use crate::competition::{Benchmark, Side};
use crate::log::{Event, EventBody, LogError, StageLog, unit_key};
use crate::metrics::aup::run_ratio;
use crate::metrics::grading::{Score, score_files_with};
use crate::store::{Hash, Store};

/// One grade.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grade {
    pub competition: String,
    pub format: String,
    pub code_blake3: String,
    pub metric: String,
    /// `minimize` or `maximize`.
    pub direction: String,
    pub outcome: String,
    pub valid: bool,
    pub score: Option<f64>,
    pub reason: Option<String>,
    pub baseline_score: Option<f64>,
    /// r_p against the baseline; 0 for a failed or invalid run.
    pub r_p: Option<f64>,
    pub answers_blake3: String,
}

impl EventBody for Grade {
    const STAGE: &'static str = "grade";
    const SCHEMA_VERSION: u32 = 1;
}

/// One unit: an execute event.
#[derive(Clone, Debug)]
pub struct Unit {
    execution: Execution,
    answers_blake3: String,
}

/// The stage.
pub struct GradeStage {
    pub bench: Benchmark,
    pub store: Store,
    /// Grade only executions committed after the execute segment with this hash.
    pub since: Option<Hash>,
}

impl GradeStage {
    /// The unit grading one execute event (`None`: its competition left this root).
    fn planned(&self, e: &Event<Execution>) -> Result<Option<Planned<Unit>>, StageError> {
        let x = &e.body;
        let Ok(found) = self.bench.select(std::slice::from_ref(&x.competition)) else {
            return Ok(None);
        };
        let c = found[0];
        let answers = c.file(Side::Private, "answers.csv");
        let answers_blake3 = super::file_blake3(&answers)?;
        let params = (&c.manifest.metric.name, &answers_blake3);
        Ok(Some(Planned {
            key: unit_key(Grade::STAGE, Grade::SCHEMA_VERSION, &[e.id], &params)?,
            upstream: vec![e.id],
            label: format!("{}/{}/{}", x.competition, x.format, &x.code_blake3[..12]),
            unit: Unit {
                execution: x.clone(),
                answers_blake3,
            },
        }))
    }

    /// Re-derives every committed grade event from its execute event and today's answers;
    /// returns the ids (with a reason) of those that do not come out bit-identical.
    pub async fn rederive(&self, store: &Store) -> Result<(usize, Vec<(Hash, String)>), StageError> {
        let executions: std::collections::HashMap<Hash, Event<Execution>> =
            StageLog::new(store, Execution::STAGE)?
                .read_events::<Execution>(0)?
                .into_iter()
                .map(|e| (e.id, e))
                .collect();
        let grades = StageLog::new(store, Grade::STAGE)?.read_events::<Grade>(0)?;
        let mut differ = Vec::new();
        for g in &grades {
            let Some(x) = g.upstream.first().and_then(|id| executions.get(id)) else {
                differ.push((g.id, "its execute event is not in the log".into()));
                continue;
            };
            let Some(p) = self.planned(x)? else {
                differ.push((
                    g.id,
                    format!("competition `{}` is not in this root", x.body.competition),
                ));
                continue;
            };
            let body = self.run(p.unit).await?;
            let id = Event::compute_id(&p.key, &p.upstream, &body)?;
            if id != g.id {
                differ.push((g.id, format!("re-derived as {id}")));
            }
        }
        Ok((grades.len(), differ))
    }
}

impl Stage for GradeStage {
    type Body = Grade;
    type Unit = Unit;

    fn plan(&self, store: &Store) -> Result<Vec<Planned<Unit>>, StageError> {
        let log = StageLog::new(store, Execution::STAGE)?;
        let from = match &self.since {
            Some(since) => super::version_after(&log, since)?,
            None => 0,
        };
        let state = log.state::<Execution>(from)?;
        let mut planned = Vec::new();
        for e in state.events() {
            planned.extend(self.planned(e)?);
        }
        Ok(planned)
    }

    async fn run(&self, unit: Unit) -> Result<Grade, StageError> {
        let x = unit.execution;
        let c = self
            .bench
            .select(std::slice::from_ref(&x.competition))
            .map_err(StageError::Other)?[0];
        let m = &c.manifest;
        let baseline = m.baseline.as_ref().map(|b| b.score);
        let mut grade = Grade {
            competition: x.competition.clone(),
            format: x.format.clone(),
            code_blake3: x.code_blake3.clone(),
            metric: m.metric.name.clone(),
            direction: crate::manifest::serde_name(&m.metric.direction),
            outcome: x.outcome.clone(),
            valid: false,
            score: None,
            reason: None,
            baseline_score: baseline,
            r_p: baseline.map(|_| 0.0),
            answers_blake3: unit.answers_blake3,
        };
        let Some(hash) = x.predictions_blake3.as_deref().filter(|_| x.outcome == "ok") else {
            grade.reason = Some(format!("the run ended {}", x.outcome));
            return Ok(grade);
        };
        let hash: Hash = hash
            .parse()
            .map_err(|_| StageError::Other(format!("bad predictions hash {hash}")))?;
        let predictions = self.store.objects().path(&hash);
        self.store.objects().verify(&hash).map_err(LogError::from)?;
        let answers = c.file(Side::Private, "answers.csv");
        let score = score_files_with(&m.metric.name, &answers, &predictions, &c.grade_options())
            .map_err(|e| StageError::Other(format!("grading {}: {e}", x.competition)))?;
        match score {
            Score::Valid { score, .. } => {
                grade.valid = true;
                grade.score = Some(score);
                grade.r_p = baseline.map(|b| run_ratio(Some(score), b, m.metric.direction));
            }
            Score::Invalid { reason } => grade.reason = Some(reason.to_string()),
        }
        Ok(grade)
    }
}
