//! A grading program: MLE-bench's own `grade.py` scoring one submission, run in the sandbox
//! like a solution (no network, read-only, bounded), for a competition whose metric is
//! `program` (none of ml2b's exact metrics computes its grader).
//!
//! What the program sees, in its `/data` folder: `submission.csv` (the submission in the
//! sample submission's shape: the id column and the target columns, in the manifest's order,
//! made from an execution's predictions Parquet, or the CSV given to `grade-sample` as it
//! is), `answers.csv` (the private answers as imported) and `grader/` (the files of
//! `[mle_bench.program]`, each checked against its blake3 first). Nothing else of the
//! competition, the store or the host. The driver, `assets/grade/mle_bench_program.py`
//! (compiled into ml2b), imports the competition's `grade` module and calls
//! `grade(submission, answers)`.
//!
//! Outcomes: a finite score is valid; `InvalidSubmissionError`, an exception of `grade()`
//! (as MLE-bench's `Grader` turns any exception into an ungraded submission) or a
//! non-finite result is an invalid submission whose reason says which (`grade.py: …`).
//! What is not a verdict on the submission is an error ([`ProgramError::Environment`]),
//! never an invalid grade: the sandbox or the grader failing to start (the driver prints
//! `sandbox::READY` only once `grade.py` and its libraries loaded, so a missing library or
//! a broken Python is `sandbox_error`), and a grader cut off at its time limit. [`check`]
//! asks only whether the grader loads: a preflight before a run.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arrow::array::RecordBatch;
use arrow::datatypes::{Field, Schema};

use super::{Competition, Side};
use crate::events::{Format, Outcome};
use crate::metrics::grading::table::read_table;
use crate::metrics::grading::{Invalid, Score};
use crate::sandbox::{Backend, Job, Limits, SandboxError, assets};

/// Why a grading program could not be run (as opposed to a submission it rejected).
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    #[error("{}: the grading program's file does not match its manifest (blake3 {got}, recorded {expected})", path.display())]
    Mismatch {
        path: PathBuf,
        expected: String,
        got: String,
    },
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("running the grading program of `{id}`")]
    Sandbox {
        id: String,
        #[source]
        source: SandboxError,
    },
    #[error("`{0}` is not graded by a program")]
    NotAProgram(String),
    /// The grading environment failed (the sandbox, the Python environment or the grader's
    /// libraries), or the grader ran past its limit: no verdict on the submission.
    #[error("the grading program of `{id}` could not grade: it ended {outcome}: {detail}")]
    Environment {
        id: String,
        outcome: Outcome,
        detail: String,
    },
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> ProgramError {
    move |source| ProgramError::Io { what, source }
}

/// The limits of one grading run: graders are fast; a slow one is cut off.
fn limits() -> Limits {
    Limits {
        wall: Duration::from_secs(900),
        memory_bytes: 8 << 30,
        processes: 64,
        output_bytes: 1 << 20,
        output_files: 8,
    }
}

/// Scores `submission` (an execution's predictions Parquet, or a CSV) with `c`'s program.
pub fn score(
    c: &Competition,
    submission: &Path,
    python: &Path,
    backend: &dyn Backend,
) -> Result<Score, ProgramError> {
    let staging = stage_grader(c)?;
    let data = staging.path().join("data");
    let answers = c.file(Side::Private, "answers.csv");
    std::fs::copy(&answers, data.join("answers.csv"))
        .map_err(io(format!("copying {}", answers.display())))?;
    if let Some(reason) = write_submission(c, submission, &data.join("submission.csv"))? {
        return Ok(Score::Invalid { reason });
    }
    let run = run_driver(c, staging.path(), python, backend)?;
    verdict(c, &run)
}

/// Whether `c`'s grading program loads in the sandbox (its files match the manifest, the
/// Python environment and the grader's libraries import): the preflight of a run that
/// grades `c`. Reads no answers and grades nothing.
pub fn check(c: &Competition, python: &Path, backend: &dyn Backend) -> Result<(), ProgramError> {
    let staging = stage_grader(c)?;
    std::fs::write(staging.path().join("data/preflight"), b"")
        .map_err(io("staging the grader's preflight".into()))?;
    let run = run_driver(c, staging.path(), python, backend)?;
    verdict(c, &run).map(|_| ())
}

/// A fresh folder with `data/grader/` holding the program's files, each checked against the
/// manifest's blake3 first.
fn stage_grader(c: &Competition) -> Result<tempfile::TempDir, ProgramError> {
    let m = &c.manifest;
    let mle = m
        .mle_bench
        .as_ref()
        .filter(|b| !b.program.is_empty())
        .ok_or_else(|| ProgramError::NotAProgram(m.id.clone()))?;
    let staging = tempfile::Builder::new()
        .prefix("ml2b-grader-")
        .tempdir()
        .map_err(io("creating the grading program's folder".into()))?;
    let data = staging.path().join("data");
    for (rel, expected) in &mle.program {
        let from = c.dir.join(rel);
        let got = crate::store::hash_file_hex(&from).map_err(io(format!("reading {}", from.display())))?;
        if &got != expected {
            return Err(ProgramError::Mismatch {
                path: from,
                expected: expected.clone(),
                got,
            });
        }
        let to = data.join("grader").join(
            Path::new(rel)
                .strip_prefix(crate::competition::import::mle_bench::GRADER_DIR)
                .unwrap_or(Path::new(rel)),
        );
        std::fs::create_dir_all(to.parent().expect("a file"))
            .map_err(io(format!("creating {}", to.display())))?;
        std::fs::copy(&from, &to).map_err(io(format!("copying {}", from.display())))?;
    }
    std::fs::create_dir_all(&data).map_err(io(format!("creating {}", data.display())))?;
    Ok(staging)
}

