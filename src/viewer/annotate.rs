//! `ml2b annotate serve`: the annotation page, the one page of the viewer that writes.
//!
//! A native speaker names themself and rates each field of a translation beside its English
//! text, on the paper's scale of meaning preservation (1–5); each rating is an event of the
//! `rating` log ([`crate::competition::ratings::record`]), for the exact texts the page showed.
//!
//! ```text
//! GET  /                                   the translations (competition × language) with
//!                                          who rated their current texts
//! GET  /rate?competition=C&language=L      the form: each field, English beside the
//!                                          translation, five radio buttons, the name
//! POST /rate                               records the ratings, then 303 to the form with
//!                                          what was saved
//! ```
//!
//! Invariants:
//! - **Loopback only.** [`Annotation::serve`] refuses a listener that is not on a loopback
//!   address, and a request whose `Host` is not a loopback name is refused (421), so a page
//!   elsewhere cannot reach it through DNS rebinding.
//! - **No cross-site writes.** A POST is served only when its `Origin` is this server's
//!   own (`http://` + its `Host`), `Sec-Fetch-Site` (when sent) is `same-origin`, its body
//!   is a form (`application/x-www-form-urlencoded`), and it carries the token the form was
//!   served with (random, per process). Anything else is 403 and records nothing.
//! - **Ratings only.** The one route that writes commits `rating` events through
//!   [`ratings::record`], which checks the annotator's name, each field and score, and that
//!   the texts shown are still the current ones (else 409): nothing else is written, no
//!   file of the benchmark or the store is touched.
//! - **Escaped, script-free.** The pages are the viewer's templates, with its headers
//!   (`Content-Security-Policy` forbids scripts; `form-action 'self'`), but for the
//!   referrer, sent to this origin only (`super::headers`).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Form, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use minijinja::context;

use super::headers;
use super::html::{Nav, href, page};
use super::templates::{render, safe};
use crate::competition::ratings::{self, Rated, Refused};
use crate::competition::{Benchmark, Competition};
use crate::events::RATING_SCALE;
use crate::store::{Hash, Store};

/// The annotation server's state.
#[derive(Clone)]
pub struct Annotation {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    bench: Benchmark,
    /// Only these languages (empty: all).
    languages: Vec<String>,
    /// The token every form carries (hex of 16 random bytes, per process).
    token: String,
    /// One commit at a time: two annotators saving at once append in turn.
    writing: std::sync::Mutex<()>,
}

impl Annotation {
    pub fn new(store: Store, bench: Benchmark, languages: Vec<String>) -> Self {
        let token = Hash(rand::random::<[u8; 32]>()).to_hex();
        Self {
            inner: Arc::new(Inner {
                store,
                bench,
                languages,
                token,
                writing: std::sync::Mutex::new(()),
            }),
        }
    }

    /// Serves the page on `listener` (a loopback address) until the process ends.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let address = listener.local_addr()?;
        if !address.ip().is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("the annotation page writes to the store: it binds loopback only, not {address}"),
            ));
        }
        axum::serve(listener, self.router()).await
    }

    fn router(self) -> Router {
        Router::new()
            .route("/", get(index))
            .route("/rate", get(form).post(submit))
            .fallback(|| async { problem(StatusCode::NOT_FOUND, "nothing is at this path".into()) })
            .layer(middleware::from_fn(guard))
            .with_state(self)
    }

    /// The translations this server offers: (competition, language), in the benchmark's
    /// order.
    fn pairs(&self) -> Vec<(&Competition, &str)> {
        let bench = &self.inner.bench;
        let mut pairs = Vec::new();
        for c in &bench.competitions {
            for code in c.languages(&bench.languages) {
                let wanted =
                    self.inner.languages.is_empty() || self.inner.languages.iter().any(|l| l == code);
                if code != "en" && wanted && c.task_path(code).is_file() {
                    pairs.push((c, code));
                }
            }
        }
        pairs
    }

    /// The pair (`competition`, `language`), if this server offers it.
    fn pair(&self, competition: &str, language: &str) -> Result<(&Competition, String), Box<Response>> {
        self.pairs()
            .into_iter()
            .find(|(c, l)| c.id() == competition && *l == language)
            .map(|(c, l)| (c, l.to_string()))
            .ok_or_else(|| {
                Box::new(problem(
                    StatusCode::NOT_FOUND,
                    format!("no translation {competition}/{language} to rate here"),
                ))
            })
    }

    fn language_name(&self, code: &str) -> String {
        self.inner
            .bench
            .languages
            .resolve(code)
            .map(|l| l.name.clone())
            .unwrap_or_default()
    }

    fn current(&self) -> Result<BTreeMap<(String, String), Rated>, Box<Response>> {
        ratings::current(&self.inner.store, &self.inner.bench).map_err(|e| Box::new(failed(e)))
    }
}

