//! The `translate_validate` log: one check of a translated task text against its gates.
//!
//! Written by `stages::translate_validate`; read by generate (which pairs to leave out),
//! the views of `queries/` and `ml2b stage translate-validate`.
//!
//! Schema versions: 2 keeps 1's columns and changes the gate: it fails a translation that
//! lost what must stay verbatim (`manifest::verbatim`). [`TranslationCheckV1`] hashes a
//! body as version 1 did, so that `TranslateValidate::rederive` re-derives a version-1
//! event, without that check, as it was written.

use serde::{Deserialize, Serialize};

use crate::log::EventBody;
use crate::store::Hash;

/// The rating scale of the annotation files (`manifests/annotations/<code>.csv`).
pub const RATING_SCALE: [&str; 5] = ["1", "2", "3", "4", "5"];

/// One translation check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TranslationCheck {
    pub competition: String,
    pub language: String,
    pub tier: String,
    /// Who translated: machine, human or none (the manifest's `translation`).
    pub translation: String,
    pub english_blake3: Hash,
    pub text_blake3: Hash,
    pub back_blake3: Option<Hash>,
    /// Back-translation corpus BLEU, 0–1.
    pub bleu: Option<f64>,
    pub bleu_signature: String,
    /// Back-translation corpus chrF, 0–100.
    pub chrf: Option<f64>,
    pub chrf_signature: String,
    pub ratings_blake3: Option<Hash>,
    pub ac1: Option<f64>,
    pub ac1_se: Option<f64>,
    pub ac1_ci_low: Option<f64>,
    pub ac1_ci_high: Option<f64>,
    pub raters: Option<u32>,
    pub subjects: Option<u32>,
    pub min_bleu: f64,
    pub min_ac1: f64,
    pub passed: bool,
    /// Why it failed, or which check was not applied.
    pub reasons: Vec<String>,
}

impl EventBody for TranslationCheck {
    const STAGE: &'static str = "translate_validate";
    /// 2: the gate checks what must stay verbatim (`manifest::verbatim`); same columns.
    const SCHEMA_VERSION: u32 = 2;
    const LOOKUP: &'static [&'static str] = &["competition", "language"];
}

/// A check of schema version 1: the same body as version 2 (without the verbatim check),
/// hashed with its own version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TranslationCheckV1(pub TranslationCheck);

impl EventBody for TranslationCheckV1 {
    const STAGE: &'static str = "translate_validate";
    const SCHEMA_VERSION: u32 = 1;
    const LOOKUP: &'static [&'static str] = &["competition", "language"];
}
