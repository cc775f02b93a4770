//! The `rating` log: what a native speaker said of one field of a translation, on the
//! paper's scale of meaning preservation (`RATING_SCALE`, 1–5).
//!
//! Written by `competition::ratings`: imported from the CSV layout of
//! `manifests/annotations/`, or rated on the annotation page (`ml2b annotate serve`);
//! read by translate-validate, which computes AC1 over the latest rating of each annotator
//! of each field of the exact texts it validates (the English and the translation, by
//! blake3), and by `ml2b annotate export`. A rating is never edited: a later one of the
//! same annotator, field and texts supersedes it, and names it as its upstream.

use serde::{Deserialize, Serialize};

use crate::log::EventBody;
use crate::store::Hash;

/// One rating.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub competition: String,
    pub language: String,
    /// The field of the task text rated (`title`, `domain`, `metric`, `description`,
    /// `data_card`).
    pub field: String,
    /// Who rated, as they named themselves.
    pub annotator: String,
    /// A value of `RATING_SCALE`.
    pub score: String,
    /// The blake3 of the English text and of the translation rated (files of the benchmark
    /// root, not objects).
    pub english_blake3: Hash,
    pub text_blake3: Hash,
    /// Where the rating came from: `csv` (imported) or `page` (the annotation page).
    pub source: String,
}

impl EventBody for Rating {
    const STAGE: &'static str = "rating";
    const SCHEMA_VERSION: u32 = 1;
    const LOOKUP: &'static [&'static str] = &["competition", "language"];
}
