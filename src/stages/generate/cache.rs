//! The request cache: a response is never paid for twice. The same mechanism keeps the AIDE
//! agent's validation runs (`aide::trial`), under `cache/trials/`.
//!
//! Key: blake3 over (provider, endpoint, model id, the responder's identity — a local
//! model's GGUF blake3 —, the full request as JSON, sample index) in the `KeyHasher`
//! encoding. On disk, beside the logs:
//!
//! ```text
//! store/cache/requests/<key hex>   64 hex digits: the response's object hash
//! store/cache/trials/<key hex>     64 hex digits: a validation run's object hash
//! store/objects/…                  the response (JSON of `provider::Completion`), the run
//! ```
//! The entry is written atomically after the response object is stored, so an entry
//! always names a complete object; a damaged or missing object makes the entry a miss.
//! On an S3 store the same keys hold the same text, written create-if-absent.

use std::path::PathBuf;

use crate::events::Provider;
use crate::log::LogError;
use crate::manifest::models::Model;
use crate::providers::{ChatRequest, Completion, Response};
use crate::stages::StageError;
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
    k.json(request).map_err(LogError::Json)?;
    Ok(k.finish())
}

/// The requests' cache folder (under `store/cache/`).
pub(crate) const REQUESTS: &str = "requests";

/// An entry's key below the store's root.
fn entry_key(kind: &str, key: &Hash) -> String {
    format!("cache/{kind}/{}", key.to_hex())
}

fn entry(store: &Store, kind: &str, key: &Hash) -> PathBuf {
    store.root().join(entry_key(kind, key))
}

/// The object hash an entry holds, if it is there and well-formed.
fn read_entry(store: &Store, kind: &str, key: &Hash) -> Option<Hash> {
    let text = match store.s3() {
        Some(s3) => String::from_utf8(s3.get(&entry_key(kind, key)).ok()??.to_vec()).ok()?,
        None => std::fs::read_to_string(entry(store, kind, key)).ok()?,
    };
    text.trim().parse::<Hash>().ok()
}

/// The object (hash and bytes) that `kind`'s entry `key` names, if it is complete.
pub fn lookup_object(store: &Store, kind: &str, key: &Hash) -> Option<(Hash, Vec<u8>)> {
    let object = read_entry(store, kind, key)?;
    let bytes = store.objects().get(&object).ok()?;
    Some((object, bytes))
}

/// Records, atomically, that `kind`'s entry `key` is the (already stored) `object`. On S3
/// the entry is created only if absent: the first writer's answer stays, as every later
/// reader of it then sees the same one.
pub fn record_object(store: &Store, kind: &str, key: &Hash, object: &Hash) -> Result<(), StageError> {
    if let Some(s3) = store.s3() {
        let hex = bytes::Bytes::from(object.to_hex().into_bytes());
        s3.create(&entry_key(kind, key), hex).map_err(LogError::from)?;
        return Ok(());
    }
    let path = entry(store, kind, key);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| LogError::io(dir, e))?;
    }
    crate::store::write_atomic(&path, object.to_hex().as_bytes()).map_err(|e| LogError::io(&path, e))?;
    Ok(())
}

/// The recorded response of `key`, if any.
pub fn lookup(store: &Store, key: &Hash) -> Result<Option<Response>, StageError> {
    let Some((object, bytes)) = lookup_object(store, REQUESTS, key) else {
        return Ok(None);
    };
    let completion: Completion = serde_json::from_slice(&bytes).map_err(|source| StageError::Decode {
        what: format!("cached response {object}"),
        source,
    })?;
    Ok(Some(Response { completion, object }))
}

/// Records that `key` was answered by `response`.
pub fn record(store: &Store, key: &Hash, response: &Response) -> Result<(), StageError> {
    record_object(store, REQUESTS, key, &response.object)
}

/// The manifest's name of a provider.
pub fn provider_name(p: Provider) -> &'static str {
    match p {
        Provider::Openai => "openai",
        Provider::Anthropic => "anthropic",
        Provider::Reference => "reference",
        Provider::Replay => "replay",
        Provider::Local => "local",
        Provider::Template => "template",
    }
}
