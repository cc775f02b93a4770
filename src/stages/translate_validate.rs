//! Stage 1, `translate_validate`: is each task text's translation faithful enough to use?
//!
//! One unit per (competition, non-English language). Its evidence:
//! * **back-translation BLEU and chrF**: `data/<id>/back/<code>.toml` against the English
//!   original `tasks/en.toml`, sacreBLEU-exact (13a tokenizer, exp smoothing; chrF with
//!   sacreBLEU's defaults). The five fields (title, domain, metric, description, data card)
//!   are the segments of one corpus score, so a field cannot silently shift onto another;
//!   BLEU is recorded on the 0–1 scale of the paper's gate, chrF on sacreBLEU's 0–100;
//! * **human agreement**: Gwet's AC1 over native speakers' ratings (1–5, meaning
//!   preservation): those of the `rating` log of this pair's exact texts (the latest of each
//!   annotator, the five fields the subjects; `competition::ratings`) where at least two
//!   annotators rated it, else `manifests/annotations/<code>.csv` (subject id, then one
//!   column per rater) where such a file exists. ml2b never invents ratings: without any the
//!   AC1 gate is not applied and the event says so;
//! * **what must stay verbatim** (schema version 2 on): the translation keeps every code
//!   span, file name, identifier, number and metric name of the English
//!   (`manifest::verbatim`); each one lost is named in the event's reasons.
//!
//! Gate (the manifest's `[gates]`): BLEU ≥ `min_bleu`, nothing lost that must stay verbatim,
//! and, where ratings exist, AC1 ≥ `min_ac1`; a missing back-translation fails. The unit key
//! covers the blake3 of every input file, the gates and the metric signatures, so an edited
//! text is checked anew and an unchanged one never twice. [`TranslateValidate::verdicts`]
//! tells later stages which pairs to leave out.
//!
//! Schema versions: 1 had no verbatim check. A version-1 check is re-derived as it was
//! written ([`TranslateValidate::rederive`]): its key with version 1, and without the
//! verbatim check; its body is today's (the version changed the gate, not the columns).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::{Planned, Stage, StageError};
use crate::competition::Benchmark;
use crate::competition::ratings::{self, Rated};
use crate::events::{RATING_SCALE, TranslationCheck, TranslationCheckV1};
use crate::log::{EventBody, StageLog, unit_key};
use crate::manifest::TaskText;
use crate::manifest::verbatim;
use crate::metrics::agreement::{Ratings as AgreementRatings, Weights, agreement};
use crate::metrics::bleu::{BleuOptions, corpus_bleu};
use crate::metrics::chrf::{ChrfOptions, corpus_chrf};
use crate::metrics::text_files::{AgreementReport, agreement_file};
use crate::store::{Hash, Store};

/// Everything one unit needs, read at planning time.
#[derive(Clone, Debug)]
pub struct Unit {
    competition: String,
    language: String,
    tier: String,
    translation: String,
    english: TaskText,
    english_blake3: Hash,
    /// The translation checked.
    text: TaskText,
    text_blake3: Hash,
    /// The manifest's metric name (`rmsle`): its words must stay verbatim.
    metric: String,
    back: Option<(TaskText, Hash)>,
    ratings: Option<Ratings>,
    min_bleu: f64,
    min_ac1: f64,
}

/// Where a check's ratings come from.
#[derive(Clone, Debug)]
enum Ratings {
    /// The `rating` log's ratings of the pair's texts, and their blake3.
    Logged(Rated, Hash),
    /// `manifests/annotations/<code>.csv`, and its blake3.
    File(PathBuf, Hash),
}

impl Ratings {
    fn blake3(&self) -> Hash {
        match self {
            Self::Logged(_, h) | Self::File(_, h) => *h,
        }
    }
}

/// The stage over a benchmark root, optionally restricted.
pub struct TranslateValidate {
    pub bench: Arc<Benchmark>,
    /// Only these competitions (empty: all).
    pub competitions: Vec<String>,
    /// Only these language codes (empty: all).
    pub languages: Vec<String>,
}

fn bleu_options() -> BleuOptions {
    BleuOptions::default()
}

fn chrf_options() -> ChrfOptions {
    ChrfOptions::default()
}

