//! `ml2b view` as a user meets it: the real binary serving the shared fixture store on a
//! free loopback port, its pages loaded by headless Chromium (the DOM after loading, and
//! screenshots), and raw HTTP for what a browser never sends (other methods, paths that
//! climb out, a foreign `Host`).
//!
//! The screenshots `viewer-list.png` and `viewer-run.png` are written under
//! `$CARGO_TARGET_TMPDIR/viewer/` (their paths are printed).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::browser::{between, chromium, dump_dom, screenshot, unescape};
use crate::common::Workspace;
use crate::fixture::{LEAKY_CODE, LEAKY_LINE, ROOT, THE_RUN, fixture};

/// A running `ml2b view`, killed when dropped.
pub(crate) struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT/`, as it printed.
    pub(crate) url: String,
    stderr: PathBuf,
}

impl Server {
    /// Starts `ml2b view --port 0` on the workspace's store and reads its URL.
    pub(crate) fn start(ws: &Workspace) -> Self {
        Self::spawn(ws, &["view", "--port", "0", "--root", ROOT])
    }

    /// Starts `ml2b ARGS` (a server on port 0: `view`, `annotate serve`) on the
    /// workspace's store and reads the URL it prints.
    pub(crate) fn spawn(ws: &Workspace, args: &[&str]) -> Self {
        let stderr = ws.dir.path().join(format!("{}.stderr", args[0]));
        let mut child = ws
            .ml2b()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = send.send(line);
        });
        let line = receive.recv_timeout(Duration::from_secs(120)).unwrap_or_default();
        let server = Self {
            child,
            url: line.trim().to_string(),
            stderr,
        };
        assert!(
            server.url.starts_with("http://127.0.0.1:") && server.url.ends_with('/'),
            "ml2b {args:?} printed {line:?}; stderr:\n{}",
            server.messages()
        );
        server
    }

    /// `127.0.0.1:PORT`.
    pub(crate) fn address(&self) -> &str {
        self.url.trim_start_matches("http://").trim_end_matches('/')
    }

    pub(crate) fn page(&self, path: &str) -> String {
        format!("{}{}", self.url, path.trim_start_matches('/'))
    }

    pub(crate) fn messages(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response to one raw HTTP/1.1 request: status, headers (lowercase names), body.
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: String,
    pub(crate) body: String,
}

/// Sends `method target` with `host` as the `Host` header, exactly as written (no
/// normalisation of the path, unlike a browser or curl).
pub(crate) fn http(address: &str, method: &str, target: &str, host: &str) -> Response {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        stream,
        "{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    )
    .unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    Response {
        status,
        headers: head.to_ascii_lowercase(),
        body: body.to_string(),
    }
}

/// The text of an HTML fragment: tags dropped, entities decoded.
pub(crate) fn text(html: &str) -> String {
    let tags = regex::Regex::new("<[^>]*>").unwrap();
    unescape(&tags.replace_all(html, ""))
}

/// The run list's rows, each as column → text (its `<td class="c-COLUMN">` cells).
pub(crate) fn runs(dom: &str) -> Vec<BTreeMap<String, String>> {
    between(dom, "<tr class=\"run\">", "</tr>")
        .into_iter()
        .map(|row| {
            between(row, "<td class=\"c-", "</td>")
                .into_iter()
                .map(|cell| {
                    let (class, inner) = cell.split_once("\">").unwrap();
                    let column = class.split(' ').next().unwrap();
                    (column.to_string(), text(inner))
                })
                .collect()
        })
        .collect()
}

/// The number of runs the list says match.
pub(crate) fn matching(dom: &str) -> usize {
    let n = between(dom, "<strong id=\"matching\">", "</strong>");
    n[0].parse().unwrap()
}

/// Where the screenshots go, so the closing note can show them.
pub(crate) fn shots() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("viewer");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_viewer_lists_filters_and_shows_runs_in_a_browser() {
    let fx = fixture();
    let server = Server::start(&fx.ws);
    let messages = server.messages();
    assert!(
        messages.contains("read-only") && messages.contains("loopback"),
        "{messages}"
    );
    let browser = chromium();
    let profile = fx.ws.dir.path().join("chromium-profile");

    let list = dump_dom(&browser, &server.url, &profile);
    let all = runs(&list);
    assert!(!all.is_empty(), "the list shows no run:\n{list}");
    assert_eq!(
        matching(&list),
        fx.runs.len(),
        "every run of the fixture is listed"
    );
    for row in &all {
        assert_eq!(row["generation_id"].len(), 12, "{row:?}");
    }
    // A run not executed yet is pending, not a zero like a failure's.
    let pending: Vec<_> = all.iter().filter(|r| r["outcome"] == "not_executed").collect();
    assert_eq!(pending.len(), 1, "the fixture's run never executed: {all:?}");
    assert_eq!(
        (pending[0]["r_p"].as_str(), pending[0]["missing_stage"].as_str()),
        ("pending", "execute")
    );
    let failed = all
        .iter()
        .find(|r| r["outcome"] == "timeout")
        .expect("the fixture's timeout");
    assert_eq!(failed["r_p"], "0.0000", "a failure is a zero: {failed:?}");

    let language = THE_RUN.2;
    let filtered = dump_dom(
        &browser,
        &server.page(&format!("/?language={language}")),
        &profile,
    );
    let some = runs(&filtered);
    assert!(!some.is_empty(), "no run in {language}");
    assert!(some.iter().all(|r| r["language"] == language), "{some:?}");
    assert!(matching(&filtered) < matching(&list));
    assert!(
        filtered.contains(&format!("<option value=\"{language}\" selected=\"\">")),
        "the form keeps the filter"
    );

    let the_run = fx.run(THE_RUN).to_hex();
    let run = dump_dom(&browser, &server.page(&format!("/run/{the_run}")), &profile);
    let line = LEAKY_LINE;
    let source = LEAKY_CODE.lines().nth(line - 1).unwrap();
    let code_row = between(
        &run,
        &format!("<tr class=\"line flagged\" id=\"L{line}\""),
        "</tr>",
    );
    assert_eq!(code_row.len(), 1, "line {line} is not flagged:\n{run}");
    assert!(text(code_row[0]).contains(source), "{}", code_row[0]);
    let after = &run[run.find(&format!("id=\"L{line}\"")).unwrap()..];
    let next_row = between(after, "</tr>", "</tr>")[0];
    assert!(
        next_row.contains(&format!("<tr class=\"finding\" data-line=\"{line}\"")),
        "the row after line {line} is not its finding: {next_row}"
    );
    assert!(
        text(next_row).contains("leakage_preprocessing_on_validation"),
        "{next_row}"
    );
    for part in ["Prompt", "English task", "Sandbox output", "r_p"] {
        assert!(run.contains(part), "the run page has no {part}");
    }

    let matrix = dump_dom(&browser, &server.page("/matrix"), &profile);
    let cells = between(&matrix, "<td class=\"cell num\"", "</td>");
    assert!(!cells.is_empty(), "the matrix has no cell:\n{matrix}");
    let href = unescape(between(cells[0], "<a href=\"", "\"")[0]);
    let wanted: BTreeMap<String, String> = href
        .trim_start_matches("/?")
        .split('&')
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.replace("%2B", "+"))
        })
        .collect();
    let behind = runs(&dump_dom(&browser, &server.page(&href), &profile));
    assert!(!behind.is_empty(), "{href} lists no run");
    for row in &behind {
        for (column, value) in &wanted {
            assert_eq!(&row[column], value, "{href}: {row:?}");
        }
    }

    let aup = dump_dom(&browser, &server.page("/tables/aup"), &profile);
    let first = between(&aup, "<td class=\"c-model\"><a href=\"", "\"");
    assert_eq!(
        first.first().map(|h| unescape(h)),
        Some("/?model=gpt-x&format=modular&language=en".into()),
        "a table cell links to its runs"
    );

    let dir = shots();
    for (name, path) in [
        ("viewer-list.png", "/".to_string()),
        ("viewer-run.png", format!("/run/{the_run}")),
    ] {
        let png = dir.join(name);
        screenshot(&browser, &server.page(&path), &png, &profile);
        println!("screenshot: {}", png.display());
    }
}

#[test]
fn the_viewer_refuses_writes_foreign_hosts_and_paths_outside_the_store() {
    let fx = fixture();
    let server = Server::start(&fx.ws);
    let address = server.address();

    for (method, target) in [
        ("POST", "/"),
        ("PUT", "/run/00"),
        ("DELETE", "/tables/aup"),
        ("PATCH", "/matrix"),
    ] {
        let r = http(address, method, target, address);
        assert_eq!(r.status, 405, "{method} {target}");
        assert!(
            r.headers.contains("\r\nallow: get, head"),
            "{method} {target}: {}",
            r.headers
        );
    }

    let secrets = [
        ("/../../etc/passwd", "root:"),
        ("/%2e%2e/%2e%2e/etc/passwd", "root:"),
        ("/run/..%2F..%2Fetc%2Fpasswd", "root:"),
        ("/event/..%2F..%2FCargo.toml", "[package]"),
        ("/plots/..%2f..%2fCargo.toml", "[package]"),
        ("/plots/..%2f..%2fCargo.toml%00.svg", "[package]"),
        ("/tables/..%2f..%2fCargo.toml", "[package]"),
        ("/search/..%2f..%2f..%2fetc%2fpasswd", "root:"),
        ("/store/log", "PAR1"),
        ("/objects/blake3", "PAR1"),
        ("/object/..%2f..%2fCargo.toml", "[package]"),
        ("/object/%2e%2e", "[package]"),
    ];
    for (target, secret) in secrets {
        let r = http(address, "GET", target, address);
        assert!(matches!(r.status, 400 | 404), "GET {target}: {}", r.status);
        assert!(!r.body.contains(secret), "GET {target} served {secret}");
    }

    let head = http(address, "HEAD", "/", address);
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert!(
        head.headers
            .contains("content-security-policy: default-src 'none'")
    );

    let foreign = http(address, "GET", "/", "evil.example");
    assert_eq!(foreign.status, 421, "a foreign Host is refused on loopback");
    assert!(!foreign.body.contains("<tr class=\"run\">"));
}

#[test]
fn a_huge_answer_makes_a_small_page_that_links_to_the_whole_objects() {
    use crate::fixture::{Written, run_with};
    let ws = Workspace::new();
    let code: String = (0..100_000)
        .map(|i| format!("x_{i} = {i}  # one line of a very long answer\n"))
        .collect();
    let response = format!("Here it is.\n```python\n{code}```\n");
    let id = run_with(
        &ws,
        &Written {
            response: &response,
            code: &code,
            stdout: "",
            detail: "exit status 1",
        },
    )
    .to_hex();
    let server = Server::start(&ws);
    let address = server.address();
    let page = http(address, "GET", &format!("/run/{id}"), address);
    assert_eq!(page.status, 200, "{}", server.messages());
    assert!(page.body.len() < 1 << 20, "the page is {} bytes", page.body.len());
    assert!(page.body.contains("id=\"L1000\"") && !page.body.contains("id=\"L1001\""));
    assert!(
        page.body.contains(&format!(
            "Lines 1–1000 of 100000 ({} bytes) are shown",
            code.len()
        )),
        "the code's note"
    );
    assert!(
        page.body.contains("Lines 1–1000 of 100003"),
        "the response's note"
    );
    // Each links to its whole object, served as text.
    let code_hash = ml2b::store::Hash::of(code.as_bytes()).to_hex();
    assert!(page.body.contains(&format!("href=\"/object/{code_hash}\"")));
    let whole = http(address, "GET", &format!("/object/{code_hash}"), address);
    assert_eq!(whole.status, 200);
    assert!(
        whole.headers.contains("content-type: text/plain; charset=utf-8"),
        "{}",
        whole.headers
    );
    assert!(
        whole.headers.contains("x-content-type-options: nosniff"),
        "{}",
        whole.headers
    );
    assert_eq!(whole.body, code);
    let objects = regex::Regex::new("href=\"/object/([0-9a-f]{64})\"").unwrap();
    let linked: Vec<&str> = objects
        .captures_iter(&page.body)
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    assert!(
        linked.iter().any(|h| *h != code_hash),
        "the response links too: {linked:?}"
    );
    let absent = "0".repeat(64);
    assert_eq!(
        http(address, "GET", &format!("/object/{absent}"), address).status,
        404
    );
    assert_eq!(http(address, "GET", "/object/xyz", address).status, 404);
}