/// An error page (escaped, in the annotation shell).
fn problem(status: StatusCode, message: String) -> Response {
    let reason = status.canonical_reason().unwrap_or("error");
    let html = render(
        "error.html",
        context! { status => status.as_u16(), reason, message },
    )
    .and_then(|body| page(reason, Nav::Annotate, &body));
    match html {
        Ok(html) => (status, Html(html)).into_response(),
        Err(_) => (status, format!("{reason}: {message}\n")).into_response(),
    }
}

/// The server failing: logged with its causes, a 500.
fn failed(e: impl std::error::Error + 'static) -> Response {
    let message = crate::error::chain(&e);
    tracing::warn!("{message}");
    problem(StatusCode::INTERNAL_SERVER_ERROR, message)
}

fn html(title: &str, template: &str, context: minijinja::Value) -> Response {
    match render(template, context).and_then(|body| page(title, Nav::Annotate, &body)) {
        Ok(html) => Html(html).into_response(),
        Err(e) => failed(e),
    }
}

#[derive(serde::Deserialize)]
struct Who {
    #[serde(default)]
    annotator: String,
}

/// `GET /`.
async fn index(State(a): State<Annotation>, Query(who): Query<Who>) -> Response {
    let current = match a.current() {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let pairs: Vec<_> = a
        .pairs()
        .into_iter()
        .map(|(c, l)| {
            let rated = current.get(&(c.id().to_string(), l.to_string()));
            let link = href(
                "/rate",
                &[
                    ("competition", c.id()),
                    ("language", l),
                    ("annotator", &who.annotator),
                ],
            );
            context! {
                competition => c.id(),
                language => l,
                language_name => a.language_name(l),
                href => safe(link),
                annotators => rated.map(|r| r.annotators.join(", ")).unwrap_or_default(),
            }
        })
        .collect();
    html("Translations to rate", "annotate.html", context! { pairs })
}

#[derive(serde::Deserialize)]
struct Shown {
    competition: String,
    language: String,
    #[serde(default)]
    annotator: String,
    /// How many ratings the last POST recorded.
    saved: Option<usize>,
}

/// `GET /rate`.
async fn form(State(a): State<Annotation>, Query(q): Query<Shown>) -> Response {
    let (c, language) = match a.pair(&q.competition, &q.language) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    let texts = c.task("en").and_then(|en| Ok((en, c.task(&language)?)));
    let ((english, text), hashes) = match texts.map(|t| (t, ratings::texts(c, &language))) {
        Ok((t, Ok(h))) => (t, h),
        Ok((_, Err(e))) => return failed(e),
        Err(e) => return failed(e),
    };
    let mine = match a.current() {
        Ok(current) => scores_of(current.get(&(c.id().to_string(), language.clone())), &q.annotator),
        Err(r) => return *r,
    };
    let fields: Vec<_> = english
        .fields()
        .into_iter()
        .zip(text.fields())
        .map(|((name, english), (_, text))| {
            context! { name, english, text, score => mine.get(name).cloned().unwrap_or_default() }
        })
        .collect();
    let saved = q.saved.map(|n| match n {
        0 => format!(
            "Nothing new to record for {}: the scores were already theirs.",
            q.annotator
        ),
        n => format!("Recorded {n} rating(s) by {}.", q.annotator),
    });
    html(
        &format!("Rate {}/{language}", c.id()),
        "rate.html",
        context! {
            competition => c.id(),
            language => &language,
            language_name => a.language_name(&language),
            annotator => &q.annotator,
            token => &a.inner.token,
            english_blake3 => hashes.0.to_hex(),
            text_blake3 => hashes.1.to_hex(),
            fields,
            scale => RATING_SCALE,
            saved,
        },
    )
}

/// `annotator`'s current score of each field of a pair.
fn scores_of(rated: Option<&Rated>, annotator: &str) -> BTreeMap<&'static str, String> {
    let Some(r) = rated else { return BTreeMap::new() };
    let Some(i) = r.annotators.iter().position(|a| a == annotator) else {
        return BTreeMap::new();
    };
    crate::manifest::TaskText::FIELDS
        .iter()
        .zip(&r.rows)
        .filter(|(_, row)| !row[i].is_empty())
        .map(|(f, row)| (*f, row[i].clone()))
        .collect()
}

