//! What every request to a model goes through, a generated solution's, an agent's step or
//! a translation's: the model, the store and the responder ([`Requests`]), the request
//! cache around each answer, the sampling constants, and the commit of an agent's search
//! steps. Below the stages that ask (generate and its agents, translate): it calls none of
//! them.

use super::generate::cache;
use crate::events::Generation;
use crate::log::{EventBody, LogError, unit_key};
use crate::manifest::models::Model;
use crate::providers::{self as provider, Responder, Response, Sample};
use crate::stages::StageError;
use crate::store::Store;

/// The most tokens a response may have.
pub const MAX_TOKENS: u32 = 4096;

/// Sampling temperature of LLM requests (the seed varies the sample).
pub const TEMPERATURE: f64 = 0.7;

/// The model a stage instance asks, the store its answers and objects go to, and the
/// responder that sends its requests (retries, budget, cost).
#[derive(Clone)]
pub struct Requests {
    pub model: Model,
    pub store: Store,
    pub responder: Responder,
}

impl Requests {
    /// The request cache's key of `request` asked as sample `seed` of this model
    /// (`generate::cache::request_key`).
    pub(crate) fn key(
        &self,
        request: &provider::ChatRequest,
        seed: u32,
    ) -> Result<crate::store::Hash, StageError> {
        cache::request_key(&self.model, &self.responder.identity(), request, seed)
    }

    /// Answers one request of the generate sample `body`, cached under `key`.
    pub(crate) async fn respond(
        &self,
        key: &crate::store::Hash,
        body: &Generation,
        request: &provider::ChatRequest,
    ) -> Result<Response, StageError> {
        self.ask(key, &Sample::from(body), &body.label(), request).await
    }

    /// Answers one request asked for `sample` (`label` names it in errors), cached under
    /// `key`: from the cache, or from the provider (then cached).
    pub(crate) async fn ask(
        &self,
        key: &crate::store::Hash,
        sample: &Sample<'_>,
        label: &str,
        request: &provider::ChatRequest,
    ) -> Result<Response, StageError> {
        let (store, k) = (self.store.clone(), *key);
        if let Some(cached) = blocking(move || cache::lookup(&store, &k)).await? {
            return Ok(cached);
        }
        let response = self
            .responder
            .respond(&self.store, sample, request)
            .await
            .map_err(|e| respond_error(label, e))?;
        let (store, k, object) = (self.store.clone(), *key, response.object);
        blocking(move || cache::record_object(&store, cache::REQUESTS, &k, &object)).await?;
        Ok(response)
    }

    /// Stores `bytes` as an object, off the async workers (a put syncs to disk).
    pub(crate) async fn put(&self, bytes: Vec<u8>) -> Result<crate::store::Hash, StageError> {
        let store = self.store.clone();
        blocking(move || Ok(store.objects().put(&bytes).map_err(LogError::from)?)).await
    }
}

/// Runs `f`, which blocks (file writes synced to disk, S3 calls), on tokio's blocking
/// threads, so that the async workers keep serving the requests in flight.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StageError> + Send + 'static,
) -> Result<T, StageError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(StageError::Panicked)?
}

/// Commits an agent's search steps to their log (`journal` for aide, `trajectory` for
/// react): one event per `(step, seconds, body)`, keyed by the search and the step; keys the
/// log holds already are dropped, so a resumed search commits each step once.
pub(crate) fn commit_steps<B: EventBody>(
    g: &Requests,
    search: &crate::store::Hash,
    steps: impl IntoIterator<Item = (u32, f64, B)>,
) -> Result<(), StageError> {
    use crate::log::{Event, Provenance, StageLog};
    let log = StageLog::new(&g.store, B::STAGE)?;
    let events = steps
        .into_iter()
        .map(|(step, seconds, body)| {
            let key = unit_key(B::STAGE, B::SCHEMA_VERSION, &[], &(search.to_hex(), step))?;
            Event::new(key, Vec::new(), body, Provenance::now((seconds * 1000.0) as u64))
        })
        .collect::<Result<Vec<_>, LogError>>()?;
    let mut view = log.view()?;
    log.commit(&mut view, events, None)?;
    Ok(())
}

/// A provider's failure as the unit's: an unanswered request fails that unit only.
fn respond_error(label: &str, e: provider::RespondError) -> StageError {
    match e {
        provider::RespondError::Unanswered(message) => StageError::Unit {
            label: label.to_string(),
            message,
        },
        provider::RespondError::Store(e) => StageError::Log(e),
        e => StageError::failed(format!("model for {label}"), e),
    }
}
