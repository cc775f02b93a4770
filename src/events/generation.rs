//! The `generate` log: one generated solution per (competition, language, model, format,
//! seed).
//!
//! Written by `stages::generate`; read by execute (the code to run), grade (which runs are
//! baselines), the replay provider (another store's responses) and the views.

use serde::{Deserialize, Serialize};

use crate::events::Format;
use crate::events::Provider;
use crate::log::EventBody;
use crate::store::Hash;

/// One generated solution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Generation {
    pub competition: String,
    pub language: String,
    pub model: String,
    pub provider: Provider,
    pub agent: Agent,
    pub format: Format,
    /// The sample index (0-based): a cell of the paper's tables averages its seeds.
    pub seed: u32,
    /// The code's object hash.
    pub code_blake3: Hash,
    pub code_bytes: u64,
    /// The rendered prompt's object hash (JSON `{"system", "user"}`; none for `reference`).
    pub prompt_blake3: Option<Hash>,
    /// The request's cache key (none for `reference`).
    pub request_blake3: Option<Hash>,
    /// The recorded response's object hash (JSON: text, usage, raw body, attempts).
    pub response_blake3: Option<Hash>,
    /// HTTP attempts made for this response (0: none, e.g. `reference` or `replay`). For
    /// the aide agent, this and the tokens and cost are totals over all its steps, and the
    /// prompt, request and response are the chosen attempt's.
    pub attempts: u32,
    /// How the code was found in the response (JSON of `extract::How`).
    pub extraction: Option<String>,
    pub finish_reason: Option<String>,
    /// The model id is a floating alias (no dated snapshot): results may drift.
    pub floating_alias: bool,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// Whether the pair's translation passed its gate (`false` only when forced).
    pub translation_passed: bool,
}

impl Generation {
    /// The sample, as errors and progress name it: `competition/language/format/seed`.
    pub fn label(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.competition, self.language, self.format, self.seed
        )
    }
}

impl EventBody for Generation {
    const STAGE: &'static str = "generate";
    const SCHEMA_VERSION: u32 = 2;
}

/// Who turned the prompt into the submission (a column of the `generate` log).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    /// One answer per unit.
    OneShot,
    /// AIDE's tree search (its attempts are in the `journal` log).
    Aide,
    /// The ReAct agent: tool calls until it submits (its steps are in the `trajectory` log).
    React,
    /// The reference provider: the competition's own solution.
    Reference,
    /// A template provider: a rendering (the AutoGluon baseline).
    Template,
}
