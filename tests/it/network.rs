//! `--network proxy` on both backends, against an offline internet: two HTTP servers on
//! this machine's loopback, one answering as an allowed host (`files.huggingface.co`) and
//! one as a blocked one (`github.com`), their names resolved by the proxy alone (the
//! benchmark's `manifests/network.toml` maps them; nothing leaves the machine).
//!
//! A solution downloads a file from the allowed host and uses it, tunnels to it with
//! `CONNECT` as HTTPS does, is refused the blocked host (which never sees a request), and
//! fails to connect directly, to resolve a name, or to send a UDP packet. Every request is
//! recorded with the run; the execute event counts them and the refusals, and `show` says
//! which host was refused.
//!
//! And the pretrained-model cache (`--model-cache`): read-only where the libraries look,
//! on both backends, its listing in the event and in the unit key.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use crate::common::{KEY, Workspace, chat_server, completion, query, write};
use crate::competitions::toy;

/// A server on `address` that answers every request with `body`, counting them.
pub(crate) fn server(address: &str, body: &'static str) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind((address, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let counted = counted.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (port, hits)
}

pub(crate) const WEIGHTS: &str = "pretrained-weights-0451";

/// An offline internet in the toy root `ws`: two servers (allowed, blocked) listening on
/// `address`, which the proxy resolves both names to. Their ports and hit counters.
pub(crate) fn internet_in(ws: &Workspace, address: &str) -> (u16, u16, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let bind = if address.starts_with("127.") {
        address
    } else {
        "0.0.0.0"
    };
    let (allowed, allowed_hits) = server(bind, WEIGHTS);
    let (blocked, blocked_hits) = server(bind, "a published solution");
    write(
        &ws.dir.path().join("manifests/network.toml"),
        format!(
            "[proxy]\nports = [{allowed}, {blocked}]\n[proxy.hosts]\n\"files.huggingface.co\" = \"{address}\"\n\"github.com\" = \"{address}\"\n"
        ),
    );
    (allowed, blocked, allowed_hits, blocked_hits)
}

fn internet() -> (Workspace, u16, u16, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let ws = toy();
    let (allowed, blocked, allowed_hits, blocked_hits) = internet_in(&ws, "127.0.0.1");
    (ws, allowed, blocked, allowed_hits, blocked_hits)
}

