//! `ml2b view --bundle DIR`: the viewer's pages as static files, to open from `file://` or
//! publish beside a paper (like `inspect view bundle`).
//!
//! The pages are the viewer's own: each is asked of the viewer's router in-process, exactly
//! as a browser would ask it, starting from the sections of the navigation bar and following
//! every link a page has to the viewer (the run list's pages, each run, the filtered lists a
//! table, the matrix or the leaderboard links to, the tables and their downloads and plots,
//! the searches and trajectories, the whole objects). Then every link is made relative to
//! the file it is in:
//!
//! ```text
//! /                      index.html
//! /run/<id>              run/<id>.html          /event/<id> → the file of where it redirects
//! /tables/aup            tables/aup.html        /tables/aup.csv → tables/aup.csv
//! /?model=m&language=kk  index-<blake3 of the query, 16 hex>.html
//! /object/<hash>         object/<hash>.txt      /plots/x.svg → plots/x.svg
//! ```
//! What a static file cannot do is left out: a link that re-sorts the run list leads to the
//! list in its default order, and the filter form is hidden (the tables, the matrix and the
//! leaderboard link to every filtered list they name).
//!
//! Invariants: nothing is overwritten (DIR must not exist, or be an empty folder); the
//! bundle is written into a sibling folder and renamed into place when complete, so a
//! failed or interrupted export leaves no partial DIR.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use tower::ServiceExt;

use super::{Live, Viewer};
use crate::progress::Progress;

/// The pages a bundle starts from: the navigation bar's.
const START: [&str; 6] = [
    "/",
    "/leaderboard",
    "/matrix",
    "/tables",
    "/search",
    "/trajectory",
];

/// Parameters of the run list a bundle does not follow (each order would be a copy).
const NOT_FOLLOWED: [&str; 2] = ["sort", "desc"];

/// Why a bundle could not be written.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("{0} exists and is not an empty folder: a bundle never overwrites")]
    Exists(PathBuf),
    #[error("cannot write {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the viewer answered {status} for {url}: {body}")]
    Page {
        url: String,
        status: StatusCode,
        body: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BundleError + '_ {
    move |source| BundleError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What a bundle holds.
#[derive(Debug, Default)]
pub struct Written {
    pub pages: usize,
    pub files: usize,
    pub bytes: u64,
}

/// One answer of the viewer.
struct Fetched {
    /// Where a redirect led (the final URL), else the URL itself.
    url: String,
    html: bool,
    text: bool,
    body: Vec<u8>,
}

/// Writes every page of `viewer` reachable from [`START`] under `dir` (a slow step of
/// `progress`).
pub async fn write(viewer: Viewer, dir: &Path, progress: &dyn Progress) -> Result<Written, BundleError> {
    if dir.exists() && std::fs::read_dir(dir).map_err(io(dir))?.next().is_some() {
        return Err(BundleError::Exists(dir.to_path_buf()));
    }
    let router = super::router(Live::new(viewer), false);
    progress.slow_step(&format!("exporting the viewer's pages to {}", dir.display()));
    let fetched = crawl(&router).await;
    progress.slow_step_ended();
    let fetched = fetched?;
    let files = names(&fetched);
    let partial = partial_dir(dir);
    let _ = std::fs::remove_dir_all(&partial);
    let written = write_files(&partial, &fetched, &files);
    let written = match written {
        Ok(w) => w,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&partial);
            return Err(e);
        }
    };
    if dir.exists() {
        std::fs::remove_dir(dir).map_err(io(dir))?;
    }
    std::fs::rename(&partial, dir).map_err(io(dir))?;
    Ok(written)
}

