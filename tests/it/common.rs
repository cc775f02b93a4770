//! Shared test fixtures: a synthetic stage, a temp workspace, a runner for
//! the real `ml2b` binary with snapshot filters, and a scripted chat-completions server on
//! 127.0.0.1 with the model that asks it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use ml2b::log::{EventBody, unit_key};
use ml2b::progress::NoProgress;
use ml2b::stages::{Planned, RunOptions, RunSummary, Stage, StageError, run_stage};
use ml2b::store::Store;
use serde::{Deserialize, Serialize};

/// Writes `content` to `path`, creating its folders.
pub fn write(path: &Path, content: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// A finished process's stderr, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The body of the synthetic `echo` stage: a pure function of its unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Echo {
    pub n: u64,
    pub label: String,
    pub value: f64,
    pub tags: Vec<String>,
    pub note: Option<String>,
}

impl EventBody for Echo {
    const STAGE: &'static str = "echo";
    const SCHEMA_VERSION: u32 = 1;
}

impl Echo {
    pub fn of(n: u64) -> Self {
        Self {
            n,
            label: format!("unit-{n}"),
            value: n as f64 * 0.25,
            tags: (0..n % 3).map(|i| format!("t{i}")).collect(),
            note: n.is_multiple_of(2).then(|| "even".to_string()),
        }
    }
}

/// A stage whose units are the numbers it was given.
pub struct EchoStage {
    pub units: Vec<u64>,
    pub sleep_us: u64,
}

impl Stage for EchoStage {
    type Body = Echo;
    type Unit = u64;

    fn plan(&self, _store: &Store) -> Result<Vec<Planned<u64>>, StageError> {
        self.units
            .iter()
            .map(|&n| {
                Ok(Planned {
                    key: unit_key(Echo::STAGE, Echo::SCHEMA_VERSION, &[], &n)?,
                    upstream: vec![],
                    label: format!("unit-{n}"),
                    unit: n,
                })
            })
            .collect()
    }

    async fn run(&self, n: u64) -> Result<Echo, StageError> {
        if self.sleep_us > 0 {
            tokio::time::sleep(std::time::Duration::from_micros(self.sleep_us)).await;
        }
        Ok(Echo::of(n))
    }
}

/// Runs the echo stage in-process.
pub fn run_echo(store: &Store, units: Vec<u64>, batch: usize) -> RunSummary {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let options = RunOptions {
        concurrency: 4,
        batch_events: batch,
        ..Default::default()
    };
    let stage = Arc::new(EchoStage { units, sleep_us: 0 });
    rt.block_on(run_stage(store, stage, &options, &NoProgress))
        .unwrap()
}

/// A temp directory with a store inside (or, with [`Workspace::env`] naming another
/// `ML2B_STORE`, a store elsewhere: on S3).
pub struct Workspace {
    pub dir: tempfile::TempDir,
    /// Variables every `ml2b` command of the workspace gets, after `ML2B_STORE`.
    pub env: Vec<(String, String)>,
}

impl Workspace {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            env: Vec::new(),
        }
    }

    /// A workspace in a new folder under `parent` (a folder every node of a cluster sees).
    pub fn new_in(parent: &Path) -> Self {
        Self {
            dir: tempfile::tempdir_in(parent).unwrap(),
            env: Vec::new(),
        }
    }

    /// A root holding only `manifests/languages.toml`: where importers write.
    pub fn empty_root() -> Self {
        let ws = Self::new();
        let manifests = ws.dir.path().join("manifests");
        std::fs::create_dir_all(&manifests).unwrap();
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/languages.toml"),
            manifests.join("languages.toml"),
        )
        .unwrap();
        ws
    }

    /// Writes `content` to the file `name` of the workspace; returns the name.
    pub fn put(&self, name: &str, content: &[u8]) -> String {
        std::fs::write(self.dir.path().join(name), content).unwrap();
        name.to_string()
    }

    pub fn store_path(&self) -> PathBuf {
        self.dir.path().join("store")
    }

    pub fn store(&self) -> Store {
        Store::open(self.store_path())
    }

    /// The `ml2b` binary with `--store` pointing here.
    pub fn ml2b(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ml2b"));
        cmd.current_dir(self.dir.path())
            .env("ML2B_STORE", self.store_path())
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env_remove("RUST_LOG");
        cmd
    }

    /// Runs `ml2b args…` and renders its outcome for a snapshot.
    pub fn run(&self, args: &[&str]) -> String {
        let out = self.ml2b().args(args).output().unwrap();
        render(&out, self.dir.path())
    }
}

/// Renders exit status, stdout and stderr, with paths, hashes and times redacted.
pub fn render(out: &Output, dir: &Path) -> String {
    let text = format!(
        "success: {}\nexit_code: {}\n----- stdout -----\n{}\n----- stderr -----\n{}",
        out.status.success(),
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    redact(&text, dir)
}

pub fn redact(text: &str, dir: &Path) -> String {
    let dir = dir.canonicalize().unwrap_or(dir.to_path_buf());
    let mut s = text.replace(&dir.display().to_string(), "[TEMP]");
    let rules = [
        (r"\b[0-9a-f]{64}\b", "[HASH]"),
        (r"\b[0-9a-f]{12}\b", "[SHORT]"),
        (
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)",
            "[TIME]",
        ),
        // What `-j` this machine was given (cores, memory available).
        (
            r"-j \d+: \d+ cores \(\d+ a run\), [^\n]* per run",
            "-j [N]: [this machine]",
        ),
    ];
    for (re, with) in rules {
        s = regex::Regex::new(re).unwrap().replace_all(&s, with).into_owned();
    }
    s
}