/// A MONO_PREDICT solution that tries every way out, prints what happened, and predicts
/// from the downloaded file (so it fails if the download did).
pub(crate) fn solution(allowed: u16, blocked: u16) -> String {
    format!(
        r#"import socket, urllib.request, urllib.error
import numpy as np

def attempt(name, f):
    try:
        print(name + ":", f())
    except Exception as e:
        print(name + ": failed", type(e).__name__, e)

def tunnel():
    s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
    s.sendall(b"CONNECT files.huggingface.co:{allowed} HTTP/1.1\r\nHost: files.huggingface.co:{allowed}\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    s.sendall(b"GET /weights.bin HTTP/1.1\r\nHost: files.huggingface.co\r\n\r\n")
    body = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        body += chunk
    return head.split(b"\r\n")[0].decode() + " / " + body.split(b"\r\n\r\n")[-1].decode()

def udp():
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    return u.sendto(b"x", ("8.8.8.8", 53))

def train_and_predict(data, X_val):
    weights = urllib.request.urlopen("http://files.huggingface.co:{allowed}/weights.bin", timeout=20).read().decode()
    print("weights:", weights)
    attempt("blocked", lambda: urllib.request.urlopen("http://github.com:{blocked}/solution.py", timeout=20).read())
    attempt("tunnel", tunnel)
    attempt("direct", lambda: socket.create_connection(("127.0.0.1", {allowed}), timeout=5))
    attempt("dns", lambda: socket.getaddrinfo("files.huggingface.co", 80))
    attempt("udp", udp)
    return np.full(len(X_val), 0.5 if weights == "{WEIGHTS}" else float("nan"))
"#
    )
}

/// `ml2b --json grade-file FILE --competition toy --format mono FLAGS` in the toy root.
fn grade_file(ws: &Workspace, file: &std::path::Path, flags: &[&str]) -> std::process::Output {
    ws.ml2b()
        .args(["--json", "grade-file", "--competition", "toy", "--format", "mono"])
        .args(flags)
        .arg("--root")
        .arg(ws.dir.path())
        .arg(file)
        .output()
        .unwrap()
}

/// `ml2b grade-file` of [`solution`] with `--network proxy` on `backend`.
fn through_the_proxy(backend: &str) {
    let (ws, allowed, blocked, allowed_hits, blocked_hits) = internet();
    let file = ws.dir.path().join("fetch.py");
    write(&file, solution(allowed, blocked));
    let out = grade_file(&ws, &file, &["--backend", backend, "--network", "proxy"]);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let said = report["stdout_tail"].as_str().unwrap_or_default().to_string();
    assert_eq!(report["outcome"], "ok", "{report}");
    assert!(said.contains(&format!("weights: {WEIGHTS}")), "{said}");
    assert!(
        said.contains("blocked: failed HTTPError HTTP Error 403"),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "tunnel: HTTP/1.1 200 Connection established / {WEIGHTS}"
        )),
        "{said}"
    );
    for way in [
        "direct: failed ConnectionRefusedError",
        "dns: failed gaierror",
        "udp: failed OSError",
    ] {
        assert!(said.contains(way), "{way}: {said}");
    }
    let requests = report["requests"].as_array().expect("the requests");
    let mut seen: Vec<(String, String, u64, u64, bool)> = requests
        .iter()
        .map(|r| {
            (
                r["method"].as_str().unwrap().to_string(),
                r["host"].as_str().unwrap().to_string(),
                r["port"].as_u64().unwrap(),
                r["status"].as_u64().unwrap(),
                r["allowed"].as_bool().unwrap(),
            )
        })
        .collect();
    let (a, b) = (u64::from(allowed), u64::from(blocked));
    seen.sort();
    assert_eq!(
        seen,
        [
            ("CONNECT".into(), "files.huggingface.co".into(), a, 200, true),
            ("GET".into(), "files.huggingface.co".into(), a, 200, true),
            ("GET".into(), "github.com".into(), b, 403, false),
        ],
        "{report}"
    );
    assert!(
        requests
            .iter()
            .all(|r| r["sent"].as_u64().unwrap() > 0 && r["received"].as_u64().unwrap() > 0)
    );
    assert_eq!(
        allowed_hits.load(Ordering::SeqCst),
        2,
        "the download and the tunnel's request"
    );
    assert_eq!(
        blocked_hits.load(Ordering::SeqCst),
        0,
        "the blocked host saw nothing"
    );
}

#[test]
fn the_local_sandbox_goes_out_through_the_proxy_only_and_every_request_is_recorded() {
    through_the_proxy("local");
}

#[test]
fn the_docker_sandbox_goes_out_through_the_proxy_only_and_every_request_is_recorded() {
    through_the_proxy("docker");
}

/// The pipeline: code a model wrote runs under `--network proxy`, the execute event
/// records its requests and refusals, `show` names the refused host, and the same code
/// without a network is another unit.
#[test]
fn an_execute_event_records_the_proxys_requests_and_show_names_the_refusal() {
    let (ws, allowed, blocked, _, blocked_hits) = internet();
    let code = format!("```python\n{}```", solution(allowed, blocked));
    let (port, _) = chat_server(move |_, _| (200, completion(&code)));
    crate::common::add_model(&ws, port);
    let stage = |args: &[&str]| {
        let out = ws
            .ml2b()
            .env("ML2B_TEST_KEY", KEY)
            .arg("stage")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    stage(&["generate", "--model", "fake", "--format", "mono", "--langs", "en"]);
    stage(&["execute", "--network", "proxy"]);
    stage(&["execute"]);
    let rows = query(
        &ws,
        "SELECT network, requests_total, requests_denied, outcome, event_id FROM execute ORDER BY network NULLS FIRST",
    );
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "the network is part of the unit: {rows:?}");
    assert_eq!(rows[0]["network"], Value::Null);
    assert_eq!(rows[0]["requests_total"], Value::Null);
    assert_eq!(rows[0]["outcome"], "runtime_error", "no network, no weights");
    assert_eq!(rows[1]["network"], "proxy");
    assert_eq!(
        (
            rows[1]["requests_total"].as_u64(),
            rows[1]["requests_denied"].as_u64()
        ),
        (Some(3), Some(1))
    );
    assert_eq!(rows[1]["outcome"], "ok");
    assert_eq!(blocked_hits.load(Ordering::SeqCst), 0);
    let shown = ws
        .ml2b()
        .args(["show", rows[1]["event_id"].as_str().unwrap()])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains(&format!(
            "network     proxy: 3 request(s), 1 refused (GET github.com:{blocked})"
        )),
        "{shown}"
    );
}