/// The sibling folder a bundle is written into before it is renamed to `dir`.
fn partial_dir(dir: &Path) -> PathBuf {
    let name = dir
        .file_name()
        .map_or("bundle".into(), |n| n.to_string_lossy().into_owned());
    dir.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

/// Asks the router for every page reachable from [`START`]: URL → answer.
async fn crawl(router: &axum::Router) -> Result<BTreeMap<String, Fetched>, BundleError> {
    let mut fetched = BTreeMap::new();
    let mut queue: VecDeque<String> = START.iter().map(|s| s.to_string()).collect();
    while let Some(url) = queue.pop_front() {
        if fetched.contains_key(&url) {
            continue;
        }
        tracing::debug!("bundle: {url}");
        let answer = get(router, &url).await?;
        if answer.html {
            let page = String::from_utf8_lossy(&answer.body);
            let new = links(&page).into_iter().filter_map(|l| followed(&l));
            queue.extend(new.filter(|target| !fetched.contains_key(target)));
        }
        if answer.url != url && !fetched.contains_key(&answer.url) {
            queue.push_front(answer.url.clone());
        }
        fetched.insert(url, answer);
    }
    Ok(fetched)
}

/// One GET through the router, following redirects.
async fn get(router: &axum::Router, url: &str) -> Result<Fetched, BundleError> {
    let mut url = url.to_string();
    for _ in 0..5 {
        let request = Request::get(&url)
            .header(header::HOST, "127.0.0.1")
            .body(Body::empty())
            .expect("a path is a valid request");
        let response = router
            .clone()
            .oneshot(request)
            .await
            .expect("the router is infallible");
        let status = response.status();
        let location = response
            .headers()
            .get(header::LOCATION)
            .and_then(|l| l.to_str().ok());
        if let (true, Some(to)) = (status.is_redirection(), location) {
            url = to.to_string();
            continue;
        }
        let kind = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|c| c.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .map(|b| b.to_vec())
            .unwrap_or_default();
        if !status.is_success() {
            return Err(BundleError::Page {
                url,
                status,
                body: String::from_utf8_lossy(&body).chars().take(500).collect(),
            });
        }
        return Ok(Fetched {
            url,
            html: kind.starts_with("text/html"),
            text: kind.starts_with("text/plain"),
            body,
        });
    }
    Err(BundleError::Page {
        url,
        status: StatusCode::LOOP_DETECTED,
        body: "too many redirects".into(),
    })
}

/// Every `href` and `src` value of `page`, unescaped.
fn links(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attribute in ["href=\"", "src=\""] {
        let mut rest = page;
        while let Some(at) = rest.find(attribute) {
            rest = &rest[at + attribute.len()..];
            let Some(end) = rest.find('"') else { break };
            out.push(unescape(&rest[..end]));
            rest = &rest[end..];
        }
    }
    out
}

fn unescape(value: &str) -> String {
    value
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The viewer URL a link leads to in the bundle: its own, or without the parameters the
/// bundle does not follow; `None` for a link out of the viewer or within the page.
fn followed(link: &str) -> Option<String> {
    if !link.starts_with('/') || link.starts_with("//") {
        return None;
    }
    let link = link.split('#').next().unwrap_or_default();
    let Some((path, query)) = link.split_once('?') else {
        return Some(link.to_string());
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|kv| {
            let key = kv.split('=').next().unwrap_or_default();
            !kv.is_empty() && !NOT_FOLLOWED.contains(&key)
        })
        .collect();
    Some(if kept.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", kept.join("&"))
    })
}

/// Each fetched URL's file in the bundle (a redirect's: its target's).
fn names(fetched: &BTreeMap<String, Fetched>) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    for (url, answer) in fetched {
        let file = match fetched.get(&answer.url) {
            Some(target) if answer.url != *url => file_name(&answer.url, target),
            _ => file_name(url, answer),
        };
        files.insert(url.clone(), file);
    }
    files
}

/// The file of `url`: its path (`index` for `/`), a digest of its query string, and the
/// extension its answer needs.
fn file_name(url: &str, answer: &Fetched) -> String {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let path = path.trim_start_matches('/');
    let stem = if path.is_empty() { "index" } else { path };
    let (stem, extension) = match (answer.html, answer.text, stem.rsplit_once('.')) {
        (true, ..) => (stem, ".html".to_string()),
        (_, true, _) => (stem, ".txt".to_string()),
        (_, _, Some((s, e))) if !e.contains('/') => (s, format!(".{e}")),
        _ => (stem, String::new()),
    };
    let stem = sanitize(stem);
    if query.is_empty() {
        format!("{stem}{extension}")
    } else {
        let digest = blake3::hash(query.as_bytes()).to_hex();
        format!("{stem}-{}{extension}", &digest[..16])
    }
}

/// A path made of safe characters only (the viewer's paths are hex ids and table names).
fn sanitize(path: &str) -> String {
    path.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_./".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect::<String>()
        .replace("..", "_")
}

/// `to` relative to the folder of `from` (both bundle paths).
fn relative(from: &str, to: &str) -> String {
    let depth = from.matches('/').count();
    format!("{}{to}", "../".repeat(depth))
}

