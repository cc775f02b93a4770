//! Why a page could not be served, and the response that says so.
//!
//! A request naming something that is not there (an unknown path, an id no event has, a
//! table or plot not in the catalog) is 404; a malformed parameter is 400; anything else is
//! the viewer failing (500), logged through `tracing` with its causes. Every error page
//! is HTML, its message escaped.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use datafusion::error::DataFusionError;

use super::html::{Nav, page};
use super::templates::render;
use crate::log::LogError;
use crate::query::QueryError;
use crate::record::RecordError;
use crate::report::ReportError;

/// A failed request.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// Nothing is at this path, or the id, table or plot it names does not exist.
    #[error("{0}")]
    NotFound(String),
    /// A parameter of the request is not one the page accepts.
    #[error("{0}")]
    BadRequest(String),
    #[error("cannot query the store")]
    Query(#[from] QueryError),
    #[error("the query engine failed")]
    Engine(#[from] DataFusionError),
    #[error("cannot read the logs")]
    Log(#[from] LogError),
    #[error("cannot read the record")]
    Record(#[source] RecordError),
    #[error("cannot render")]
    Report(#[from] ReportError),
    #[error("cannot read a result")]
    Arrow(#[from] arrow::error::ArrowError),
    #[error("cannot read an object")]
    Object(#[from] crate::store::ObjectError),
    #[error("cannot render the page")]
    Template(#[from] minijinja::Error),
}

impl From<RecordError> for ViewError {
    /// An id that names nothing (or several events) is the request's fault.
    fn from(e: RecordError) -> Self {
        match e {
            RecordError::NotHex(_) | RecordError::NotFound(_) | RecordError::Ambiguous { .. } => {
                Self::NotFound(e.to_string())
            }
            e => Self::Record(e),
        }
    }
}

impl ViewError {
    fn status(&self) -> StatusCode {
        match self {
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for ViewError {
    fn into_response(self) -> Response {
        let status = self.status();
        let message = crate::error::chain(&self);
        if status.is_server_error() {
            tracing::warn!("{message}");
        }
        let reason = status.canonical_reason().unwrap_or("error");
        let status_code = status.as_u16();
        let html = render(
            "error.html",
            minijinja::context! { status => status_code, reason, message },
        )
        .and_then(|body| page(reason, Nav::None, &body));
        match html {
            Ok(html) => (status, Html(html)).into_response(),
            // The page itself failed: say so in plain text.
            Err(e) => {
                tracing::warn!("{}", crate::error::chain(&e));
                (status, format!("{reason}: {message}\n")).into_response()
            }
        }
    }
}

/// A 404 for what `what` names.
pub(crate) fn not_found(what: impl std::fmt::Display) -> ViewError {
    ViewError::NotFound(what.to_string())
}
