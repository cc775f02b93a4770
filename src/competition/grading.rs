//! Grading one predictions file for a competition, and ranking its score on the
//! competition's MLE-bench leaderboard: what the `grade` stage does for every execution and
//! `ml2b grade-sample` for one file made anywhere, through the same functions.
//!
//! * [`score_file`]: the competition's metric on its private answers (the answers and the
//!   metric named by the manifest, the columns as [`Competition::private_grade_options`] says), or
//!   its grading program (metric `program`, `competition::program`), under today's grading
//!   rules; [`score_file_graded`] under given rules (`metrics::grading::rules`: a grade event
//!   re-derives with the rules it was written under), with where the verdict departs from
//!   MLE-bench's `grade.py`. An MLE-bench competition graded natively gets its `grade.py`'s
//!   checks (`rules::mle_bench_checks`);
//! * [`Competition::leaderboard`]: the leaderboard the manifest's `[mle_bench]` names,
//!   checked against its recorded blake3 at use (as the private files are), read by
//!   [`Leaderboard::read`]; none for a competition without one;
//! * [`Competition::grader_blake3`]: one hash over the grading program's files of the
//!   manifest (`[mle_bench.program]`), which grade events record.

use std::path::{Path, PathBuf};

use super::integrity::DataError;
use super::{Competition, Side};
use crate::metrics::grading::rules::mle_bench_checks;
use crate::metrics::grading::{GradeError, Graded, Rules, Score, score_files_graded};
use crate::metrics::medals::{Leaderboard, LeaderboardError};
use crate::store::{Hash, KeyHasher};

/// Scores a predictions (or submission) file on the competition's private answers: with
/// its metric, or with its grading program in the sandbox (`competition::program`).
pub fn score_file(c: &Competition, predictions: &Path) -> Result<Score, ScoreFileError> {
    score_file_graded(c, predictions, Rules::default()).map(|graded| graded.score)
}

/// [`score_file`] under `rules`, with the grader's warnings and departure from MLE-bench.
pub fn score_file_graded(
    c: &Competition,
    predictions: &Path,
    rules: Rules,
) -> Result<Graded, ScoreFileError> {
    if c.manifest.is_program_graded() {
        return Ok(Graded {
            score: super::program::score_locally(c, predictions)?,
            warnings: Vec::new(),
            departure: None,
        });
    }
    let answers = c.file(Side::Private, "answers.csv");
    let mut options = c.private_grade_options();
    options.rules = rules;
    options.mle_bench = c.manifest.mle_bench.as_ref().map(|_| mle_bench_checks(c.id()));
    Ok(score_files_graded(
        &c.manifest.metric.name,
        &answers,
        predictions,
        &options,
    )?)
}

/// Why a file could not be scored (as opposed to a submission found invalid).
#[derive(Debug, thiserror::Error)]
pub enum ScoreFileError {
    #[error(transparent)]
    Grade(#[from] GradeError),
    #[error(transparent)]
    Program(#[from] super::program::ProgramError),
}

/// A competition's leaderboard, checked and read.
#[derive(Clone, Debug)]
pub struct Ranking {
    pub leaderboard: Leaderboard,
    /// The file's blake3 (what the manifest records).
    pub blake3: Hash,
    /// `data/<id>/<leaderboard>`.
    pub path: PathBuf,
}

/// A leaderboard that cannot be ranked against.
#[derive(Debug, thiserror::Error)]
pub enum LeaderboardUseError {
    /// The file is not what the manifest records.
    #[error(transparent)]
    Data(#[from] DataError),
    #[error(transparent)]
    Read(#[from] LeaderboardError),
}

impl Competition {
    /// `data/<id>/<mle_bench.leaderboard>`, when the manifest names a leaderboard.
    pub fn leaderboard_path(&self) -> Option<PathBuf> {
        let m = self.manifest.mle_bench.as_ref()?;
        (!m.leaderboard.is_empty()).then(|| self.dir.join(&m.leaderboard))
    }

    /// The leaderboard, checked against the manifest's `mle_bench.leaderboard_blake3`;
    /// none when the manifest names none.
    pub fn leaderboard(&self) -> Result<Option<Ranking>, LeaderboardUseError> {
        let (Some(path), Some(m)) = (self.leaderboard_path(), &self.manifest.mle_bench) else {
            return Ok(None);
        };
        let blake3 = self.verify_file(&path, &m.leaderboard_blake3, "mle_bench.leaderboard_blake3")?;
        let leaderboard = Leaderboard::read(&path)?;
        Ok(Some(Ranking {
            leaderboard,
            blake3,
            path,
        }))
    }

    /// One blake3 over the grading program's files (`[mle_bench.program]`, metric
    /// `program`): a key in domain `grader` over the (file, blake3) pairs in name order;
    /// none when the manifest names no program.
    pub fn grader_blake3(&self) -> Option<Hash> {
        let program = &self.manifest.mle_bench.as_ref()?.program;
        if program.is_empty() {
            return None;
        }
        let mut k = KeyHasher::new("grader");
        k.u64(program.len() as u64);
        for (name, hash) in program {
            k.str(name).str(hash);
        }
        Some(k.finish())
    }
}
