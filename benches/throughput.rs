//! Benchmark of a run at API speed (run: `cargo bench --bench throughput`): generate
//! against a chat-completions server on 127.0.0.1 that answers every request after a fixed
//! latency, through the real pipeline (plan, prompts, request budget, HTTP client, request
//! cache, objects, commits), and the wall time beside the ideal.
//!
//! 1. one-shot: the bundled benchmark's 12 competitions × 14 languages × 2 formats × 3
//!    seeds (1,008 units) at 64 requests in flight. Ideal: units × latency ÷ 64. The goal:
//!    within 1.2× of it.
//! 2. aide: searches of 5 steps (12 competitions × 4 languages × 2 formats: 96) at 64 in
//!    flight, each attempt run in the sandbox (`-j`, default 2) on its validation split.
//!    The server's code fails at once (a distinct program each time, so no run is answered
//!    from the trial cache), so the sandbox side is its least; ideal on the model side:
//!    searches × 5 × latency ÷ min(64, searches), and the runs' side is printed beside it.
//!
//! ml2b's own share of the wall time is what the runner measured outside the units
//! (planning, committing: `RunSummary::overhead`), and, as an upper bound, the wall time
//! over the ideal. The server's latency: `ML2B_BENCH_LATENCY_MS` (default 500); sizes scale
//! with `ML2B_BENCH_SCALE` (seeds and languages); `ML2B_BENCH_AIDE=0` skips part 2 (it
//! needs bubblewrap and the harness's Python, `ML2B_PYTHON`).

// A test or bench binary prints what it measured, and its helpers are `pub` for its modules.
#![allow(clippy::print_stdout, clippy::print_stderr, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ml2b::config::{
    AgentSettings, BackendKind, EngineSettings, GenerateSettings, SandboxSettings, Selection,
};
use ml2b::events::Attempt;
use ml2b::events::Format;
use ml2b::log::{EventBody, StageLog};
use ml2b::pipeline::Pipeline;
use ml2b::progress::NoProgress;
use ml2b::providers::budget::LimitOverrides;
use ml2b::stages::RunSummary;
use ml2b::stages::generate::aide;
use ml2b::store::Store;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const IN_FLIGHT: usize = 64;
const LANGUAGES: [&str; 14] = [
    "en", "ar", "be", "fr", "it", "ja", "kk", "pl", "ro", "ru", "es", "tr", "uk", "zh",
];

/// The server's counts: requests answered, in flight now and at most.
#[derive(Default)]
struct Counts {
    answered: AtomicUsize,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
}

fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return; // `cargo test --benches` runs nothing here
    }
    let env = |name: &str, default: f64| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let latency = Duration::from_millis(env("ML2B_BENCH_LATENCY_MS", 500.0) as u64);
    let scale = env("ML2B_BENCH_SCALE", 1.0);
    let counts = Arc::new(Counts::default());
    let port = serve(latency, counts.clone());
    let dir =
        tempfile::tempdir_in(std::env::var("ML2B_BENCH_DIR").unwrap_or_else(|_| "/var/tmp".into())).unwrap();
    let root = bench_root(dir.path(), port);
    println!(
        "server: {} ms per answer; {IN_FLIGHT} requests in flight at most",
        latency.as_millis()
    );

    let seeds = ((3.0 * scale).round() as u32).max(1);
    let one_shot = settings(&root, &LANGUAGES, seeds, AgentSettings::OneShot);
    let (summary, wall) = generate(&dir.path().join("one-shot"), &one_shot);
    let ideal = summary.ran as f64 * latency.as_secs_f64() / IN_FLIGHT as f64;
    report("one-shot", &summary, wall, ideal, &counts);

    if std::env::var("ML2B_BENCH_AIDE").as_deref() == Ok("0") {
        return;
    }
    let languages = ((4.0 * scale).round() as usize).clamp(1, LANGUAGES.len());
    let config = aide::Config {
        steps: 5,
        time_budget_s: 1_000_000,
        ..aide::Config::AIDE
    };
    let searching = settings(&root, &LANGUAGES[..languages], 1, AgentSettings::Aide(config));
    counts.peak.store(0, Ordering::SeqCst);
    let store = dir.path().join("aide");
    let (summary, wall) = generate(&store, &searching);
    let searches = summary.ran as f64;
    let model_side = searches * 5.0 * latency.as_secs_f64() / searches.min(IN_FLIGHT as f64).max(1.0);
    let ran = run_seconds(&store);
    let jobs = searching.sandbox.jobs as f64;
    // Each search is a chain of 5 answers and 5 runs; the runs share -j sandboxes.
    let chain = 5.0 * (latency.as_secs_f64() + ran / (searches * 5.0).max(1.0));
    let ideal = model_side.max(ran / jobs).max(chain);
    println!(
        "  (ideal: the model side {model_side:.2} s; the sandbox side {:.2} s, {ran:.1} s of runs at -j {jobs}; one search's chain {chain:.2} s)",
        ran / jobs
    );
    report("aide (5 steps)", &summary, wall, ideal, &counts);
}

