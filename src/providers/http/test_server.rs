//! A scripted HTTP/1.1 server on 127.0.0.1 for the client tests: request n gets the n-th
//! reply of the script (the last one repeats). Hand-written so that faults (hangs, bodies
//! shorter than their `Content-Length`) are easy; one request per connection, then close.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server does with one request.
#[derive(Clone, Debug)]
pub(super) enum Reply {
    /// A complete response.
    Send {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
    /// Reads the request, then says nothing for this long and closes.
    Hang(Duration),
    /// Announces `declared` body bytes, sends `body` (shorter) and closes.
    Truncated { declared: usize, body: String },
    /// Waits, then replies.
    Slow(Duration, Box<Reply>),
    /// A server with room for `room` requests at once: a request beyond it is answered 429
    /// at once (with `Retry-After: retry_after` when given), the others get `then`.
    Room {
        room: usize,
        retry_after: Option<&'static str>,
        then: Box<Reply>,
    },
    /// `status` with a chunked body (no `Content-Length`): `head`, then `chunk` `count`
    /// times, then `tail`; stops early when the client hangs up.
    Stream {
        status: u16,
        head: String,
        chunk: String,
        count: usize,
        tail: String,
    },
}

impl Reply {
    pub(super) fn json(status: u16, body: &str) -> Self {
        Self::Send {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }

    pub(super) fn with_header(status: u16, name: &'static str, value: &str, body: &str) -> Self {
        Self::Send {
            status,
            headers: vec![(name, value.to_string())],
            body: body.to_string(),
        }
    }
}

/// A request as received; header names lowercased.
#[derive(Clone, Debug)]
pub(super) struct Received {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
}

impl Received {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        let found = self.headers.iter().find(|(n, _)| n == name);
        found.map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    script: Vec<Reply>,
    hits: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    received: Mutex<Vec<Received>>,
    /// When each request arrived, and the status it was answered.
    arrivals: Mutex<Vec<(Instant, u16)>>,
}

pub(super) struct Server {
    pub url: String,
    state: Arc<State>,
}

impl Server {
    pub(super) async fn start(script: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State {
            script,
            ..State::default()
        });
        let shared = state.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, shared.clone()));
            }
        });
        Self { url, state }
    }

    /// Requests received so far.
    pub(super) fn hits(&self) -> usize {
        self.state.hits.load(Ordering::SeqCst)
    }

    pub(super) fn max_in_flight(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }

    pub(super) fn received(&self) -> Vec<Received> {
        self.state.received.lock().unwrap().clone()
    }

    /// When each request arrived and how it was answered, in arrival order.
    pub(super) fn arrivals(&self) -> Vec<(Instant, u16)> {
        let mut all = self.state.arrivals.lock().unwrap().clone();
        all.sort();
        all
    }
}

async fn serve(mut stream: TcpStream, state: Arc<State>) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let arrived = Instant::now();
    let n = state.hits.fetch_add(1, Ordering::SeqCst);
    state.received.lock().unwrap().push(request);
    let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let mut reply = state.script[n.min(state.script.len() - 1)].clone();
    if let Reply::Room {
        room,
        retry_after,
        then,
    } = reply
    {
        reply = match (now > room, retry_after) {
            (false, _) => *then,
            (true, None) => Reply::json(429, TOO_MANY),
            (true, Some(after)) => Reply::with_header(429, "retry-after", after, TOO_MANY),
        };
    }
    let status = status_of(&reply);
    state.arrivals.lock().unwrap().push((arrived, status));
    respond(&mut stream, reply).await;
    state.in_flight.fetch_sub(1, Ordering::SeqCst);
    let _ = stream.shutdown().await;
}

/// The status `reply` answers with.
fn status_of(reply: &Reply) -> u16 {
    match reply {
        Reply::Send { status, .. } | Reply::Stream { status, .. } => *status,
        Reply::Slow(_, inner) => status_of(inner),
        Reply::Hang(_) | Reply::Truncated { .. } | Reply::Room { .. } => 200,
    }
}

const TOO_MANY: &str = r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#;

async fn read_request(stream: &mut TcpStream) -> Option<Received> {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    Some(Received { path, headers, body })
}

async fn respond(stream: &mut TcpStream, mut reply: Reply) {
    while let Reply::Slow(wait, inner) = reply {
        tokio::time::sleep(wait).await;
        reply = *inner;
    }
    let bytes = match reply {
        Reply::Send {
            status,
            headers,
            body,
        } => {
            let extra: String = headers.iter().map(|(n, v)| format!("{n}: {v}\r\n")).collect();
            format!("{}{extra}\r\n{body}", head(status, body.len()))
        }
        Reply::Truncated { declared, body } => format!("{}\r\n{body}", head(200, declared)),
        Reply::Hang(wait) => {
            tokio::time::sleep(wait).await;
            return;
        }
        Reply::Stream {
            status,
            head,
            chunk,
            count,
            tail,
        } => {
            let start = format!(
                "HTTP/1.1 {status} Scripted\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            );
            let framed = |part: &str| format!("{:x}\r\n{part}\r\n", part.len());
            let parts = std::iter::once(head)
                .chain(std::iter::repeat_n(chunk, count))
                .chain([tail]);
            if stream.write_all(start.as_bytes()).await.is_err() {
                return;
            }
            for part in parts {
                if stream.write_all(framed(&part).as_bytes()).await.is_err() {
                    return;
                }
            }
            let _ = stream.write_all(b"0\r\n\r\n").await;
            return;
        }
        Reply::Slow(..) | Reply::Room { .. } => unreachable!("unwrapped above"),
    };
    let _ = stream.write_all(bytes.as_bytes()).await;
}

fn head(status: u16, length: usize) -> String {
    format!(
        "HTTP/1.1 {status} Scripted\r\ncontent-type: application/json\r\ncontent-length: {length}\r\nconnection: close\r\n"
    )
}
