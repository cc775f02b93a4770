//! Native speakers' ratings of translations: events of the `rating` log, imported from the
//! CSV layout of `manifests/annotations/` and exported back to it, and the ratings of the
//! exact texts a translate-validate check validates.
//!
//! Not a planned stage: each rating is committed as it arrives, unless the annotator's
//! latest rating of that field of those texts has the same score (so importing the same
//! file twice commits nothing the second time). Its unit key covers the competition, the
//! language, the field, the annotator, the blake3 of the English text and of the
//! translation, the score, where it came from and, as its upstream, the rating it replaces:
//! a changed score is a new event that supersedes the old one (the latest by `created_at`
//! of an annotator, field and texts counts), and a score changed back is new again.
//!
//! The annotation page (`ml2b annotate serve`, `viewer::annotate`) records ratings through
//! [`record`], for the texts the annotator was shown: if either changed since the page was
//! loaded, nothing is recorded.
//!
//! CSV layout (`ml2b annotate import|export`), one file per language:
//!
//! ```text
//! subject,ana,bo            the annotators, as they named themselves
//! toy/title,5,4             <competition>/<field>: a score of RATING_SCALE, or empty
//! toy/description,4,
//! ```
//! A rating names the texts as they are when it is imported: rated texts that change later
//! are other texts, whose ratings start empty.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{Benchmark, Competition};
use crate::events::{RATING_SCALE, Rating};
use crate::log::{Event, EventBody, LogError, Provenance, StageLog, unit_key};
use crate::manifest::TaskText;
use crate::store::{Hash, KeyHasher, Store};

/// Why ratings could not be imported or exported.
#[derive(Debug, thiserror::Error)]
pub enum RatingsError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}, line {line}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{}: {message}", path.display())]
    Texts { path: PathBuf, message: String },
    #[error(transparent)]
    Log(#[from] LogError),
}

impl crate::error::IsInputError for RatingsError {
    fn is_input_error(&self) -> bool {
        matches!(self, Self::Invalid { .. } | Self::Texts { .. })
    }
}
crate::error::input_error!(RatingsError);

/// What an import did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Imported {
    /// Ratings in the file (empty cells not counted).
    pub ratings: usize,
    /// Of them, new events (the rest were in the log).
    pub new: usize,
    pub subjects: usize,
    pub annotators: Vec<String>,
}

/// The blake3 of the English text and of the `language` text of `c`, as they are now.
pub fn texts(c: &Competition, language: &str) -> Result<(Hash, Hash), RatingsError> {
    let hash = |path: PathBuf| {
        crate::store::hash_file(&path).map_err(|source| RatingsError::Read {
            path: path.clone(),
            source,
        })
    };
    Ok((hash(c.task_path("en"))?, hash(c.task_path(language))?))
}