/// `POST /rate`: the form's fields, in any order.
async fn submit(State(a): State<Annotation>, Form(form): Form<Vec<(String, String)>>) -> Response {
    let get = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_default()
    };
    if get("token") != a.inner.token {
        return problem(
            StatusCode::FORBIDDEN,
            "this form was not served by this annotation page (its token is missing or stale): reload the page".into(),
        );
    }
    let (c, language) = match a.pair(get("competition"), get("language")) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    let shown = match (
        get("english_blake3").parse::<Hash>(),
        get("text_blake3").parse::<Hash>(),
    ) {
        (Ok(e), Ok(t)) => (e, t),
        _ => return problem(StatusCode::BAD_REQUEST, "the form names no texts".into()),
    };
    let annotator = get("annotator").trim().to_string();
    let scores: Vec<(String, String)> = form
        .iter()
        .filter(|(k, _)| crate::manifest::TaskText::FIELDS.contains(&k.as_str()))
        .cloned()
        .collect();
    let recorded = {
        let _turn = a
            .inner
            .writing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        ratings::record(&a.inner.store, c, &language, &annotator, shown, &scores)
    };
    match recorded {
        Ok(n) => {
            let saved = n.to_string();
            let to = format!(
                "/rate?competition={}&language={}&annotator={}&saved={saved}",
                super::html::encode(c.id()),
                super::html::encode(&language),
                super::html::encode(&annotator)
            );
            Redirect::to(&to).into_response()
        }
        Err(Refused::Ratings(e)) => failed(e),
        Err(Refused::Changed) => problem(StatusCode::CONFLICT, Refused::Changed.to_string()),
        Err(refused) => problem(StatusCode::BAD_REQUEST, refused.to_string()),
    }
}

/// Refuses foreign hosts, and POSTs from anywhere but this server's own pages; marks every
/// response as the viewer does; logs each request (`-v`).
async fn guard(request: Request, next: Next) -> Response {
    let (method, uri) = (request.method().clone(), request.uri().clone());
    let mut response = if !headers::loopback_host(&request) {
        let text = "this page answers loopback host names only (localhost, 127.0.0.1, [::1])\n";
        (StatusCode::MISDIRECTED_REQUEST, text).into_response()
    } else if method == axum::http::Method::POST
        && let Some(why) = cross_site(request.headers())
    {
        tracing::warn!("refused {method} {uri}: {why}");
        problem(StatusCode::FORBIDDEN, format!("refused: {why}"))
    } else {
        next.run(request).await
    };
    headers::mark(response.headers_mut(), headers::Referrer::SameOrigin);
    tracing::info!("{method} {uri}: {}", response.status().as_u16());
    response
}

/// Why a POST with these headers is not from this server's own page, if it is not.
fn cross_site(headers: &HeaderMap) -> Option<String> {
    let value = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    let Some(host) = value(header::HOST) else {
        return Some("a POST without a Host header".into());
    };
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok())
        && site != "same-origin"
    {
        return Some(format!("a {site} request (Sec-Fetch-Site), not from this page"));
    }
    match value(header::ORIGIN) {
        None => return Some("a POST without an Origin header".into()),
        Some(origin) if origin != format!("http://{host}") => {
            return Some(format!("a POST from {origin}, not from http://{host}"));
        }
        Some(_) => {}
    }
    let form = value(header::CONTENT_TYPE)
        .is_some_and(|t| t.split(';').next() == Some("application/x-www-form-urlencoded"));
    (!form).then(|| "a POST whose body is not a form (application/x-www-form-urlencoded)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    const FORM: (&str, &str) = ("content-type", "application/x-www-form-urlencoded");

    #[test]
    fn only_this_pages_own_form_posts_pass() {
        let host = ("host", "127.0.0.1:8710");
        let own = ("origin", "http://127.0.0.1:8710");
        assert_eq!(cross_site(&headers(&[host, own, FORM])), None);
        assert_eq!(
            cross_site(&headers(&[host, own, FORM, ("sec-fetch-site", "same-origin")])),
            None
        );
        for (refused, why) in [
            (vec![host, FORM], "without an Origin"),
            (vec![host, ("origin", "null"), FORM], "from null"),
            (
                vec![host, ("origin", "http://evil.example"), FORM],
                "from http://evil.example",
            ),
            (vec![host, ("origin", "http://127.0.0.1:8711"), FORM], "not from"),
            (
                vec![host, own, FORM, ("sec-fetch-site", "cross-site")],
                "cross-site",
            ),
            (
                vec![host, own, FORM, ("sec-fetch-site", "same-site")],
                "same-site",
            ),
            (vec![host, own, ("content-type", "text/plain")], "not a form"),
            (vec![host, own], "not a form"),
            (vec![own, FORM], "without a Host"),
        ] {
            let said = cross_site(&headers(&refused)).unwrap_or_default();
            assert!(said.contains(why), "{refused:?}: {said}");
        }
    }
}