impl TranslateValidate {
    fn units(&self, store: &Store) -> Result<Vec<Unit>, StageError> {
        let manifest_err = StageError::Manifest;
        let mut logged =
            ratings::current(store, &self.bench).map_err(|e| StageError::failed("reading the ratings", e))?;
        let selected = self
            .bench
            .select(&self.competitions)
            .map_err(StageError::Benchmark)?;
        let mut units = Vec::new();
        for c in selected {
            let english = c.task("en").map_err(manifest_err)?;
            let english_blake3 = super::file_blake3(&c.task_path("en"))?;
            for code in c.languages(&self.bench.languages) {
                if code == "en" || (!self.languages.is_empty() && !self.languages.iter().any(|l| l == code)) {
                    continue;
                }
                let lang = self.bench.languages.resolve(code).expect("checked on load");
                let back = match c.back_translation(code).map_err(manifest_err)? {
                    Some(text) => Some((text, super::file_blake3(&c.back_path(code))?)),
                    None => None,
                };
                let ratings_path = self
                    .bench
                    .root
                    .join("manifests/annotations")
                    .join(format!("{code}.csv"));
                let pair = (c.id().to_string(), code.to_string());
                let ratings = match logged.remove(&pair).filter(|r| r.annotators.len() >= 2) {
                    Some(rated) => {
                        let hash = rated.blake3()?;
                        Some(Ratings::Logged(rated, hash))
                    }
                    None if ratings_path.is_file() => Some(Ratings::File(
                        ratings_path.clone(),
                        super::file_blake3(&ratings_path)?,
                    )),
                    None => None,
                };
                units.push(Unit {
                    competition: c.id().to_string(),
                    language: code.to_string(),
                    tier: format!("{:?}", lang.tier).to_lowercase(),
                    translation: format!("{:?}", c.manifest.translation).to_lowercase(),
                    english: english.clone(),
                    english_blake3,
                    text: c.task(code).map_err(manifest_err)?,
                    text_blake3: super::file_blake3(&c.task_path(code))?,
                    metric: c.manifest.metric.name.clone(),
                    back,
                    ratings,
                    min_bleu: c.manifest.gates.min_bleu,
                    min_ac1: c.manifest.gates.min_ac1,
                });
            }
        }
        Ok(units)
    }
}

/// The schema version whose checks had no verbatim check.
const WITHOUT_VERBATIM: u32 = TranslationCheckV1::SCHEMA_VERSION;

/// The unit key of a check: every input's hash, the gates and the metric signatures.
pub fn key_of(unit: &Unit) -> Result<Hash, StageError> {
    key_with_version(unit, TranslationCheck::SCHEMA_VERSION)
}

/// The unit key of a check under schema `version`.
fn key_with_version(unit: &Unit, version: u32) -> Result<Hash, StageError> {
    let params = serde_json::json!({
        "competition": unit.competition,
        "language": unit.language,
        "english": unit.english_blake3,
        "text": unit.text_blake3,
        "back": unit.back.as_ref().map(|(_, h)| h),
        "ratings": unit.ratings.as_ref().map(Ratings::blake3),
        "min_bleu": unit.min_bleu,
        "min_ac1": unit.min_ac1,
        "bleu": bleu_options().signature(1),
        "chrf": chrf_options().signature(1),
    });
    Ok(unit_key(TranslationCheck::STAGE, version, &[], &params)?)
}

impl Stage for TranslateValidate {
    type Body = TranslationCheck;
    type Unit = Unit;

    fn plan(&self, store: &Store) -> Result<Vec<Planned<Unit>>, StageError> {
        self.units(store)?
            .into_iter()
            .map(|unit| {
                Ok(Planned {
                    key: key_of(&unit)?,
                    upstream: Vec::new(),
                    label: format!("{}/{}", unit.competition, unit.language),
                    unit,
                })
            })
            .collect()
    }

    async fn run(&self, unit: Unit) -> Result<TranslationCheck, StageError> {
        check(unit)
    }
}

/// Runs one check (pure: the same unit gives the same body).
pub fn check(unit: Unit) -> Result<TranslationCheck, StageError> {
    check_with_version(unit, TranslationCheck::SCHEMA_VERSION)
}

