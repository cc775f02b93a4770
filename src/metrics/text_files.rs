//! File-level entry points for the CLI: BLEU/chrF over segment files and
//! agreement over a ratings CSV, with serde reports and readable `Display`.
//!
//! Input formats:
//! * segment files: UTF-8, one segment per line (`\n`; a `\r` before it is
//!   dropped), line i of every file aligned; a final newline is optional;
//! * ratings CSV: UTF-8, a header row (`subject,<rater>,<rater>,...`), then
//!   one row per subject: its id, then one cell per rater, an empty cell
//!   being a missing rating.
//!
//! Invariant: every malformed input is a [`TextStatsError`] naming the file
//! and, where there is one, the 1-based line; [`TextStatsError::is_bad_input`]
//! tells the CLI which errors are the user's input (exit code 2).

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::agreement::{self, Agreement, AgreementError, Coefficient, Ratings, Weights};
use super::bleu::{Bleu, BleuOptions, BleuScore};
use super::chrf::{Chrf, ChrfOptions};
use super::corpus::segment_refs;

/// Why a text-statistics command could not produce its report.
#[derive(Debug, thiserror::Error)]
pub enum TextStatsError {
    /// The file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than what is read into memory.
    #[error("{} is {bytes} bytes, over the {limit}-byte limit of what `bleu` and `agreement` read into memory", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
        /// [`MAX_TEXT_BYTES`].
        limit: u64,
    },
    /// A line is not valid UTF-8.
    #[error("{}:{line}: invalid UTF-8", path.display())]
    InvalidUtf8 {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
    },
    /// The file has no segments (or, for a CSV, no subjects).
    #[error("{}: the file is empty", path.display())]
    EmptyFile {
        /// The file.
        path: PathBuf,
    },
    /// No reference file was given.
    #[error("no reference file was given")]
    NoReferences,
    /// A reference file's line count differs from the hypotheses'.
    #[error("{}: has {ref_lines} lines but the hypotheses in {} have {hyp_lines}", reference.display(), hyp.display())]
    LineCountMismatch {
        /// The hypothesis file.
        hyp: PathBuf,
        /// Its line count.
        hyp_lines: usize,
        /// The reference file.
        reference: PathBuf,
        /// Its line count.
        ref_lines: usize,
    },
    /// The CSV is not well formed.
    #[error("{}:{line}: malformed CSV", path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u64,
        /// The parser's complaint.
        #[source]
        source: csv::Error,
    },
    /// A CSV row has the wrong number of fields.
    #[error("{}:{line}: expected {expected} fields (subject id + one per rater), found {found}", path.display())]
    Ragged {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u64,
        /// Fields in the header.
        expected: usize,
        /// Fields in this row.
        found: usize,
    },
    /// The CSV has no rater column.
    #[error("{}:1: the header needs a subject column and at least one rater column", path.display())]
    NoRaters {
        /// The file.
        path: PathBuf,
    },
    /// A rating outside the category list.
    #[error("{}:{line}: rating `{value}` of rater `{rater}` is not one of the categories [{categories}]", path.display())]
    UnknownCategory {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u64,
        /// The rater's column name.
        rater: String,
        /// The cell.
        value: String,
        /// The scale.
        categories: String,
    },
    /// The ratings do not allow the coefficients to be computed.
    #[error("{}: cannot compute agreement", path.display())]
    Agreement {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: AgreementError,
    },
}

impl crate::error::IsInputError for TextStatsError {
    fn is_input_error(&self) -> bool {
        self.is_bad_input()
    }
}
crate::error::input_error!(TextStatsError);

impl TextStatsError {
    /// Whether the error is in the user's input (exit code 2) rather than an
    /// I/O failure.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, Self::Read { .. })
    }
}

/// Reads a segment file: one segment per line.
pub fn read_segments(path: &Path) -> Result<Vec<String>, TextStatsError> {
    let text = read_utf8(path)?;
    let mut lines: Vec<String> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned())
        .collect();
    if text.ends_with('\n') {
        lines.pop();
    }
    if text.is_empty() {
        return Err(TextStatsError::EmptyFile {
            path: path.to_owned(),
        });
    }
    Ok(lines)
}

/// The most bytes of a segment or ratings file read into memory (512 MiB): a corpus or a
/// ratings table of the benchmark is a few megabytes.
pub const MAX_TEXT_BYTES: u64 = 512 << 20;

