//! The `proxy` network ([`super::network`]) at work: one squid per ml2b process and
//! allowlist ([`Proxy`]), and one recording relay per run ([`Link`]).
//!
//! squid is Debian's (`apt-get install squid`), started by ml2b with a configuration of
//! its own in a private folder (`squid.conf`, `hosts`, `cache.log`): on a free loopback
//! port, no cache, one request per client connection, `Via` and `X-Forwarded-For` left
//! out, every request refused but those the allowlist names. It lives as long as the
//! [`Proxy`]: a thread of its own starts it (with `PR_SET_PDEATHSIG`, so that it dies with
//! ml2b even when ml2b is killed) and stops it when the handle is dropped.
//!
//! A run's [`Link`] is a Unix socket in the run's private folder, bound into the sandbox as
//! `/sandbox/proxy.sock`. Each connection on it is relayed to squid byte for byte, and
//! recorded ([`ProxyRequest`]): the request line the run sent, squid's status line and
//! whether it was squid's refusal (`X-Squid-Error: ERR_ACCESS_DENIED`), and the bytes each
//! way. The record is the run's whole traffic: the sandbox has no other way out.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::error::{SandboxError, io};
use super::network::{Allowlist, ProxyRequest};

/// How long squid may take to accept connections.
const STARTUP: Duration = Duration::from_secs(30);

/// The most bytes of a request line, or of a response head, read to record it.
const HEAD: usize = 16 << 10;

/// A running squid.
pub struct Proxy {
    address: SocketAddr,
    allowlist: Allowlist,
    /// Dropped to stop squid: its thread then kills it and waits.
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    /// The configuration and squid's own log.
    dir: tempfile::TempDir,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("address", &self.address)
            .field("allowlist", &self.allowlist)
            .finish()
    }
}

/// squid, where Debian puts it.
fn squid() -> Result<PathBuf, SandboxError> {
    ["/usr/sbin/squid", "/usr/bin/squid", "/usr/local/sbin/squid"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            SandboxError::Unavailable(
                "`--network proxy` runs squid, which is not installed (Debian: `apt-get install squid`; scripts/system-deps installs it)".into(),
            )
        })
}

/// squid's configuration for `allowlist`, listening on `port`, its files in `dir`.
pub(super) fn config(allowlist: &Allowlist, port: u16, dir: &Path) -> String {
    let mut c = format!(
        "http_port 127.0.0.1:{port}\n\
         pid_filename none\n\
         cache deny all\n\
         cache_mem 8 MB\n\
         access_log none\n\
         cache_log {dir}/cache.log\n\
         hosts_file {dir}/hosts\n\
         client_persistent_connections off\n\
         pinger_enable off\n\
         shutdown_lifetime 0 seconds\n\
         via off\n\
         forwarded_for delete\n\
         visible_hostname ml2b-proxy\n",
        dir = dir.display()
    );
    let ports: Vec<String> = allowlist.ports.iter().map(u16::to_string).collect();
    if ports.is_empty() {
        c += "http_access deny all\n";
        return c;
    }
    c += &format!(
        "acl allowed_ports port {}\nhttp_access deny !allowed_ports\n",
        ports.join(" ")
    );
    if !allowlist.domains.is_empty() {
        c += &format!(
            "acl allowed_domains dstdomain {}\nhttp_access allow allowed_domains\n",
            allowlist.domains.join(" ")
        );
    }
    c += "http_access deny all\n";
    c
}