/// Imports the ratings of `path` (the CSV layout above) of `language`'s texts.
pub fn import_csv(
    store: &Store,
    bench: &Benchmark,
    language: &str,
    path: &Path,
) -> Result<Imported, RatingsError> {
    let invalid = |line: u64, message: String| RatingsError::Invalid {
        path: path.to_path_buf(),
        line,
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|source| RatingsError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = reader.headers().map_err(|e| invalid(1, e.to_string()))?.clone();
    let annotators: Vec<String> = header.iter().skip(1).map(|a| a.trim().to_string()).collect();
    if annotators.is_empty() || annotators.iter().any(String::is_empty) {
        return Err(invalid(
            1,
            "the header must be `subject` then one named column per annotator".into(),
        ));
    }
    let (mut imported, mut bodies) = (Imported::default(), Vec::new());
    for record in reader.records() {
        let record = record.map_err(|e| invalid(e.position().map_or(0, |p| p.line()), e.to_string()))?;
        let line = record.position().map_or(0, |p| p.line());
        let (c, field) = subject(bench, record.get(0).unwrap_or_default()).map_err(|m| invalid(line, m))?;
        if !c.task_path(language).is_file() {
            return Err(invalid(line, format!("`{}` has no text in `{language}`", c.id())));
        }
        let (english_blake3, text_blake3) = texts(c, language)?;
        imported.subjects += 1;
        for (annotator, score) in annotators.iter().zip(record.iter().skip(1)) {
            let score = score.trim();
            if score.is_empty() {
                continue;
            }
            if !RATING_SCALE.contains(&score) {
                return Err(invalid(
                    line,
                    format!(
                        "`{score}` ({annotator}) is not a rating of the scale {}",
                        RATING_SCALE.join(", ")
                    ),
                ));
            }
            let body = Rating {
                competition: c.id().to_string(),
                language: language.to_string(),
                field: field.to_string(),
                annotator: annotator.clone(),
                score: score.to_string(),
                english_blake3,
                text_blake3,
                source: "csv".into(),
            };
            imported.ratings += 1;
            bodies.push(body);
        }
    }
    imported.new = commit(store, bodies)?;
    imported.annotators = annotators;
    Ok(imported)
}

/// What one rating is of: competition, language, field, annotator and the two texts.
type Subject = (String, String, String, String, Hash, Hash);

fn subject_of(r: &Rating) -> Subject {
    (
        r.competition.clone(),
        r.language.clone(),
        r.field.clone(),
        r.annotator.clone(),
        r.english_blake3,
        r.text_blake3,
    )
}

/// Commits each of `ratings` that changes what its annotator said of its subject (the
/// last of a subject in `ratings` counts), and returns how many. A rating that replaces an
/// earlier one names it as its upstream, so its unit key differs from any before it: a
/// score changed and changed back is recorded both times, and the same ratings twice
/// commit nothing.
fn commit(store: &Store, ratings: Vec<Rating>) -> Result<usize, RatingsError> {
    let log = StageLog::new(store, Rating::STAGE)?;
    let mut view = log.view()?;
    let mut recorded = log.read_events::<Rating>(0)?;
    recorded.sort_by_key(|e| (e.provenance.created_at, e.id));
    let mut latest: BTreeMap<Subject, (String, Hash)> = BTreeMap::new();
    for e in recorded {
        latest.insert(subject_of(&e.body), (e.body.score, e.id));
    }
    let mut wanted: BTreeMap<Subject, Rating> = BTreeMap::new();
    for r in ratings {
        wanted.insert(subject_of(&r), r);
    }
    let mut events = Vec::new();
    for (subject, body) in wanted {
        let upstream = match latest.get(&subject) {
            Some((score, _)) if *score == body.score => continue,
            Some((_, id)) => vec![*id],
            None => Vec::new(),
        };
        let key = unit_key(Rating::STAGE, Rating::SCHEMA_VERSION, &upstream, &body)?;
        if view.contains(&key) {
            continue;
        }
        events.push(Event::new(key, upstream, body, Provenance::now(0))?);
    }
    let new = events.len();
    if new > 0 {
        log.commit(&mut view, events, None)?;
    }
    Ok(new)
}

/// The most characters an annotator's name may have.
pub const MAX_NAME: usize = 64;

/// Whether `name` can name an annotator: 1 to [`MAX_NAME`] characters, no control
/// character, no surrounding space.
pub fn valid_annotator(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_NAME
        && name.trim() == name
        && !name.chars().any(char::is_control)
}

/// Why ratings from the page were not recorded.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("`{0}` cannot name an annotator (1 to 64 characters, no control characters)")]
    Annotator(String),
    #[error("`{0}` is not a field of a task text")]
    Field(String),
    #[error("`{score}` ({field}) is not a rating of the scale 1–5")]
    Score { field: String, score: String },
    #[error("no field was rated")]
    Nothing,
    #[error("the texts changed since the page was loaded: reload it and rate what it shows")]
    Changed,
    #[error(transparent)]
    Ratings(#[from] RatingsError),
}

/// Records `annotator`'s `scores` (field, score) of `language`'s text of `c`, as rated on
/// the annotation page: `shown` are the blake3 of the English and of the translation the
/// page showed, which must still be the current texts. Returns how many ratings were new.
pub fn record(
    store: &Store,
    c: &Competition,
    language: &str,
    annotator: &str,
    shown: (Hash, Hash),
    scores: &[(String, String)],
) -> Result<usize, Refused> {
    if !valid_annotator(annotator) {
        return Err(Refused::Annotator(annotator.to_string()));
    }
    if scores.is_empty() {
        return Err(Refused::Nothing);
    }
    for (field, score) in scores {
        if !TaskText::FIELDS.contains(&field.as_str()) {
            return Err(Refused::Field(field.clone()));
        }
        if !RATING_SCALE.contains(&score.as_str()) {
            return Err(Refused::Score {
                field: field.clone(),
                score: score.clone(),
            });
        }
    }
    if texts(c, language)? != shown {
        return Err(Refused::Changed);
    }
    let ratings = scores
        .iter()
        .map(|(field, score)| Rating {
            competition: c.id().to_string(),
            language: language.to_string(),
            field: field.clone(),
            annotator: annotator.to_string(),
            score: score.clone(),
            english_blake3: shown.0,
            text_blake3: shown.1,
            source: "page".into(),
        })
        .collect();
    Ok(commit(store, ratings)?)
}

/// The competition and field a subject (`<competition>/<field>`) names.
fn subject<'a>(bench: &'a Benchmark, subject: &str) -> Result<(&'a Competition, &'static str), String> {
    let Some((id, field)) = subject.trim().rsplit_once('/') else {
        return Err(format!("subject `{subject}` is not `<competition>/<field>`"));
    };
    let c = bench.select(&[id.to_string()])?[0];
    let field = TaskText::FIELDS.iter().find(|f| **f == field).ok_or_else(|| {
        format!(
            "`{field}` is not a field of a task text ({})",
            TaskText::FIELDS.join(", ")
        )
    })?;
    Ok((c, field))
}

