//! A fault-injecting HTTP proxy on 127.0.0.1, between an S3 client and the server.
//!
//! One request per client connection: the proxy reads it whole (`Content-Length` bodies
//! only, which is what `object_store` sends), forwards it on a fresh connection to the
//! server with `Connection: close`, reads the whole answer, and gives it back with
//! `Connection: close`, or injects its fault instead. Faults hit the create-if-absent PUTs
//! of segments (`If-None-Match` on a key under `/log/`), on the odd-numbered ones: the
//! first try of every commit is faulted and its retry passes (`AlwaysConflict`: every try).
//! ```text
//!  client ──► proxy ─┬─ Pass ─────────────► server ──► answer forwarded
//!                    ├─ StripIfNoneMatch ─► server (header removed, every request)
//!                    ├─ Conflict ─────────► 409 answered, nothing forwarded
//!                    ├─ AlwaysConflict ───► 409 answered to every try
//!                    ├─ LoseAck ──────────► server applies it ──► connection dropped
//!                    ├─ Slow ─────────────► server applies it ──► answered after SLOW
//!                    └─ FailAfterApply ───► server applies it ──► 500 answered
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::moto::find;

/// What the proxy does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    Pass,
    StripIfNoneMatch,
    Conflict,
    AlwaysConflict,
    LoseAck,
    Slow,
    FailAfterApply,
}

/// How long a `Slow` answer is held back.
pub const SLOW: std::time::Duration = std::time::Duration::from_secs(2);

/// A running proxy; stops when dropped.
pub struct Proxy {
    pub port: u16,
    counts: Arc<Counts>,
    _runtime: tokio::runtime::Runtime,
}

#[derive(Default)]
struct Counts {
    /// Create-if-absent PUTs of segments seen.
    creates: AtomicU32,
    /// Faults injected.
    injected: AtomicU32,
}

impl Proxy {
    /// Starts a proxy in front of the server on `upstream` (a port of 127.0.0.1).
    pub fn start(upstream: u16, fault: Fault) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let counts = Arc::new(Counts::default());
        let shared = counts.clone();
        runtime.spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(serve(client, upstream, fault, shared.clone()));
            }
        });
        Self {
            port,
            counts,
            _runtime: runtime,
        }
    }

    /// Faults injected so far.
    pub fn injected(&self) -> u32 {
        self.counts.injected.load(Ordering::SeqCst)
    }
}

/// A request as read: its head's lines and its body.
struct Request {
    lines: Vec<String>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.lines.iter().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then_some(v.trim())
        })
    }

    fn is_segment_create(&self) -> bool {
        let first = &self.lines[0];
        first.starts_with("PUT ") && first.contains("/log/") && self.header("If-None-Match").is_some()
    }

    /// The request as sent upstream: `Connection: close`, minus the headers `removed` names.
    fn encode(&self, removed: &[&str]) -> Vec<u8> {
        let mut out = String::new();
        for (i, line) in self.lines.iter().enumerate() {
            let name = line.split(':').next().unwrap_or("").trim();
            if i > 0
                && (name.eq_ignore_ascii_case("connection")
                    || removed.iter().any(|d| name.eq_ignore_ascii_case(d)))
            {
                continue;
            }
            out.push_str(line);
            out.push_str("\r\n");
        }
        out.push_str("Connection: close\r\n\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

async fn serve(mut client: TcpStream, upstream: u16, fault: Fault, counts: Arc<Counts>) {
    let Some(request) = read_request(&mut client).await else {
        return;
    };
    let faulted =
        request.is_segment_create() && counts.creates.fetch_add(1, Ordering::SeqCst).is_multiple_of(2);
    let fault = match fault {
        Fault::StripIfNoneMatch => Fault::StripIfNoneMatch,
        Fault::AlwaysConflict if request.is_segment_create() => Fault::Conflict,
        f if faulted => f,
        _ => Fault::Pass,
    };
    if !matches!(fault, Fault::Pass | Fault::StripIfNoneMatch) {
        counts.injected.fetch_add(1, Ordering::SeqCst);
    }
    let answer = match fault {
        Fault::Conflict => {
            let body = "<Error><Code>ConditionalRequestConflict</Code></Error>";
            respond(&mut client, 409, "Conflict", body).await;
            return;
        }
        Fault::StripIfNoneMatch => forward(&request.encode(&["If-None-Match"]), upstream).await,
        _ => forward(&request.encode(&[]), upstream).await,
    };
    match fault {
        Fault::LoseAck => drop(client),
        Fault::Slow => {
            tokio::time::sleep(SLOW).await;
            let _ = client.write_all(&close_connection(&answer)).await;
            let _ = client.shutdown().await;
        }
        Fault::FailAfterApply => {
            respond(
                &mut client,
                500,
                "Internal Server Error",
                "<Error><Code>InternalError</Code></Error>",
            )
            .await
        }
        _ => {
            let _ = client.write_all(&close_connection(&answer)).await;
            let _ = client.shutdown().await;
        }
    }
}

/// Reads one request, or `None` when the client closed first.
async fn read_request(client: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    let head_end = loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            break end;
        }
        let n = client.read(&mut chunk).await.ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let lines: Vec<String> = head.split("\r\n").map(str::to_string).collect();
    let mut request = Request {
        lines,
        body: Vec::new(),
    };
    assert!(
        request.header("Transfer-Encoding").is_none(),
        "the proxy reads Content-Length bodies only"
    );
    let len: usize = request.header("Content-Length").map_or(0, |v| v.parse().unwrap());
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = client.read(&mut chunk).await.ok().filter(|&n| n > 0)?;
        body.extend_from_slice(&chunk[..n]);
    }
    request.body = body;
    Some(request)
}

/// Sends `request` to the server and reads its whole answer (it closes the connection).
async fn forward(request: &[u8], upstream: u16) -> Vec<u8> {
    let mut server = TcpStream::connect(("127.0.0.1", upstream)).await.unwrap();
    server.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    server.read_to_end(&mut answer).await.unwrap();
    answer
}

/// The answer with its `Connection` header replaced by `Connection: close`.
fn close_connection(answer: &[u8]) -> Vec<u8> {
    let Some(end) = find(answer, b"\r\n\r\n") else {
        return answer.to_vec();
    };
    let head = String::from_utf8_lossy(&answer[..end]);
    let mut out: String = head
        .split("\r\n")
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
        .map(|l| format!("{l}\r\n"))
        .collect();
    out.push_str("Connection: close\r\n\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&answer[end + 4..]);
    bytes
}

async fn respond(client: &mut TcpStream, status: u16, reason: &str, body: &str) {
    let answer = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(answer.as_bytes()).await;
    let _ = client.shutdown().await;
}