impl Proxy {
    /// Starts squid for `allowlist` and waits until it accepts connections.
    pub fn start(allowlist: &Allowlist) -> Result<Self, SandboxError> {
        let squid = squid()?;
        let dir = tempfile::Builder::new()
            .prefix("ml2b-proxy-")
            .tempdir()
            .map_err(io("creating the proxy's folder".into()))?;
        // squid started as root runs as its own user (Debian: `proxy`), which writes its log here.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
            .map_err(io("opening the proxy's folder to squid".into()))?;
        let port = free_port().map_err(io("choosing the proxy's port".into()))?;
        let hosts: String = allowlist
            .hosts
            .iter()
            .map(|(name, ip)| format!("{ip} {name}\n"))
            .collect();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).map_err(io(format!("writing {}", path.display())))
        };
        write("hosts", &hosts)?;
        write("squid.conf", &config(allowlist, port, dir.path()))?;
        let mut cmd = Command::new(squid);
        cmd.arg("-N").arg("-f").arg(dir.path().join("squid.conf"));
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: prctl is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let (stop, thread) = keep(cmd)?;
        let proxy = Self {
            address: SocketAddr::from(([127, 0, 0, 1], port)),
            allowlist: allowlist.clone(),
            stop: Some(stop),
            thread: Some(thread),
            dir,
        };
        proxy.wait_ready()?;
        tracing::info!(
            "proxy (squid) on {} for {:?}",
            proxy.address,
            proxy.allowlist.domains
        );
        Ok(proxy)
    }

    fn wait_ready(&self) -> Result<(), SandboxError> {
        let started = Instant::now();
        while started.elapsed() < STARTUP {
            if TcpStream::connect_timeout(&self.address, Duration::from_secs(1)).is_ok() {
                return Ok(());
            }
            if self.thread.as_ref().is_some_and(JoinHandle::is_finished) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let log = std::fs::read_to_string(self.dir.path().join("cache.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(5).collect();
        Err(SandboxError::Unavailable(format!(
            "squid did not accept connections on {} (its log: {})",
            self.address,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        )))
    }

    /// Where squid listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    pub fn allowlist(&self) -> &Allowlist {
        &self.allowlist
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts `cmd` on a thread that lives as long as the sender it returns: when the sender
/// is dropped, the thread kills the process and waits for it.
fn keep(mut cmd: Command) -> Result<(mpsc::Sender<()>, JoinHandle<()>), SandboxError> {
    let (stop, stopped) = mpsc::channel::<()>();
    let (started, start) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("ml2b-squid".into())
        .spawn(move || {
            let mut child: Child = match cmd.spawn() {
                Ok(c) => c,
                Err(e) => {
                    let _ = started.send(Err(e));
                    return;
                }
            };
            let _ = started.send(Ok(()));
            // Returns when the sender is dropped (squid may have exited before: it is
            // reaped below either way).
            let _ = stopped.recv();
            let _ = child.kill();
            let _ = child.wait();
        })
        .map_err(io("starting the proxy's thread".into()))?;
    match start.recv() {
        Ok(Ok(())) => Ok((stop, thread)),
        Ok(Err(e)) => Err(SandboxError::Io {
            what: "starting squid".into(),
            source: e,
        }),
        Err(_) => Err(SandboxError::Unavailable(
            "the proxy's thread ended before squid started".into(),
        )),
    }
}

/// A free port of the loopback (the system's choice, released for squid to bind).
fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// One run's way to the proxy: a Unix socket whose connections are relayed to squid and
/// recorded. [`Link::finish`] stops it and returns what it recorded.
pub struct Link {
    path: PathBuf,
    stopping: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    requests: Mutex<Vec<ProxyRequest>>,
    /// Each relayed connection's two ends and its thread, to close and join at the end.
    open: Mutex<Vec<(UnixStream, TcpStream, JoinHandle<()>)>>,
}

impl Link {
    /// Listens at `path` (a socket anyone who can reach the path may connect to: the
    /// folder it is in is the run's own) and relays to `proxy`.
    pub fn open(proxy: &Proxy, path: &Path) -> Result<Self, SandboxError> {
        let listener = UnixListener::bind(path).map_err(io(format!("binding {}", path.display())))?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))
            .map_err(io(format!("opening {} to the sandbox", path.display())))?;
        let stopping = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared::default());
        let squid = proxy.address();
        let accept = {
            let (stopping, shared) = (stopping.clone(), shared.clone());
            std::thread::Builder::new()
                .name("ml2b-proxy-link".into())
                .spawn(move || accept_loop(&listener, squid, &stopping, &shared))
                .map_err(io("starting the proxy link".into()))?
        };
        Ok(Self {
            path: path.to_path_buf(),
            stopping,
            accept: Some(accept),
            shared,
        })
    }

    /// Stops relaying (closing what is still open: the run is over) and returns the
    /// requests, in the order they ended.
    pub fn finish(mut self) -> Vec<ProxyRequest> {
        self.stop();
        std::mem::take(&mut *self.shared.requests.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn stop(&mut self) {
        let Some(accept) = self.accept.take() else { return };
        self.stopping.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = UnixStream::connect(&self.path);
        let _ = accept.join();
        let open = std::mem::take(&mut *self.shared.open.lock().unwrap_or_else(|e| e.into_inner()));
        for (client, upstream, thread) in open {
            let _ = client.shutdown(Shutdown::Both);
            let _ = upstream.shutdown(Shutdown::Both);
            let _ = thread.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: &UnixListener, squid: SocketAddr, stopping: &AtomicBool, shared: &Arc<Shared>) {
    for client in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        // squid not reached: the run's connection is closed, and nothing was asked of it.
        let Ok(upstream) = TcpStream::connect(squid) else {
            tracing::warn!("the proxy link cannot reach squid on {squid}");
            continue;
        };
        let (Ok(c), Ok(u)) = (client.try_clone(), upstream.try_clone()) else {
            continue;
        };
        let shared2 = shared.clone();
        let Ok(thread) = std::thread::Builder::new()
            .name("ml2b-proxy-conn".into())
            .spawn(move || relay(client, upstream, &shared2))
        else {
            continue;
        };
        let mut open = shared.open.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|(_, _, t)| !t.is_finished());
        open.push((c, u, thread));
    }
}

/// Relays one connection both ways, and records it.
fn relay(client: UnixStream, upstream: TcpStream, shared: &Shared) {
    let (Ok(mut client_in), Ok(mut upstream_out)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || {
        let (head, sent) = copy(&mut client_in, &mut upstream_out, b"\n");
        let _ = upstream_out.shutdown(Shutdown::Write);
        (head, sent)
    });
    let (mut upstream_in, mut client_out) = (upstream, client);
    let (answer, received) = copy(&mut upstream_in, &mut client_out, b"\r\n\r\n");
    let _ = client_out.shutdown(Shutdown::Write);
    let (request, sent) = up.join().unwrap_or_default();
    let mut record = parse_request(&request);
    record.status = parse_status(&answer);
    record.allowed = !denied(&answer);
    record.sent = sent;
    record.received = received;
    shared
        .requests
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(record);
}

/// Copies `from` to `to` until either ends; returns the head (the bytes up to and with
/// `end`, at most [`HEAD`]) and the bytes copied.
fn copy(from: &mut impl Read, to: &mut impl Write, end: &[u8]) -> (Vec<u8>, u64) {
    let mut head = Vec::new();
    let mut done = false;
    let mut total = 0u64;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if !done {
            head.extend_from_slice(&buf[..n.min(HEAD - head.len())]);
            if let Some(at) = head.windows(end.len()).position(|w| w == end) {
                head.truncate(at + end.len());
                done = true;
            } else if head.len() >= HEAD {
                done = true;
            }
        }
        total += n as u64;
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    (head, total)
}

/// The method, host and port of a request line (`CONNECT host:443 HTTP/1.1`,
/// `GET http://host:8080/path HTTP/1.1`).
fn parse_request(head: &[u8]) -> ProxyRequest {
    let line = String::from_utf8_lossy(head);
    let mut words = line.split_whitespace();
    let method = words.next().unwrap_or_default().to_string();
    let target = words.next().unwrap_or_default();
    let (authority, default_port) = if method.eq_ignore_ascii_case("CONNECT") {
        (target, 443)
    } else if let Some(rest) = target.strip_prefix("http://") {
        (rest.split('/').next().unwrap_or_default(), 80)
    } else if let Some(rest) = target.strip_prefix("https://") {
        (rest.split('/').next().unwrap_or_default(), 443)
    } else {
        (target, 80)
    };
    let authority = authority.rsplit('@').next().unwrap_or_default();
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (h, p.parse().unwrap_or(0)),
        _ => (authority, default_port),
    };
    ProxyRequest {
        method: method.chars().take(32).collect(),
        host: host.trim_matches(['[', ']']).chars().take(255).collect(),
        port,
        status: 0,
        allowed: false,
        sent: 0,
        received: 0,
    }
}

/// The status of a response head (`HTTP/1.1 403 Forbidden`), 0 if none.
fn parse_status(head: &[u8]) -> u16 {
    let line = String::from_utf8_lossy(head);
    line.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Whether a response head is squid's refusal of the request.
fn denied(head: &[u8]) -> bool {
    String::from_utf8_lossy(head).lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("x-squid-error: err_access_denied")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn request_lines_name_their_host_and_port() {
        let r = parse_request(b"CONNECT huggingface.co:443 HTTP/1.1\r\n");
        assert_eq!(
            (r.method.as_str(), r.host.as_str(), r.port),
            ("CONNECT", "huggingface.co", 443)
        );
        let r = parse_request(b"GET http://files.hf.co:8080/a/b?c HTTP/1.1\r\n");
        assert_eq!(
            (r.method.as_str(), r.host.as_str(), r.port),
            ("GET", "files.hf.co", 8080)
        );
        let r = parse_request(b"GET http://github.com/x HTTP/1.1\r\n");
        assert_eq!((r.host.as_str(), r.port), ("github.com", 80));
        let r = parse_request(b"");
        assert_eq!((r.method.as_str(), r.port), ("", 80));
    }

    #[test]
    fn squids_refusal_is_told_from_an_origins_403() {
        let refusal =
            b"HTTP/1.1 403 Forbidden\r\nServer: squid/5.7\r\nX-Squid-Error: ERR_ACCESS_DENIED 0\r\n\r\n";
        assert_eq!(parse_status(refusal), 403);
        assert!(denied(refusal));
        let origin = b"HTTP/1.1 403 Forbidden\r\nServer: nginx\r\n\r\n";
        assert!(!denied(origin));
    }

    #[test]
    fn the_configuration_allows_the_domains_on_the_ports_only() {
        let a = Allowlist::new([".hf.co".to_string()], [80, 443], BTreeMap::new());
        let c = config(&a, 3999, Path::new("/p"));
        assert!(c.contains("http_port 127.0.0.1:3999\n"));
        assert!(c.contains("acl allowed_ports port 80 443\nhttp_access deny !allowed_ports\n"));
        assert!(c.contains("acl allowed_domains dstdomain .hf.co\nhttp_access allow allowed_domains\n"));
        assert!(c.ends_with("http_access deny all\n"));
        let nothing = Allowlist::new(Vec::<String>::new(), [443], BTreeMap::new());
        assert!(!config(&nothing, 1, Path::new("/p")).contains("http_access allow"));
    }
}
