//! Stage 2, `generate`: code for each (competition, language, model, format).
//!
//! This build has one provider, `reference`: the competition's reference solution
//! (`data/<id>/solution/{modular,mono}.py`), which is the baseline and the offline demo; it
//! reads no prompt, so its events record no prompt and no tokens. The LLM providers of
//! `manifests/models.toml` (`openai`, `anthropic`, `replay`) are refused by name until they
//! land. Only pairs whose translation passed translate-validate are planned, unless forced.
//!
//! The code is stored as an object (`store/objects/`), and the event names it by blake3,
//! so execute runs identical code once however many languages produced it. Unit key: the
//! competition, language, model, format and the code's hash.

use serde::{Deserialize, Serialize};

use super::translate_validate::TranslateValidate;
use super::{Planned, Stage, StageError};
use crate::log::{EventBody, unit_key};
use crate::manifest::models::{Model, Provider};
use crate::sandbox::Format;
use crate::store::Store;

/// One generated solution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Generation {
    pub competition: String,
    pub language: String,
    pub model: String,
    pub provider: String,
    /// `modular` or `mono`.
    pub format: String,
    /// The code's object hash.
    pub code_blake3: String,
    pub code_bytes: u64,
    /// The rendered prompt's object hash (none for `reference`).
    pub prompt_blake3: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// Whether the pair's translation passed its gate (`false` only when forced).
    pub translation_passed: bool,
}

impl EventBody for Generation {
    const STAGE: &'static str = "generate";
    const SCHEMA_VERSION: u32 = 1;
}

/// One unit: the code is read at planning time (reference provider).
#[derive(Clone, Debug)]
pub struct Unit {
    body: Generation,
    code: Vec<u8>,
}

/// The stage.
pub struct Generate {
    pub model: Model,
    pub formats: Vec<Format>,
    /// The translation checks that decide which pairs run; their benchmark root and
    /// selection (competitions, languages) are this stage's too.
    pub translations: TranslateValidate,
    /// Run pairs whose translation failed or was not checked.
    pub force: bool,
    pub store: Store,
}

impl Generate {
    /// Refuses models whose provider this build does not have.
    pub fn check_model(model: &Model) -> Result<(), StageError> {
        match model.provider {
            Provider::Reference => Ok(()),
            other => Err(StageError::Other(format!(
                "model `{}`: the `{}` provider is not in this build yet; only `reference` generates code",
                model.name,
                serde_json::to_value(other)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            ))),
        }
    }
}

impl Stage for Generate {
    type Body = Generation;
    type Unit = Unit;

    fn plan(&self, store: &Store) -> Result<Vec<Planned<Unit>>, StageError> {
        Self::check_model(&self.model)?;
        let verdicts = self.translations.verdicts(store)?;
        let bench = &self.translations.bench;
        let mut planned = Vec::new();
        for c in bench
            .select(&self.translations.competitions)
            .map_err(StageError::Other)?
        {
            for code in c.languages(&bench.languages) {
                if !self.translations.languages.is_empty()
                    && !self.translations.languages.iter().any(|l| l == code)
                {
                    continue;
                }
                let passed = code == "en"
                    || verdicts.get(&(c.id().to_string(), code.to_string())) == Some(&Some(true));
                if !passed && !self.force {
                    continue;
                }
                for &format in &self.formats {
                    let path = c.solution(format.harness_mode());
                    let bytes = std::fs::read(&path)
                        .map_err(|e| StageError::Other(format!("cannot read {}: {e}", path.display())))?;
                    let hash = blake3::hash(&bytes).to_hex().to_string();
                    let body = Generation {
                        competition: c.id().to_string(),
                        language: code.to_string(),
                        model: self.model.name.clone(),
                        provider: "reference".into(),
                        format: format.harness_mode().into(),
                        code_blake3: hash.clone(),
                        code_bytes: bytes.len() as u64,
                        prompt_blake3: None,
                        input_tokens: 0,
                        output_tokens: 0,
                        cost_usd: 0.0,
                        translation_passed: passed,
                    };
                    let params = (
                        &body.competition,
                        &body.language,
                        &body.model,
                        &body.format,
                        &hash,
                    );
                    planned.push(Planned {
                        key: unit_key(Generation::STAGE, Generation::SCHEMA_VERSION, &[], &params)?,
                        upstream: Vec::new(),
                        label: format!("{}/{}/{}", body.competition, body.language, body.format),
                        unit: Unit { body, code: bytes },
                    });
                }
            }
        }
        Ok(planned)
    }

    async fn run(&self, unit: Unit) -> Result<Generation, StageError> {
        self.store
            .objects()
            .put(&unit.code)
            .map_err(crate::log::LogError::from)?;
        Ok(unit.body)
    }
}