/// Reads a whole file as UTF-8 (at most [`MAX_TEXT_BYTES`]), naming the first bad line.
fn read_utf8(path: &Path) -> Result<String, TextStatsError> {
    let read_err = |source| TextStatsError::Read {
        path: path.to_owned(),
        source,
    };
    let bytes = fs::metadata(path).map_err(read_err)?.len();
    if bytes > MAX_TEXT_BYTES {
        return Err(TextStatsError::TooLarge {
            path: path.to_owned(),
            bytes,
            limit: MAX_TEXT_BYTES,
        });
    }
    let bytes = fs::read(path).map_err(read_err)?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        TextStatsError::InvalidUtf8 {
            path: path.to_owned(),
            line,
        }
    })
}

/// A score with its sacreBLEU signature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Signed<T> {
    /// The score.
    #[serde(flatten)]
    pub score: T,
    /// sacreBLEU's reproducibility signature.
    pub signature: String,
}

/// chrF in reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChrfSummary {
    /// chrF on 0–100.
    pub score: f64,
}

/// One segment's scores in sentence mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentenceScores {
    /// Sentence BLEU.
    #[serde(flatten)]
    pub bleu: BleuScore,
    /// Sentence chrF, when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chrf: Option<f64>,
}

/// The result of [`bleu_files`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum BleuReport {
    /// Corpus scores.
    Corpus {
        /// Corpus BLEU.
        bleu: Signed<BleuScore>,
        /// Corpus chrF, when asked.
        #[serde(skip_serializing_if = "Option::is_none")]
        chrf: Option<Signed<ChrfSummary>>,
    },
    /// Per-segment scores in input order.
    Sentences {
        /// One entry per line.
        sentences: Vec<SentenceScores>,
        /// The BLEU signature.
        signature: String,
    },
}

/// BLEU (and optionally chrF) of a hypothesis file against reference files.
pub fn bleu_files(
    hyp: &Path,
    refs: &[PathBuf],
    opts: &BleuOptions,
    sentence: bool,
    chrf: bool,
) -> Result<BleuReport, TextStatsError> {
    let hyps = read_segments(hyp)?;
    let streams = read_references(hyp, hyps.len(), refs)?;
    let bleu = Bleu::new(opts.clone());
    let chrf_opts = ChrfOptions::default();
    let scorer = chrf.then(|| Chrf::new(chrf_opts.clone()));
    let nrefs = streams.len();
    if sentence {
        let score = |(i, h): (usize, &String)| {
            let seg_refs = segment_refs(&streams, i);
            let chrf = scorer.as_ref().map(|c| c.sentence_score(h, &seg_refs).score);
            SentenceScores {
                bleu: bleu.sentence_score(h, &seg_refs),
                chrf,
            }
        };
        let sentences = hyps.iter().enumerate().map(score).collect();
        return Ok(BleuReport::Sentences {
            sentences,
            signature: opts.signature(nrefs),
        });
    }
    let corpus = bleu.corpus_score(&hyps, &streams).expect("streams checked");
    let chrf = scorer.map(|c| Signed {
        score: ChrfSummary {
            score: c.corpus_score(&hyps, &streams).expect("streams checked").score,
        },
        signature: chrf_opts.signature(nrefs),
    });
    Ok(BleuReport::Corpus {
        bleu: Signed {
            score: corpus,
            signature: opts.signature(nrefs),
        },
        chrf,
    })
}

fn read_references(
    hyp: &Path,
    hyp_lines: usize,
    refs: &[PathBuf],
) -> Result<Vec<Vec<String>>, TextStatsError> {
    if refs.is_empty() {
        return Err(TextStatsError::NoReferences);
    }
    let read = |reference: &PathBuf| {
        let lines = read_segments(reference)?;
        if lines.len() != hyp_lines {
            return Err(TextStatsError::LineCountMismatch {
                hyp: hyp.to_owned(),
                hyp_lines,
                reference: reference.clone(),
                ref_lines: lines.len(),
            });
        }
        Ok(lines)
    };
    refs.iter().map(read).collect()
}

