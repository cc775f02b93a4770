//! Running one AIDE attempt on the validation split and scoring it.
//!
//! An attempt's code runs through the [`Runner`] execute uses (the same backend, harness,
//! requirements and limits) with the validation split (`competition::validation`) as its
//! public folder, so it never sees the held-out features; its predictions are scored with
//! the competition's metric against the split's answers, by the grader.
//!
//! A run is a fact like an LLM response: it is recorded once and reused. Its [`Trial`] is
//! stored as an object and `store/cache/trials/<key>` names it (see `super::super::cache`),
//! the key covering the code, the format, the split's blake3 and the sandbox's identity. So a
//! search that is run again — after a crash, say — replays the same runs, and makes the same
//! choices, without executing anything.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::super::cache;
use crate::competition::Competition;
use crate::competition::validation::{self, Validation};
use crate::events::{Format, Outcome};
use crate::log::LogError;
use crate::metrics::grading::{Score, score_files_with};
use crate::stages::StageError;
use crate::stages::solution::Runner;
use crate::store::{Hash, KeyHasher, Store};

/// The cache folder of validation runs.
const TRIALS: &str = "trials";

/// The most output an attempt shows the model when it failed (AIDE trims to about 5,000).
const TERM_OUT_BYTES: usize = 5000;

/// What one validation run gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// How the run ended (its name in the recorded JSON, as in events).
    pub outcome: Outcome,
    pub wall_seconds: f64,
    /// Errors, tracebacks and output of the run, trimmed, as the model is shown them.
    pub term_out: String,
    /// The exception's class name, when the code raised one.
    pub exc_type: Option<String>,
    /// The validation score, when the run is ok and its predictions are valid.
    pub score: Option<f64>,
    /// Why there is no score.
    pub reason: Option<String>,
    pub predictions_blake3: Option<String>,
}

/// Runs attempts with the execute stage's runner, `jobs` at once whatever the number of
/// searches, and keeps each competition's validation split.
pub struct Trials {
    runner: Runner,
    jobs: tokio::sync::Semaphore,
    scratch: tempfile::TempDir,
    splits: Mutex<HashMap<(String, u64), Arc<Validation>>>,
}

impl Trials {
    pub fn new(runner: Runner, jobs: usize) -> std::io::Result<Self> {
        Ok(Self {
            runner,
            jobs: tokio::sync::Semaphore::new(jobs.max(1)),
            scratch: tempfile::tempdir()?,
            splits: Mutex::new(HashMap::new()),
        })
    }

    /// What makes runs differ besides the code and the data, for unit keys.
    pub fn identity(&self) -> serde_json::Map<String, serde_json::Value> {
        self.runner.identity()
    }

    /// `c`'s validation split holding out `fraction`, written once per stage.
    pub fn split(&self, c: &Competition, fraction: f64) -> Result<Arc<Validation>, StageError> {
        let mut splits = self.splits.lock().expect("split lock");
        let key = (c.id().to_string(), fraction.to_bits());
        if let Some(v) = splits.get(&key) {
            return Ok(v.clone());
        }
        let dir = self.scratch.path().join(format!("{}-{}", c.id(), splits.len()));
        let v = validation::write(c, fraction, &dir)
            .map_err(|e| StageError::failed(format!("validation split of {}", c.id()), e))?;
        let v = Arc::new(v);
        splits.insert(key, v.clone());
        Ok(v)
    }

    /// The run of `code` on `split`: recorded, or made now (then recorded).
    pub async fn run(
        &self,
        store: &Store,
        c: &Competition,
        format: Format,
        code: &Hash,
        split: &Validation,
    ) -> Result<Trial, StageError> {
        let key = self.key(format, code, split)?;
        if let Some(trial) = recorded(store, &key)? {
            return Ok(trial);
        }
        let trial = self.execute(store, c, format, code, split).await?;
        record(store, &key, &trial)?;
        Ok(trial)
    }

    fn key(&self, format: Format, code: &Hash, split: &Validation) -> Result<Hash, StageError> {
        let mut k = KeyHasher::new("ml2b aide trial v1");
        k.str(format.harness_mode())
            .str(&code.to_hex())
            .str(&split.blake3);
        k.json(&self.identity()).map_err(LogError::Json)?;
        Ok(k.finish())
    }