/// An allowlist entry that is not a domain is refused naming the file.
#[test]
fn a_bad_allowlist_is_an_input_error_naming_the_file() {
    let ws = toy();
    write(
        &ws.dir.path().join("manifests/network.toml"),
        "[proxy]\nallow = [\"github.com/x\"]\n",
    );
    let file = ws.dir.path().join("s.py");
    write(&file, crate::competitions::TOY_MONO);
    let out = grade_file(&ws, &file, &["--network", "proxy"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("manifests/network.toml: proxy.allow: `github.com/x` is not a domain name"),
        "{err}"
    );
    let out = grade_file(&ws, &file, &["--allow-domain", ".x.org"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("add --network proxy"));
}

/// A model cache with a Hugging Face hub entry (a snapshot linking to its blob) and a
/// `torch.hub` checkpoint.
fn model_cache(dir: &std::path::Path, weights: &str) {
    let hub = dir.join("huggingface/hub/models--org--tiny");
    write(&hub.join("blobs/b1"), weights);
    std::fs::create_dir_all(hub.join("snapshots/main")).unwrap();
    std::os::unix::fs::symlink("../../blobs/b1", hub.join("snapshots/main/weights.txt")).unwrap();
    write(&dir.join("torch/hub/checkpoints/tiny.pth"), "torch-weights");
}

/// What a solution finds in the cache (it fails unless the cache is where the libraries
/// look, whole, read-only and offline).
const READS_THE_CACHE: &str = r#"import os
import numpy as np

def train_and_predict(data, X_val):
    hf = open(os.environ["HF_HOME"] + "/hub/models--org--tiny/snapshots/main/weights.txt").read()
    torch = open(os.environ["TORCH_HOME"] + "/hub/checkpoints/tiny.pth").read()
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    try:
        open(os.environ["HF_HOME"] + "/new", "w")
        raise RuntimeError("wrote into the cache")
    except OSError:
        pass
    print("cache:", hf, torch)
    return np.full(len(X_val), 0.5)
"#;

/// `--model-cache`: a run on either backend reads the weights where the libraries look and
/// cannot write there; the execute event names the cache's listing, and another listing
/// is another unit.
#[test]
fn a_model_cache_is_seen_read_only_where_the_libraries_look_and_its_listing_keys_the_run() {
    let ws = toy();
    let cache = ws.dir.path().join("weights");
    model_cache(&cache, "tiny-weights");
    let file = ws.dir.path().join("reads.py");
    write(&file, READS_THE_CACHE);
    for backend in ["local", "docker"] {
        let cache = cache.to_str().unwrap();
        let out = grade_file(&ws, &file, &["--backend", backend, "--model-cache", cache]);
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(report["outcome"], "ok", "{backend}: {report}");
        assert!(
            report["stdout_tail"]
                .as_str()
                .unwrap()
                .contains("cache: tiny-weights torch-weights"),
            "{backend}: {report}"
        );
    }

    let stage = |args: &[&str]| {
        let out = ws.ml2b().arg("stage").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let with_cache = ["execute", "--model-cache", cache.to_str().unwrap()];
    stage(&[
        "generate",
        "--model",
        "reference",
        "--format",
        "mono",
        "--langs",
        "en",
    ]);
    stage(&with_cache);
    stage(&with_cache);
    let listings = || {
        query(
            &ws,
            "SELECT model_cache_blake3 AS m FROM execute ORDER BY created_at",
        )
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["m"].as_str().unwrap().to_string())
        .collect::<Vec<_>>()
    };
    assert_eq!(listings().len(), 1, "the same cache is the same unit");
    std::fs::write(cache.join("torch/hub/checkpoints/tiny.pth"), "retrained-weights").unwrap();
    stage(&with_cache);
    let seen = listings();
    assert_eq!(seen.len(), 2, "other weights are another unit: {seen:?}");
    assert_ne!(seen[0], seen[1]);
    let verify = ws.ml2b().arg("verify").output().unwrap();
    assert!(
        verify.status.success(),
        "the listings are objects: {}",
        String::from_utf8_lossy(&verify.stdout)
    );
    let id = query(
        &ws,
        "SELECT event_id FROM execute ORDER BY created_at DESC LIMIT 1",
    );
    let shown = ws
        .ml2b()
        .args(["show", id[0]["event_id"].as_str().unwrap()])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains(&format!("model cache listed in object {}", seen[1])),
        "{shown}"
    );
}

/// Whether this machine has an NVIDIA GPU (`nvidia-smi` lists one).
fn has_gpu() -> bool {
    std::process::Command::new("nvidia-smi")
        .arg("-L")
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty())
}

