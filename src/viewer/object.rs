//! `/object/<blake3>`: one object of the store, whole, where a page that cut a code or a
//! response short links (`super::html::cut`).
//!
//! The parameter must be a whole blake3 (64 hex digits), so it names an object of the store
//! and nothing else; the object is verified against its hash as it is read. UTF-8 objects
//! are served as `text/plain; charset=utf-8`, the rest as `application/octet-stream`; the
//! viewer's headers (`nosniff`, no scripts) hold here too, so a browser never renders one
//! as a page.

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::error::not_found;
use super::{ViewError, Viewer};
use crate::store::{Hash, ObjectError};

/// `GET /object/<blake3>`.
pub(super) async fn raw(
    State(viewer): State<Viewer>,
    Path(hash): Path<String>,
) -> Result<Response, ViewError> {
    let missing = || not_found(format!("the store has no object {hash}"));
    let parsed: Hash = hash.parse().map_err(|_| missing())?;
    let bytes = match viewer.store().objects().get(&parsed) {
        Err(ObjectError::Missing { .. }) => return Err(missing()),
        other => other?,
    };
    let kind = if std::str::from_utf8(&bytes).is_ok() {
        "text/plain; charset=utf-8"
    } else {
        "application/octet-stream"
    };
    Ok(([(header::CONTENT_TYPE, kind)], bytes).into_response())
}