/// No process anywhere (a container's processes are the host's too) still carries
/// `marker` on its command line.
pub fn assert_no_process_with(marker: &str) {
    std::thread::sleep(std::time::Duration::from_millis(300));
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            assert!(!cmd.contains(marker), "a process outlived the run: {cmd}");
        }
    }
}

pub(crate) const KEY: &str = "sk-test-9f1c2e7d-never-stored";

/// What the server saw.
#[derive(Default)]
pub(crate) struct Seen {
    pub(crate) requests: Vec<(String, serde_json::Value)>,
}

/// A chat-completions body with `content` and usage (1200 prompt, 300 completion tokens).
pub(crate) fn completion(content: &str) -> String {
    serde_json::json!({
        "id": "cmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 300}
    })
    .to_string()
}

/// A chat-completions server on 127.0.0.1: records every request (with its authorization
/// header) and answers `reply(n, request)` = (status, JSON body), `n` counting from 1; a
/// 429 carries `Retry-After: 1`. A GET (the preflight's model list) gets an empty list and
/// is not recorded.
pub(crate) fn chat_server(
    reply: impl Fn(usize, &serde_json::Value) -> (u16, String) + Send + 'static,
) -> (u16, Arc<Mutex<Seen>>) {
    chat_server_on("127.0.0.1", reply)
}

/// [`chat_server`] listening on `host`, an address of this machine (the Slurm tests give
/// the one the compute nodes reach).
pub(crate) fn chat_server_on(
    host: &str,
    reply: impl Fn(usize, &serde_json::Value) -> (u16, String) + Send + 'static,
) -> (u16, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind((host, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let Some((auth, request)) = read_chat_request(&stream) else {
                // The preflight's `GET {endpoint}/models`: not a chat request.
                write_reply(&mut stream, "200 OK", "{\"object\": \"list\", \"data\": []}");
                continue;
            };
            let n = {
                let mut s = log.lock().unwrap();
                s.requests.push((auth, request.clone()));
                s.requests.len()
            };
            let (status, b) = reply(n, &request);
            let head = match status {
                200 => "200 OK".to_string(),
                429 => "429 Too Many Requests\r\nRetry-After: 1".to_string(),
                s => format!("{s} Error"),
            };
            write_reply(&mut stream, &head, &b);
        }
    });
    (port, seen)
}

/// Reads one request of a chat-completions client: its authorization header and JSON body;
/// `None` for a GET (the preflight's model list).
pub(crate) fn read_chat_request(stream: &std::net::TcpStream) -> Option<(String, serde_json::Value)> {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let (mut auth, mut length) = (String::new(), 0usize);
    let mut request_line = String::new();
    let _ = reader.read_line(&mut request_line);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
        if lower.starts_with("authorization:") {
            auth = line["authorization:".len()..].trim().to_string();
        }
    }
    if request_line.starts_with("GET ") {
        return None;
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    Some((auth, serde_json::from_slice(&body).unwrap()))
}

/// Answers `head` (the status line's code and reason, and any further header lines) with a
/// JSON `body`, then closes.
pub(crate) fn write_reply(stream: &mut std::net::TcpStream, head: &str, body: &str) {
    let reply = format!(
        "HTTP/1.1 {head}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes());
}

pub(crate) fn add_model(ws: &Workspace, port: u16) {
    add_model_at(ws, "127.0.0.1", port);
}

/// The model `fake`, served on `port` of `host`.
pub(crate) fn add_model_at(ws: &Workspace, host: &str, port: u16) {
    let path = ws.dir.path().join("manifests/models.toml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!(
        "\n[[model]]\nname = \"fake\"\nprovider = \"openai\"\nendpoint = \"http://{host}:{port}/v1\"\nmodel = \"fake-coder-2025-01-01\"\napi_key_env = \"ML2B_TEST_KEY\"\nusd_per_mtok_input = 1.0\nusd_per_mtok_output = 2.0\n"
    ));
    std::fs::write(path, text).unwrap();
}

pub(crate) fn ml2b(ws: &Workspace, args: &[&str]) -> (serde_json::Value, String) {
    let out = ws.ml2b().env("ML2B_TEST_KEY", KEY).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() || args.contains(&"translate-validate"),
        "{args:?}: {stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !stdout.contains(KEY) && !stderr.contains(KEY),
        "the key was printed"
    );
    (serde_json::from_str(&stdout).unwrap_or_default(), stderr)
}

pub(crate) fn query(ws: &Workspace, sql: &str) -> serde_json::Value {
    ml2b(ws, &["--json", "query", sql]).0
}

/// Every CSV table a report folder holds, by name (the data, without provenance).
pub fn report_tables(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut csv: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    csv.sort();
    csv
}