impl fmt::Display for BleuReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Corpus { bleu, chrf } => {
                writeln!(f, "{}\n  {}", bleu.score, bleu.signature)?;
                if let Some(c) = chrf {
                    writeln!(f, "chrF2 = {:.2}\n  {}", c.score.score, c.signature)?;
                }
                Ok(())
            }
            Self::Sentences { sentences, signature } => {
                for (i, s) in sentences.iter().enumerate() {
                    let chrf = s.chrf.map(|c| format!("\tchrF2 = {c:.2}")).unwrap_or_default();
                    writeln!(f, "{}\tBLEU = {:.2}{chrf}", i + 1, s.bleu.score)?;
                }
                writeln!(f, "{signature}")
            }
        }
    }
}

/// The result of [`agreement_file`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgreementReport {
    /// Subjects with at least one rating.
    pub subjects: usize,
    /// Raters (CSV columns after the subject id).
    pub raters: usize,
    /// The rating scale used.
    pub categories: Vec<String>,
    /// The weighting.
    pub weights: Weights,
    /// The coefficients.
    #[serde(flatten)]
    pub agreement: Agreement,
}

/// Agreement coefficients for a ratings CSV (see the module docs).
pub fn agreement_file(
    ratings_csv: &Path,
    categories: Option<&[String]>,
    weights: Weights,
) -> Result<AgreementReport, TextStatsError> {
    let table = read_ratings_csv(ratings_csv)?;
    let ratings = Ratings::parse(&table.rows, categories).map_err(|e| TextStatsError::UnknownCategory {
        path: ratings_csv.to_owned(),
        line: table.lines[e.row],
        rater: table.raters[e.rater].clone(),
        value: e.value,
        categories: e.categories,
    })?;
    let agreement = agreement::agreement(&ratings, weights).map_err(|source| TextStatsError::Agreement {
        path: ratings_csv.to_owned(),
        source,
    })?;
    Ok(AgreementReport {
        subjects: ratings.subjects(),
        raters: ratings.raters(),
        categories: ratings.categories().labels(),
        weights,
        agreement,
    })
}

/// The rater cells of a ratings CSV with each row's 1-based line.
struct RatingsTable {
    raters: Vec<String>,
    rows: Vec<Vec<String>>,
    lines: Vec<u64>,
}

fn read_ratings_csv(path: &Path) -> Result<RatingsTable, TextStatsError> {
    let text = read_utf8(path)?;
    let empty = || TextStatsError::EmptyFile {
        path: path.to_owned(),
    };
    let csv_error = |source: csv::Error| {
        let line = source.position().map_or(0, csv::Position::line);
        TextStatsError::Csv {
            path: path.to_owned(),
            line,
            source,
        }
    };
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = reader.headers().map_err(csv_error)?.clone();
    if header.is_empty() {
        return Err(empty());
    }
    if header.len() < 2 {
        return Err(TextStatsError::NoRaters {
            path: path.to_owned(),
        });
    }
    let mut table = RatingsTable {
        raters: header.iter().skip(1).map(str::to_owned).collect(),
        rows: vec![],
        lines: vec![],
    };
    for record in reader.records() {
        let record = record.map_err(csv_error)?;
        let line = record.position().map_or(0, csv::Position::line);
        if record.len() != header.len() {
            let (expected, found) = (header.len(), record.len());
            return Err(TextStatsError::Ragged {
                path: path.to_owned(),
                line,
                expected,
                found,
            });
        }
        table
            .rows
            .push(record.iter().skip(1).map(str::to_owned).collect());
        table.lines.push(line);
    }
    if table.rows.is_empty() {
        return Err(empty());
    }
    Ok(table)
}

impl fmt::Display for AgreementReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (n, r, w) = (self.subjects, self.raters, self.weights);
        writeln!(
            f,
            "{n} subjects, {r} raters, weights {w}, categories [{}]",
            self.categories.join(", ")
        )?;
        let a = &self.agreement;
        let line = |f: &mut fmt::Formatter<'_>, name: &str, c: Option<&Coefficient>| match c {
            Some(c) => writeln!(f, "{name:<22}{c}"),
            None => writeln!(f, "{name:<22}undefined (chance agreement is 1)"),
        };
        line(f, &format!("Gwet's {}", a.ac1.name), Some(&a.ac1))?;
        line(f, "Fleiss' kappa", a.fleiss.as_ref())?;
        line(f, "Krippendorff's alpha", a.krippendorff.as_ref())?;
        line(f, "Brennan-Prediger", Some(&a.brennan_prediger))?;
        if let Some(c) = &a.cohen {
            line(f, "Cohen's kappa", Some(c))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