/// Runs one check as schema `version` checked (version 1: no verbatim check).
fn check_with_version(unit: Unit, version: u32) -> Result<TranslationCheck, StageError> {
    let label = format!("{}/{}", unit.competition, unit.language);
    let fail = |message: String| StageError::Unit {
        label: label.clone(),
        message,
    };
    let mut reasons = Vec::new();
    let (bleu, chrf) = match &unit.back {
        Some((back, _)) => {
            let hyps: Vec<&str> = back.fields().iter().map(|(_, v)| *v).collect();
            let refs: Vec<&str> = unit.english.fields().iter().map(|(_, v)| *v).collect();
            let bleu = corpus_bleu(&hyps, std::slice::from_ref(&refs), &bleu_options())
                .map_err(|e| fail(e.to_string()))?;
            let chrf = corpus_chrf(&hyps, &[refs], &chrf_options()).map_err(|e| fail(e.to_string()))?;
            (Some(bleu.score / 100.0), Some(chrf.score))
        }
        None => {
            reasons.push("no back-translation (back/<code>.toml) to score".to_string());
            (None, None)
        }
    };
    if let Some(b) = bleu
        && b < unit.min_bleu
    {
        reasons.push(format!("back-translation BLEU {b:.4} < {}", unit.min_bleu));
    }
    if version > WITHOUT_VERBATIM {
        let lost = verbatim::lost(&unit.english, &unit.text, &unit.metric);
        if !lost.is_empty() {
            let list: Vec<String> = lost.iter().map(ToString::to_string).collect();
            reasons.push(format!(
                "the translation lost {} of what must stay verbatim: {}",
                lost.len(),
                list.join(", ")
            ));
        }
    }
    let mut body = TranslationCheck {
        competition: unit.competition.clone(),
        language: unit.language.clone(),
        tier: unit.tier.clone(),
        translation: unit.translation.clone(),
        english_blake3: unit.english_blake3,
        text_blake3: unit.text_blake3,
        back_blake3: unit.back.as_ref().map(|(_, h)| *h),
        bleu,
        bleu_signature: bleu_options().signature(1),
        chrf,
        chrf_signature: chrf_options().signature(1),
        ratings_blake3: None,
        ac1: None,
        ac1_se: None,
        ac1_ci_low: None,
        ac1_ci_high: None,
        raters: None,
        subjects: None,
        min_bleu: unit.min_bleu,
        min_ac1: unit.min_ac1,
        passed: false,
        reasons: Vec::new(),
    };
    if let Some(ratings) = &unit.ratings {
        let report = agreement_of(ratings).map_err(fail)?;
        let ac1 = &report.agreement.ac1;
        body.ratings_blake3 = Some(ratings.blake3());
        body.ac1 = Some(ac1.coefficient);
        body.ac1_se = Some(ac1.se);
        body.ac1_ci_low = Some(ac1.ci[0]);
        body.ac1_ci_high = Some(ac1.ci[1]);
        body.raters = Some(report.raters as u32);
        body.subjects = Some(report.subjects as u32);
        if ac1.coefficient.is_nan() || ac1.coefficient < unit.min_ac1 {
            reasons.push(format!("AC1 {:.4} < {}", ac1.coefficient, unit.min_ac1));
        }
    }
    body.passed = reasons.is_empty();
    if unit.ratings.is_none() {
        // The text of schema version 1, which its events hash: kept as it was.
        reasons.push("no human ratings (manifests/annotations/<code>.csv): AC1 gate not applied".into());
    }
    body.reasons = reasons;
    Ok(body)
}

/// The agreement of a check's ratings on the paper's scale, identity weights.
fn agreement_of(ratings: &Ratings) -> Result<AgreementReport, String> {
    let categories: Vec<String> = RATING_SCALE.iter().map(|s| s.to_string()).collect();
    match ratings {
        Ratings::File(path, _) => {
            agreement_file(path, Some(&categories), Weights::Identity).map_err(|e| e.to_string())
        }
        Ratings::Logged(rated, _) => {
            let parsed =
                AgreementRatings::parse(&rated.rows, Some(&categories)).map_err(|e| e.to_string())?;
            let agreement = agreement(&parsed, Weights::Identity).map_err(|e| e.to_string())?;
            Ok(AgreementReport {
                subjects: parsed.subjects(),
                raters: parsed.raters(),
                categories: parsed.categories().labels(),
                weights: Weights::Identity,
                agreement,
            })
        }
    }
}

impl TranslateValidate {
    /// The verdict on the current texts of every pair this stage plans: `Some(passed)`, or
    /// `None` when those texts have not been checked yet. Later stages leave out every pair
    /// that is not `Some(true)` unless forced.
    pub fn verdicts(&self, store: &Store) -> Result<BTreeMap<(String, String), Option<bool>>, StageError> {
        let log = StageLog::new(store, TranslationCheck::STAGE)?;
        let state = log.state::<TranslationCheck>(0)?;
        self.plan(store)?
            .into_iter()
            .map(|p| {
                let verdict = state.get(&p.key).map(|e| e.body.passed);
                Ok(((p.unit.competition, p.unit.language), verdict))
            })
            .collect()
    }
}

impl TranslateValidate {
    /// Re-derives every committed check whose inputs are still the benchmark's, under the
    /// schema version it was written with: returns how many were re-derived and the ids
    /// (with the new id) that came out different.
    pub async fn rederive(&self, store: &Store) -> Result<(usize, Vec<(Hash, String)>), StageError> {
        let committed =
            StageLog::new(store, TranslationCheck::STAGE)?.read_versioned::<TranslationCheck>()?;
        let units = self.units(store)?;
        let mut by_key = std::collections::HashMap::new();
        for unit in &units {
            for version in [WITHOUT_VERBATIM, TranslationCheck::SCHEMA_VERSION] {
                by_key.insert(key_with_version(unit, version)?, (unit, version));
            }
        }
        let (mut found, mut differ) = (0, Vec::new());
        for (_, e) in committed {
            let Some(&(unit, version)) = by_key.get(&e.unit_key) else {
                continue;
            };
            found += 1;
            let label = format!("{}/{}", unit.competition, unit.language);
            let body = check_with_version(unit.clone(), version)?;
            let id = match version {
                WITHOUT_VERBATIM => {
                    crate::log::Event::compute_id(&e.unit_key, &[], &TranslationCheckV1(body))?
                }
                _ => crate::log::Event::compute_id(&e.unit_key, &[], &body)?,
            };
            if id != e.id {
                differ.push((e.id, format!("{label} re-derived as {id}")));
            }
        }
        Ok((found, differ))
    }
}