/// Runs the driver over `staging/data` in the sandbox.
fn run_driver(
    c: &Competition,
    staging: &Path,
    python: &Path,
    backend: &dyn Backend,
) -> Result<crate::sandbox::Run, ProgramError> {
    let m = &c.manifest;
    let data = staging.join("data");
    // The harness's command line names /data/train.csv; the driver reads only its folder.
    std::fs::write(data.join("train.csv"), b"").map_err(io("staging".into()))?;
    std::fs::write(data.join("test.csv"), b"").map_err(io("staging".into()))?;
    let driver =
        assets::materialize("mle_bench_program.py", assets::MLE_BENCH_PROGRAM).map_err(|source| {
            ProgramError::Sandbox {
                id: m.id.clone(),
                source,
            }
        })?;
    let job = Job {
        python: python.to_path_buf(),
        harness: driver.clone(),
        code: driver,
        format: Format::Mono,
        public_dir: data,
        spec: super::spec::Spec::of(m),
        limits: limits(),
        proxy: None,
        model_cache: None,
        gpus: None,
    };
    let out = staging.join("out");
    std::fs::create_dir(&out).map_err(io("creating the output folder".into()))?;
    backend.run(&job, &out).map_err(|source| ProgramError::Sandbox {
        id: m.id.clone(),
        source,
    })
}

/// The score or the reason from the driver's record; an error where the run says nothing
/// of the submission (the grader did not load, or ran out of time).
fn verdict(c: &Competition, run: &crate::sandbox::Run) -> Result<Score, ProgramError> {
    let reason = |why: String| Score::Invalid {
        reason: Invalid::Metric(why),
    };
    Ok(match (run.outcome, run.result["score"].as_f64()) {
        (outcome @ (Outcome::SandboxError | Outcome::Timeout), _) => {
            return Err(ProgramError::Environment {
                id: c.manifest.id.clone(),
                outcome,
                detail: run
                    .detail
                    .clone()
                    .unwrap_or_else(|| run.stderr_tail.trim().to_string()),
            });
        }
        (Outcome::Ok, Some(score)) if score.is_finite() => Score::Valid {
            metric: crate::manifest::competition::PROGRAM.into(),
            score,
        },
        (Outcome::Ok, _) => reason("the grading program's record says ok but holds no finite score".into()),
        (outcome, _) => reason(run.result["reason"].as_str().map_or_else(
            || {
                let detail = run
                    .detail
                    .clone()
                    .unwrap_or_else(|| run.stderr_tail.trim().to_string());
                format!("the grading program ended {outcome}: {detail}")
            },
            String::from,
        )),
    })
}

/// Writes the submission CSV the program reads: a CSV as given, or an execution's
/// predictions (Parquet) as the id and target columns. `Some(reason)` when the predictions
/// lack a column.
fn write_submission(c: &Competition, from: &Path, to: &Path) -> Result<Option<Invalid>, ProgramError> {
    let parquet = std::fs::File::open(from)
        .and_then(|mut f| {
            let mut magic = [0u8; 4];
            std::io::Read::read_exact(&mut f, &mut magic).map(|()| &magic == b"PAR1")
        })
        .unwrap_or(false);
    if !parquet {
        std::fs::copy(from, to).map_err(io(format!("copying {}", from.display())))?;
        return Ok(None);
    }
    let table = match read_table(from) {
        Ok(t) => t,
        Err(e) => return Ok(Some(Invalid::Unreadable(e.to_string()))),
    };
    let m = &c.manifest;
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for name in std::iter::once(&m.columns.id).chain(&m.columns.targets) {
        let Some(col) = table.column(name) else {
            return Ok(Some(Invalid::MissingColumn(name.clone())));
        };
        fields.push(Field::new(name, col.data_type().clone(), true));
        columns.push(Arc::clone(col));
    }
    let batch =
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(|e| ProgramError::Io {
            what: format!("assembling the submission of {}", from.display()),
            source: std::io::Error::other(e),
        })?;
    let file = std::fs::File::create(to).map_err(io(format!("writing {}", to.display())))?;
    let mut writer = arrow::csv::WriterBuilder::new().with_header(true).build(file);
    writer.write(&batch).map_err(|e| ProgramError::Io {
        what: format!("writing {}", to.display()),
        source: std::io::Error::other(e),
    })?;
    Ok(None)
}

/// [`score`] in the local sandbox (bubblewrap) with the managed Python environment: how
/// the grade stage, `grade-file` and `grade-sample` run a competition's program.
pub fn score_locally(c: &Competition, submission: &Path) -> Result<Score, ProgramError> {
    let (python, backend) = local_sandbox(c)?;
    score(c, submission, &python, &backend)
}

/// [`check`] where [`score_locally`] grades.
pub fn check_locally(c: &Competition) -> Result<(), ProgramError> {
    let (python, backend) = local_sandbox(c)?;
    check(c, &python, &backend)
}

fn local_sandbox(c: &Competition) -> Result<(PathBuf, crate::sandbox::local::Local), ProgramError> {
    let sandbox = |source| ProgramError::Sandbox {
        id: c.manifest.id.clone(),
        source,
    };
    let python = crate::sandbox::pyenv::ensure(|| ()).map_err(sandbox)?;
    let backend = crate::sandbox::local::Local::new().map_err(sandbox)?;
    Ok((python, backend))
}
