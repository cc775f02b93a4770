//! The `translate` log: one task text translated by a model, one event per leg: the English
//! text into the pair's language (`forward`), and that translation back into English by
//! another model (`back`, whose upstream is the forward event).
//!
//! Written by `stages::translate`; read by `ml2b translate` (which texts to write into
//! `data/<id>/tasks/` and `back/`), `ml2b show` and the viewer. The texts are objects: the
//! source as the model was given it (the JSON of its five fields, in the rendered prompt),
//! and the produced text as the TOML file `ml2b translate` writes, byte for byte, so a task
//! file's blake3 names the event that produced it.

use serde::{Deserialize, Serialize};

use crate::events::Provider;
use crate::log::EventBody;
use crate::store::Hash;

/// One leg of a translation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TranslatedText {
    pub competition: String,
    /// The pair's language (never `en`): the target of the forward leg, the source of the
    /// back leg.
    pub language: String,
    /// The language translated from and into (`en` → `fr` forward, `fr` → `en` back).
    pub from: String,
    pub to: String,
    /// The model's name in `manifests/models.toml`, its provider and id.
    pub model: String,
    pub provider: Provider,
    pub model_id: String,
    /// The other leg's model (back: the forward model; forward: none): the two must differ
    /// unless the run allowed the same model both ways.
    pub source_model: Option<String>,
    /// The blake3 of the file translated (`tasks/en.toml` forward, `tasks/<code>.toml`
    /// back): a file of the benchmark root, not an object.
    pub source_blake3: Hash,
    /// The blake3 of the instructions (`assets/translate/instructions.j2`, compiled in):
    /// the prompt's version.
    pub instructions_blake3: Hash,
    /// The rendered prompt's object (JSON `{"system", "user"}`).
    pub prompt_blake3: Hash,
    /// The request's cache key.
    pub request_blake3: Hash,
    /// The recorded response's object (none when the model gave none).
    pub response_blake3: Option<Hash>,
    /// The produced text's object (TOML, the file `ml2b translate` writes); none when the
    /// answer held no text of five fields.
    pub output_blake3: Option<Hash>,
    /// Why there is no text, or what the text lacks.
    pub reason: Option<String>,
    /// What must stay verbatim and the text lost (`manifest::verbatim`; forward only).
    pub lost: Vec<String>,
    pub attempts: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// The model id is a floating alias (no dated snapshot).
    pub floating_alias: bool,
}

impl EventBody for TranslatedText {
    const STAGE: &'static str = "translate";
    const SCHEMA_VERSION: u32 = 1;
    const LOOKUP: &'static [&'static str] = &["competition", "from", "to"];

    fn output_tokens(&self) -> u64 {
        self.output_tokens
    }
}
