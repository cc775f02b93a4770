//! `ml2b view`: a local, read-only web viewer of a store.
//!
//! One DataFusion session is opened over the store when the viewer starts (the logs as
//! tables, the manifests and the views of `queries/views/`, as `ml2b query` sees them): the
//! lists, the matrix and the tables are SQL on it. A run's or an event's page reads its record
//! through the logs' row index ([`crate::record`]), at the same cost on any size of store.
//! Every page is rendered as HTML on the server: no script runs in the page.
//! A snapshot of the store (its session, and what is computed from it: the `runs` view, the
//! filter choices, the tables of `queries/`) serves every request until a log grows: then
//! the next request opens a new snapshot ([`state::Live`]), so a viewer left open beside a
//! run shows its new events on reload. What the first page needs is computed in the
//! background as soon as it listens, and again for each new snapshot.
//!
//! ```text
//! GET /                   the runs (the `runs` view), filtered and sorted by the query
//!                         string (model, format, competition, language, tier, outcome;
//!                         q: free text in ids, names and code; sort, desc, page), 100 a
//!                         page, each linking to its run
//! GET /run/<id>           one run: prompt beside the English task, code with its
//!                         findings under their lines, execution, grade, links
//! GET /event/<id>         any event by id, unit key or unique hex prefix: a run's events
//!                         redirect to /run/<generation id>, others show their fields
//! GET /search             the aide searches of the `journal` log
//! GET /search/<key>       one search as a tree of attempts
//! GET /matrix             task × language matrix of r per model; a cell lists its runs
//! GET /tables             the tables of queries/ and the report's plots
//! GET /tables/<name>      one table; every cell of a row with model, format, competition,
//!                         language, tier or outcome links to the runs behind it
//! GET /plots/<file>.svg   a plot of the report, drawn from its table
//! GET /object/<blake3>    one object whole, as text: where a page cut a long code or
//!                         response short (a page shows 1,000 lines of one), it links here
//! GET /leaderboard       every entrant over all languages, per tier, per language
//!                         (mean ± 1.96·SE over complete seeds; `metric=`)
//! GET /trajectory         the react searches; /trajectory/<key> one, step by step
//! GET /runs.csv|json      the run list's rows (its filters, every page);
//!                         /tables/<name>.csv|json a table whole
//! ```
//! `ml2b view --bundle DIR` writes the same pages as files ([`bundle`]).
//!
//! The annotation page ([`annotate`], `ml2b annotate serve`) is served by its own router,
//! never by `ml2b view`'s: it is the one page that writes, and it writes ratings only.
//!
//! Invariants:
//! - **Read-only.** Nothing `ml2b view` serves commits an event or puts an object: pages
//!   read through the session and [`crate::record`], objects through
//!   [`crate::store::Objects::get`], which verifies each against its hash.
//! - **Nothing outside the store.** No route maps a path to a file: every page is rendered
//!   from the session, and every path parameter is checked against what it may name (hex
//!   ids, the catalog's table names, the plots the tables have) before use, so `..` or an
//!   encoded one names nothing. Unknown paths are 404.
//! - **GET and HEAD only.** Any other method is 405 with `Allow: GET, HEAD`, before
//!   routing.
//! - **Loopback by default.** The command binds 127.0.0.1 unless told otherwise; bound to
//!   loopback, a request whose `Host` is not a loopback name is refused (421), so a web page
//!   elsewhere cannot read the store through DNS rebinding.
//! - **Escaped.** Every page is rendered from minijinja templates ([`templates`], the files
//!   of `src/viewer/templates/`) that HTML-escape every text from the store ([`html`]);
//!   responses forbid scripts and outside resources (`Content-Security-Policy`).

pub mod annotate;
pub mod bundle;
mod download;
mod error;
mod event;
mod grid;
mod headers;
mod highlight;
mod html;
mod journal;
mod leaderboard;
mod list;
mod listing;
mod matrix;
mod object;
mod plots;
mod run;
mod state;
mod tables;
mod templates;
mod trajectory;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

pub(crate) use crate::record::is_id_prefix as is_hex_id;
pub use annotate::Annotation;
pub use error::ViewError;
pub use state::{Live, Viewer};