fn grade_with_gpus(ws: &Workspace, gpus: &str, code: &str) -> std::process::Output {
    let file = ws.dir.path().join("gpu.py");
    write(&file, code);
    grade_file(ws, &file, &["--gpus", gpus])
}

/// More GPUs than the machine has (here: any, where it has none) is an input error that
/// says how many there are, before anything runs: never a CPU run.
#[test]
fn asking_for_more_gpus_than_the_machine_has_is_refused_clearly() {
    let ws = toy();
    let out = grade_with_gpus(&ws, "1024", crate::competitions::TOY_MONO);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--gpus 1024: this machine has") && err.contains("never moved to the CPU"),
        "{err}"
    );
    if !has_gpu() {
        let out = grade_with_gpus(&ws, "all", crate::competitions::TOY_MONO);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("this machine has 0 NVIDIA GPU(s)"), "{err}");
    }
    // The benchmark's default (`manifests/sandbox.toml`) asks the same, without the flag;
    // a value that is no count is refused naming the file.
    let file = ws.dir.path().join("plain.py");
    write(&file, crate::competitions::TOY_MONO);
    let grade = |ws: &Workspace| grade_file(ws, &file, &[]);
    let manifest = ws.dir.path().join("manifests/sandbox.toml");
    write(&manifest, "gpus = 1024\n");
    let out = grade(&ws);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--gpus 1024: this machine has"), "{err}");
    write(&manifest, "gpus = \"many\"\n");
    let err = String::from_utf8_lossy(&grade(&ws).stderr).into_owned();
    assert!(
        err.contains("manifests/sandbox.toml: gpus: `many` is neither"),
        "{err}"
    );
}

/// A solution that asks the CUDA driver for its devices (through `libcuda`, no framework
/// needed) finds the GPU it was given. Skipped, saying why, where there is no GPU.
#[test]
fn a_cuda_solution_sees_the_gpu_it_was_given() {
    if !has_gpu() {
        eprintln!("skipped: no NVIDIA GPU here (`nvidia-smi -L` lists none)");
        return;
    }
    let ws = toy();
    let code = r#"import ctypes, os
import numpy as np

def train_and_predict(data, X_val):
    cuda = ctypes.CDLL("libcuda.so.1")
    assert cuda.cuInit(0) == 0, "cuInit failed"
    n = ctypes.c_int()
    assert cuda.cuDeviceGetCount(ctypes.byref(n)) == 0
    name = ctypes.create_string_buffer(128)
    cuda.cuDeviceGetName(name, 128, 0)
    print("cuda:", n.value, name.value.decode(), os.environ["CUDA_VISIBLE_DEVICES"])
    return np.full(len(X_val), 0.5)
"#;
    let out = grade_with_gpus(&ws, "1", code);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(report["outcome"], "ok", "{report}");
    assert!(
        report["stdout_tail"].as_str().unwrap().contains("cuda: 1 "),
        "{report}"
    );
}
