//! The request cache: a response is never paid for twice.
//!
//! Key: blake3 over (provider, endpoint, model id, the responder's identity — a local
//! model's GGUF blake3 —, the full request as JSON, sample index) in the `KeyHasher`
//! encoding. On disk, beside the logs:
//!
//! ```text
//! store/cache/requests/<key hex>   64 hex digits: the response's object hash
//! store/objects/…                  the response (JSON of `provider::Completion`)
//! ```
//! The entry is written atomically after the response object is stored, so an entry
//! always names a complete object; a damaged or missing object makes the entry a miss.

use std::path::PathBuf;

use super::provider::{ChatRequest, Completion};
use super::responder::Response;
use super::{StageError, provider_name};
use crate::log::LogError;
use crate::manifest::models::Model;
use crate::store::{Hash, KeyHasher, Store};

/// The cache key of one request.
pub fn request_key(
    model: &Model,
    identity: &str,
    request: &ChatRequest,
    seed: u32,
) -> Result<Hash, StageError> {
    let mut k = KeyHasher::new("ml2b request v1");
    k.str(provider_name(model.provider))
        .str(&model.endpoint)
        .str(&model.model)
        .str(identity)
        .u64(u64::from(seed));
    k.json(request).map_err(|e| StageError::Other(e.to_string()))?;
    Ok(k.finish())
}

fn entry(store: &Store, key: &Hash) -> PathBuf {
    store.root().join("cache/requests").join(key.to_hex())
}

/// The recorded response of `key`, if any.
pub fn lookup(store: &Store, key: &Hash) -> Result<Option<Response>, StageError> {
    let path = entry(store, key);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let Ok(object) = text.trim().parse::<Hash>() else {
        return Ok(None);
    };
    let Ok(bytes) = store.objects().get(&object) else {
        return Ok(None);
    };
    let completion: Completion = serde_json::from_slice(&bytes)
        .map_err(|e| StageError::Other(format!("cached response {object}: {e}")))?;
    Ok(Some(Response { completion, object }))
}

/// Records that `key` was answered by `response`.
pub fn record(store: &Store, key: &Hash, response: &Response) -> Result<(), StageError> {
    let path = entry(store, key);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| LogError::io(dir, e))?;
    }
    crate::store::write_atomic(&path, response.object.to_hex().as_bytes())
        .map_err(|e| LogError::io(&path, e))?;
    Ok(())
}