/// Serves `viewer` on `listener` until the process ends. The run list's data (the `runs`
/// view and the filter choices) is computed at once, in the background: by the time a
/// browser asks for the first page it is ready, or being computed (the request waits for
/// that computation; it never starts a second one).
pub async fn serve(listener: tokio::net::TcpListener, viewer: Viewer) -> std::io::Result<()> {
    let loopback = listener.local_addr()?.ip().is_loopback();
    tokio::spawn(prepare(viewer.clone()));
    axum::serve(listener, router(Live::new(viewer), loopback)).await
}

/// Computes what the first page needs; a failure is only logged (the page says why).
async fn prepare(viewer: Viewer) {
    if let Err(e) = list::facets(&viewer).await {
        tracing::warn!("cannot prepare the run list: {}", crate::error::chain(&e));
    }
}

/// Before a request: a new snapshot if the store grew (prepared at once, like the first).
async fn refresh(State(live): State<Live>, request: Request, next: Next) -> Response {
    if let Some(fresh) = live.refresh().await {
        tokio::spawn(prepare(fresh));
    }
    next.run(request).await
}

fn router(live: Live, loopback: bool) -> Router {
    Router::new()
        .route("/", get(list::page))
        .route("/runs.csv", get(runs_csv))
        .route("/runs.json", get(runs_json))
        .route("/leaderboard", get(leaderboard::page))
        .route("/trajectory", get(trajectory::searches))
        .route("/trajectory/{key}", get(trajectory::page))
        .route("/run/{id}", get(run::page))
        .route("/event/{id}", get(event::page))
        .route("/search", get(journal::searches))
        .route("/search/{key}", get(journal::tree))
        .route("/matrix", get(matrix::page))
        .route("/tables", get(tables::index))
        .route("/tables/{name}", get(tables::page))
        .route("/plots/{file}", get(plots::svg))
        .route("/object/{hash}", get(object::raw))
        .fallback(nothing_here)
        .layer(middleware::from_fn_with_state(live.clone(), refresh))
        .layer(middleware::from_fn_with_state(Guard { loopback }, guard))
        .with_state(live)
}

async fn runs_csv(
    State(viewer): State<Viewer>,
    axum::extract::Query(params): axum::extract::Query<Vec<(String, String)>>,
) -> Result<Response, ViewError> {
    list::download(viewer, params, download::Format::Csv).await
}

async fn runs_json(
    State(viewer): State<Viewer>,
    axum::extract::Query(params): axum::extract::Query<Vec<(String, String)>>,
) -> Result<Response, ViewError> {
    list::download(viewer, params, download::Format::Json).await
}

async fn nothing_here() -> ViewError {
    error::not_found("nothing is at this path")
}

/// What every request is checked against before routing.
#[derive(Clone, Copy)]
struct Guard {
    /// Bound to a loopback address: only loopback host names are served.
    loopback: bool,
}

/// Refuses other methods than GET and HEAD, and foreign hosts on loopback; marks every
/// response as a script-free, same-origin page; logs each request (`-v`) with its time.
async fn guard(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let started = std::time::Instant::now();
    let (method, uri) = (request.method().clone(), request.uri().clone());
    let mut response = match refusal(guard, &request) {
        Some(refused) => refused,
        None => next.run(request).await,
    };
    headers::mark(response.headers_mut(), headers::Referrer::None);
    tracing::info!(
        "{method} {uri}: {} in {:.1?}",
        response.status().as_u16(),
        started.elapsed()
    );
    response
}

/// The answer to a request the viewer does not serve, if it is one.
fn refusal(guard: Guard, request: &Request) -> Option<Response> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut r = (
            StatusCode::METHOD_NOT_ALLOWED,
            "the viewer is read-only: GET and HEAD only\n",
        )
            .into_response();
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Some(r);
    }
    if guard.loopback && !headers::loopback_host(request) {
        let text = "this viewer answers loopback host names only (localhost, 127.0.0.1, [::1])\n";
        return Some((StatusCode::MISDIRECTED_REQUEST, text).into_response());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_hex_only() {
        assert!(is_hex_id("0a1B"));
        for bad in ["", "..", "../../etc/passwd", "0a%2F", &"a".repeat(65)] {
            assert!(!is_hex_id(bad), "{bad}");
        }
    }
}
