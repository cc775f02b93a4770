//! The `generate` log: one generated solution per (competition, language, model, format,
//! seed).
//!
//! Written by `stages::generate`; read by execute (the code to run), grade (which runs are
//! baselines), the replay provider (another store's responses) and the views.
//!
//! Schema versions: 2 ended at `translation_passed`; 3 added `text_blake3` and
//! `text_translated_by` (nullable, at the end): which task text the prompt was rendered
//! from, and the model that produced it. A version-2 event reads them as none (not
//! recorded). 4 added `agent_name` (nullable, at the end): an external agent's name. The
//! unit key is hashed under [`UNIT_KEY_VERSION`], not the schema version: what a unit is
//! did not change, so a store written before plans the same units and runs none of them
//! again.

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
    /// Since version 3. The blake3 of the task text file (`data/<id>/tasks/<code>.toml`)
    /// the prompt was rendered from; none for providers that read no text (`reference`,
    /// `template`) and for events of version 2.
    pub text_blake3: Option<Hash>,
    /// Since version 3. The model (its name in `manifests/models.toml`) whose `translate`
    /// event produced that text, byte for byte; none for English and for a text imported
    /// or written by hand.
    pub text_translated_by: Option<String>,
    /// Since version 4. The external agent's name in `manifests/agents.toml` (`--agent
    /// external:NAME`); none for every other agent.
    pub agent_name: Option<String>,
}

/// The version a generate unit key is hashed under: version 2's, for every schema since.
pub const UNIT_KEY_VERSION: u32 = 2;

impl Generation {
    /// The sample, as errors and progress name it: `competition/language/format/seed`.
    pub fn label(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.competition, self.language, self.format, self.seed
        )
    }

    /// Whether the code is an external agent's `submission.csv` (predictions, graded as they
    /// are, never run): its `extraction` says `"submission": "csv"`.
    pub fn is_csv_submission(&self) -> bool {
        self.agent == Agent::External
            && self
                .extraction
                .as_deref()
                .and_then(|e| serde_json::from_str::<serde_json::Value>(e).ok())
                .is_some_and(|e| e["submission"] == "csv")
    }

    /// Which task text the prompt was rendered from, for `show` and the viewer: who made
    /// it and its blake3 (none when not recorded, or no text was read).
    pub fn text_origin(&self) -> Option<String> {
        let text = self.text_blake3?;
        let origin = match (&self.text_translated_by, self.language.as_str()) {
            (Some(model), _) => format!("translated by {model} (ml2b translate)"),
            (None, "en") => "the English original".to_string(),
            (None, _) => "imported (not made by ml2b translate)".to_string(),
        };
        Some(format!("{origin}, blake3 {}", &text.to_hex()[..16]))
    }
}

impl EventBody for Generation {
    const STAGE: &'static str = "generate";
    const SCHEMA_VERSION: u32 = 4;

    fn output_tokens(&self) -> u64 {
        self.output_tokens
    }
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
    /// An agent outside ml2b (`--agent external:NAME`, its name in the event's
    /// `agent_name`): its requests are in the `gateway` log, its run in `external`.
    External,
}