/// The ratings of one pair's current texts: subjects (its fields, in file order) ×
/// annotators (sorted), each the annotator's latest score or "".
#[derive(Clone, Debug, PartialEq)]
pub struct Rated {
    pub annotators: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Rated {
    /// The blake3 of what was rated: annotators and scores.
    pub fn blake3(&self) -> Result<Hash, LogError> {
        let mut k = KeyHasher::new("ml2b ratings v1");
        k.json(&(&self.annotators, &self.rows)).map_err(LogError::Json)?;
        Ok(k.finish())
    }
}

/// The ratings of each (competition, language) whose texts are still the ones rated: the
/// latest of each annotator and field.
pub fn current(store: &Store, bench: &Benchmark) -> Result<BTreeMap<(String, String), Rated>, RatingsError> {
    let mut events = StageLog::new(store, Rating::STAGE)?.read_events::<Rating>(0)?;
    events.sort_by_key(|e| (e.provenance.created_at, e.id));
    let mut latest: BTreeMap<(String, String), BTreeMap<(String, String), String>> = BTreeMap::new();
    let mut now: BTreeMap<(String, String), Option<(Hash, Hash)>> = BTreeMap::new();
    for e in events {
        let r = e.body;
        let pair = (r.competition.clone(), r.language.clone());
        let texts = match now.get(&pair) {
            Some(t) => *t,
            None => {
                let t = bench
                    .select(std::slice::from_ref(&r.competition))
                    .ok()
                    .map(|c| c[0])
                    .filter(|c| c.task_path(&r.language).is_file())
                    .map(|c| texts(c, &r.language))
                    .transpose()?;
                now.insert(pair.clone(), t);
                t
            }
        };
        if texts == Some((r.english_blake3, r.text_blake3)) {
            latest
                .entry(pair)
                .or_default()
                .insert((r.field, r.annotator), r.score);
        }
    }
    Ok(latest
        .into_iter()
        .map(|(pair, scores)| {
            let annotators: BTreeSet<String> = scores.keys().map(|(_, a)| a.clone()).collect();
            let annotators: Vec<String> = annotators.into_iter().collect();
            let rows = TaskText::FIELDS
                .iter()
                .map(|field| {
                    let cell = |a: &String| {
                        scores
                            .get(&(field.to_string(), a.clone()))
                            .cloned()
                            .unwrap_or_default()
                    };
                    annotators.iter().map(cell).collect()
                })
                .collect();
            (pair, Rated { annotators, rows })
        })
        .collect())
}

/// The CSV of `language`'s current ratings, in the layout [`import_csv`] reads.
pub fn export_csv(store: &Store, bench: &Benchmark, language: &str) -> Result<String, RatingsError> {
    let rated: Vec<((String, String), Rated)> = current(store, bench)?
        .into_iter()
        .filter(|((_, l), _)| l == language)
        .collect();
    let annotators: BTreeSet<&String> = rated.iter().flat_map(|(_, r)| &r.annotators).collect();
    let mut out = csv::Writer::from_writer(Vec::new());
    let csv_error = |e: csv::Error| RatingsError::Texts {
        path: PathBuf::from("-"),
        message: e.to_string(),
    };
    let header: Vec<&str> = std::iter::once("subject")
        .chain(annotators.iter().map(|a| a.as_str()))
        .collect();
    out.write_record(&header).map_err(csv_error)?;
    for ((competition, _), r) in &rated {
        for (field, row) in TaskText::FIELDS.iter().zip(&r.rows) {
            if row.iter().all(String::is_empty) {
                continue;
            }
            let mut record = vec![format!("{competition}/{field}")];
            for a in &annotators {
                let i = r.annotators.iter().position(|x| x == *a);
                record.push(i.map(|i| row[i].clone()).unwrap_or_default());
            }
            out.write_record(&record).map_err(csv_error)?;
        }
    }
    let bytes = out.into_inner().map_err(|e| RatingsError::Texts {
        path: PathBuf::from("-"),
        message: e.to_string(),
    })?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 cells"))
}