/// Writes every answer under `dir`, each page's links made relative.
fn write_files(
    dir: &Path,
    fetched: &BTreeMap<String, Fetched>,
    files: &BTreeMap<String, String>,
) -> Result<Written, BundleError> {
    let mut written = Written::default();
    for (url, answer) in fetched {
        if answer.url != *url {
            continue; // a redirect: its target is written under its own URL
        }
        let file = &files[url];
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        let bytes = if answer.html {
            written.pages += 1;
            rewrite(&String::from_utf8_lossy(&answer.body), file, files).into_bytes()
        } else {
            answer.body.clone()
        };
        written.files += 1;
        written.bytes += bytes.len() as u64;
        std::fs::write(&path, bytes).map_err(io(&path))?;
    }
    Ok(written)
}

/// `page` (the bundle's `file`) with every link to the viewer made relative, and its forms
/// hidden.
fn rewrite(page: &str, file: &str, files: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(page.len());
    let mut rest = page;
    loop {
        let next = ["href=\"", "src=\"", "action=\""]
            .iter()
            .filter_map(|a| rest.find(a).map(|at| (at, a.len())))
            .min();
        let Some((at, len)) = next else { break };
        out.push_str(&rest[..at + len]);
        rest = &rest[at + len..];
        let Some(end) = rest.find('"') else { break };
        let value = unescape(&rest[..end]);
        let (link, fragment) = match value.split_once('#') {
            Some((l, f)) => (l.to_string(), format!("#{f}")),
            None => (value.clone(), String::new()),
        };
        let target = if link.is_empty() {
            None
        } else {
            followed(&link).and_then(|u| files.get(&u))
        };
        match target {
            Some(target) => out.push_str(&format!("{}{fragment}", relative(file, target))),
            None if link.starts_with('/') => out.push('#'),
            None => out.push_str(&rest[..end]),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.replace("<form ", "<form hidden ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(url: &str) -> Fetched {
        Fetched {
            url: url.into(),
            html: true,
            text: false,
            body: Vec::new(),
        }
    }

    #[test]
    fn files_are_named_by_path_and_query() {
        assert_eq!(file_name("/", &page("/")), "index.html");
        assert_eq!(file_name("/run/ab12", &page("/run/ab12")), "run/ab12.html");
        let data = Fetched {
            html: false,
            ..page("/tables/aup.csv")
        };
        assert_eq!(file_name("/tables/aup.csv", &data), "tables/aup.csv");
        let listed = file_name("/?model=m&language=kk", &page("/?model=m&language=kk"));
        assert!(
            listed.starts_with("index-") && listed.ends_with(".html"),
            "{listed}"
        );
        let object = Fetched {
            html: false,
            text: true,
            ..page("/object/ff")
        };
        assert_eq!(file_name("/object/ff", &object), "object/ff.txt");
    }

    #[test]
    fn sort_links_lead_to_the_default_order_and_outside_links_are_kept() {
        assert_eq!(
            followed("/?model=m&sort=r_p&desc=1").as_deref(),
            Some("/?model=m")
        );
        assert_eq!(followed("/?sort=r_p").as_deref(), Some("/"));
        assert_eq!(followed("https://example.org/"), None);
        assert_eq!(followed("#L3"), None);
    }

    #[test]
    fn links_become_relative_to_their_file() {
        let mut files = BTreeMap::new();
        files.insert("/".to_string(), "index.html".to_string());
        files.insert("/run/ab".to_string(), "run/ab.html".to_string());
        files.insert("/?model=m&language=kk".to_string(), "index-00.html".to_string());
        let html = "<a href=\"/\">x</a><a href=\"/run/ab#L3\">r</a><a href=\"/?model=m&amp;language=kk\">l</a>\
                    <a href=\"/nowhere\">n</a><a href=\"https://e.org/\">e</a><form class=\"f\" action=\"/\">";
        let out = rewrite(html, "run/cd.html", &files);
        assert_eq!(
            out,
            "<a href=\"../index.html\">x</a><a href=\"../run/ab.html#L3\">r</a><a href=\"../index-00.html\">l</a>\
             <a href=\"#\">n</a><a href=\"https://e.org/\">e</a><form hidden class=\"f\" action=\"../index.html\">"
        );
    }
}
