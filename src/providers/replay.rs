//! The `replay` provider: the responses recorded in another store's generate events.
//!
//! A request is answered by the response the other store recorded for the same sample
//! (competition, language, format, seed) of the model the manifest names (`model`), and
//! only when that response answered the very same prompt (the prompt's blake3). The
//! response object is read from the other store, verified like every object read.

use std::collections::HashMap;

use crate::events::Format;
use crate::events::Generation;
use crate::log::{EventBody, LogError, StageLog};
use crate::manifest::models::Model;
use crate::providers::{ChatModel, ChatRequest, Completion, RespondError, Sample};
use crate::store::{Hash, Store};

/// The generate events of another store, for one of its models.
#[derive(Debug)]
pub struct Replay {
    source: Store,
    by_sample: HashMap<(String, String, Format, u32), Generation>,
}

impl Replay {
    /// Reads the generate log of `model.store` for the model named `model.model`.
    pub fn open(model: &Model) -> Result<Self, LogError> {
        let source = Store::open(&model.store);
        let events = StageLog::new(&source, Generation::STAGE)?.read_events::<Generation>(0)?;
        let by_sample = events
            .into_iter()
            .map(|e| e.body)
            .filter(|g| g.model == model.model && g.response_blake3.is_some())
            .map(|g| ((g.competition.clone(), g.language.clone(), g.format, g.seed), g))
            .collect();
        Ok(Self { source, by_sample })
    }

    fn recorded(&self, sample: &Sample<'_>) -> Result<Completion, RespondError> {
        let missing = RespondError::Unanswered;
        let format = sample
            .format
            .ok_or_else(|| missing("replay answers only the generate stage's samples".into()))?;
        let key = (
            sample.competition.to_string(),
            sample.language.to_string(),
            format,
            sample.seed,
        );
        let recorded = self.by_sample.get(&key).ok_or_else(|| {
            missing(format!(
                "the replayed store {} has no response for it",
                self.source.root().display()
            ))
        })?;
        if recorded.prompt_blake3 != sample.prompt_blake3 {
            return Err(missing(
                "the recorded response answered a different prompt".into(),
            ));
        }
        let object: Hash = recorded
            .response_blake3
            .ok_or_else(|| missing("the recorded event names no response".into()))?;
        let bytes = self.source.objects().get(&object).map_err(LogError::from)?;
        serde_json::from_slice(&bytes).map_err(|e| missing(format!("recorded response {object}: {e}")))
    }
}

#[async_trait::async_trait]
impl ChatModel for Replay {
    async fn complete(&self, _: &ChatRequest, sample: &Sample<'_>) -> Result<Completion, RespondError> {
        self.recorded(sample)
    }
}