/// Runs generate over a store of its own in `dir`: its summary and wall time (the
/// benchmark's load, once per command, timed apart).
fn generate(dir: &Path, settings: &GenerateSettings) -> (RunSummary, f64) {
    let store = Store::open(dir);
    let pipeline = Pipeline::new(&store, &NoProgress);
    let started = Instant::now();
    pipeline.bench(&settings.selection.root).unwrap();
    println!(
        "  (loading the benchmark, once per command: {:.3} s)",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    let summary = pipeline.generate(settings).unwrap();
    let wall = started.elapsed().as_secs_f64();
    assert!(
        summary.failed.is_empty(),
        "{:?}",
        &summary.failed[..summary.failed.len().min(3)]
    );
    (summary, wall)
}

/// The seconds the searches' attempts ran in the sandbox, summed (their journal).
fn run_seconds(dir: &Path) -> f64 {
    let store = Store::open(dir);
    let log = StageLog::new(&store, Attempt::STAGE).unwrap();
    let state = log.state::<Attempt>(0).unwrap();
    state.events().map(|e| e.body.exec_seconds).sum()
}

fn report(what: &str, summary: &RunSummary, wall: f64, ideal: f64, counts: &Counts) {
    let own = (summary.overhead.plan_ms + summary.overhead.commit_ms) as f64 / 1000.0;
    let requests = summary.requests.as_ref().expect("the model was asked");
    println!(
        "{what}: {} units, {} requests ({} 429), server peak {} in flight",
        summary.ran,
        requests.requests,
        requests.throttled,
        counts.peak.load(Ordering::SeqCst)
    );
    println!(
        "  wall {wall:.2} s, ideal {ideal:.2} s: {:.3}× the ideal (goal ≤ 1.2×)",
        wall / ideal
    );
    println!(
        "  ml2b's own: planning {:.3} s + committing {:.3} s = {:.2}% of the wall (goal ≤ 5%); wall over the ideal: {:.2}%",
        summary.overhead.plan_ms as f64 / 1000.0,
        summary.overhead.commit_ms as f64 / 1000.0,
        100.0 * own / wall,
        100.0 * (wall - ideal).max(0.0) / wall
    );
}

fn settings(root: &Path, languages: &[&str], seeds: u32, agent: AgentSettings) -> GenerateSettings {
    GenerateSettings {
        selection: Selection {
            root: root.to_path_buf(),
            competitions: Vec::new(),
            languages: languages.iter().map(|l| l.to_string()).collect(),
        },
        model: "bench".into(),
        formats: vec![Format::Modular, Format::Mono],
        seeds,
        request_timeout: Duration::from_secs(120),
        max_tokens: None,
        requests: LimitOverrides {
            max_in_flight: Some(IN_FLIGHT),
            ..LimitOverrides::default()
        },
        request_shares: 1,
        // No translate-validate first: every pair runs.
        force: true,
        agent,
        sandbox: SandboxSettings::of(BackendKind::Local, 600, 8 << 30, 2),
        engine: EngineSettings::Local,
        shard: None,
        stop: None,
    }
}

/// A benchmark root of the bundled competitions whose models add `bench`, served on `port`.
fn bench_root(dir: &Path, port: u16) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("manifests")).unwrap();
    for linked in [
        "data",
        "queries",
        "manifests/competitions",
        "manifests/languages.toml",
    ] {
        std::os::unix::fs::symlink(repo.join(linked), root.join(linked)).unwrap();
    }
    let mut models = std::fs::read_to_string(repo.join("manifests/models.toml")).unwrap();
    models.push_str(&format!(
        "\n[[model]]\nname = \"bench\"\nprovider = \"openai\"\nendpoint = \"http://127.0.0.1:{port}/v1\"\nmodel = \"bench-coder-2025-01-01\"\n"
    ));
    std::fs::write(root.join("manifests/models.toml"), models).unwrap();
    root
}

/// Starts the server on a thread of its own: every request is answered after `latency`.
fn serve(latency: Duration, counts: Arc<Counts>) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = TcpListener::from_std(listener).unwrap();
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(answer(stream, latency, counts.clone()));
            }
        });
    });
    port
}

async fn answer(mut stream: TcpStream, latency: Duration, counts: Arc<Counts>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16384];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let now = counts.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    counts.peak.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(latency).await;
    let n = counts.answered.fetch_add(1, Ordering::SeqCst);
    counts.in_flight.fetch_sub(1, Ordering::SeqCst);
    // A distinct program each time (no two attempts share a trial), failing at once.
    let content = format!(
        "Plan: read the data, fit, predict.\n\n```python\n# attempt {n}\nraise SystemExit('bench')\n```\n"
    );
    let body = serde_json::json!({
        "id": format!("c{n}"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500},
    })
    .to_string();
    let reply = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
}