    async fn execute(
        &self,
        store: &Store,
        c: &Competition,
        format: Format,
        code: &Hash,
        split: &Validation,
    ) -> Result<Trial, StageError> {
        let fail = |m: String| StageError::Unit {
            label: format!("validation run of {}", c.id()),
            message: m,
        };
        if c.manifest.is_program_graded() {
            return Err(fail(format!(
                "aide scores its trials on a validation split with one of ml2b's metrics, and `{}` \
                 is graded by MLE-bench's own program (which reads the competition's own answers \
                 layout): use the one-shot agent",
                c.id()
            )));
        }
        let ran = {
            let _permit = self.jobs.acquire().await.map_err(|e| fail(e.to_string()))?;
            self.runner
                .run(store, c, format, code, split.dir.clone())
                .await
                .map_err(fail)?
        };
        let run = &ran.run;
        let mut trial = Trial {
            outcome: ran.outcome,
            wall_seconds: run.wall_seconds,
            term_out: term_out(run),
            exc_type: run.result["exception"].as_str().map(String::from),
            score: None,
            reason: None,
            predictions_blake3: None,
        };
        let Some(predictions) = ran.predictions.filter(|_| trial.outcome == Outcome::Ok) else {
            trial.reason = Some(format!("the run ended {}", trial.outcome));
            return Ok(trial);
        };
        trial.predictions_blake3 = Some(predictions.to_hex());
        let path = store
            .objects()
            .local_file(&predictions)
            .map_err(|e| fail(crate::error::chain(&e)))?;
        let score = score_files_with(
            &c.manifest.metric.name,
            &split.answers(),
            &path,
            &c.grade_options(),
        )
        .map_err(|e| fail(crate::error::chain(&e)))?;
        match score {
            Score::Valid { score, .. } => trial.score = Some(score),
            Score::Invalid { reason } => {
                trial.reason = Some(reason.to_string());
                trial.term_out = trim(&format!(
                    "{}\nThe predictions are invalid: {reason}",
                    trial.term_out
                ));
            }
        }
        Ok(trial)
    }
}

/// The trial recorded under `key`, if any. It reads back bit for bit, floats included
/// (serde_json's `float_roundtrip`), so a replayed search's events are the first run's.
fn recorded(store: &Store, key: &Hash) -> Result<Option<Trial>, StageError> {
    let Some((object, bytes)) = cache::lookup_object(store, TRIALS, key) else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|source| StageError::Decode {
            what: format!("recorded validation run {object}"),
            source,
        })
}

/// Records `trial` as the run of `key`.
fn record(store: &Store, key: &Hash, trial: &Trial) -> Result<(), StageError> {
    let json = serde_json::to_vec(trial).map_err(LogError::Json)?;
    let object = store.objects().put(&json).map_err(LogError::from)?;
    cache::record_object(store, TRIALS, key, &object)
}

/// What the model is shown of a run: the harness's tracebacks and errors, the backend's
/// detail, then the tail of the code's own output (or, with nothing else, of stderr).
fn term_out(run: &crate::sandbox::Run) -> String {
    let mut parts: Vec<String> = Vec::new();
    for key in ["tracebacks", "errors"] {
        if let Some(items) = run.result[key].as_array() {
            parts.extend(items.iter().filter_map(|v| v.as_str()).map(String::from));
        }
    }
    if let Some(detail) = &run.detail {
        parts.push(detail.clone());
    }
    let stdout = run.stdout_tail.trim();
    // An ok run prints the harness's result there; a failed one, only the code's output.
    if !stdout.is_empty() && run.result.get("success") != Some(&serde_json::Value::Bool(true)) {
        parts.push(stdout.to_string());
    }
    if parts.is_empty() && !run.stderr_tail.trim().is_empty() {
        parts.push(run.stderr_tail.trim().to_string());
    }
    trim(&parts.join("\n"))
}

/// The last [`TERM_OUT_BYTES`] of `text`.
fn trim(text: &str) -> String {
    crate::sandbox::tail(text.as_bytes(), TERM_OUT_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A replayed search must see the very numbers the first run saw: its journal events
    /// are content-addressed, so one bit of `wall_seconds` changes their ids. These two
    /// values read back one ulp off with serde_json's default float parser.
    #[test]
    fn a_recorded_trial_reads_back_bit_for_bit() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        for (i, seconds) in [9.796034652704707_f64, 1.7941833127465723]
            .into_iter()
            .enumerate()
        {
            let key = Hash::of(format!("trial {i}").as_bytes());
            let trial = Trial {
                outcome: Outcome::Ok,
                wall_seconds: seconds,
                term_out: String::new(),
                exc_type: None,
                score: Some(seconds / 7.0),
                reason: None,
                predictions_blake3: None,
            };
            assert_eq!(recorded(&store, &key).unwrap(), None);
            record(&store, &key, &trial).unwrap();
            let back = recorded(&store, &key).unwrap().unwrap();
            assert_eq!(back.wall_seconds.to_bits(), seconds.to_bits());
            assert_eq!(back.score.unwrap().to_bits(), trial.score.unwrap().to_bits());
        }
    }
}
