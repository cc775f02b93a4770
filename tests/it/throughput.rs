//! Generate at API speed against a chat-completions server on 127.0.0.1 that counts what
//! it serves: a server with room for fewer requests than asked answers 429 beyond it, the
//! run lowers its in-flight limit and still finishes every unit; two stages asking one
//! model at once share its limit.

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ml2b::config::{
    AgentSettings, BackendKind, EngineSettings, GenerateSettings, SandboxSettings, Selection,
};
use ml2b::events::Format;
use ml2b::pipeline::Pipeline;
use ml2b::progress::NoProgress;
use ml2b::providers::budget::LimitOverrides;

use crate::common::{add_model, completion, ml2b, read_chat_request, write_reply};
use crate::competitions::{TOY_MODULAR, toy};

/// What the server counted.
#[derive(Default)]
struct Counts {
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    answered: AtomicUsize,
    refused: AtomicUsize,
}

/// A chat-completions server with room for `room` requests at once: one beyond it is
/// answered 429 (no Retry-After) at once, the others after `latency` with a solution.
fn room_server(room: usize, latency: Duration) -> (u16, Arc<Counts>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let counts = Arc::new(Counts::default());
    let shared = counts.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let counts = shared.clone();
            std::thread::spawn(move || serve(stream.unwrap(), room, latency, &counts));
        }
    });
    (port, counts)
}

fn serve(mut stream: std::net::TcpStream, room: usize, latency: Duration, counts: &Counts) {
    if read_chat_request(&stream).is_none() {
        return write_reply(&mut stream, "200 OK", "{\"object\": \"list\", \"data\": []}");
    }
    let now = counts.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    counts.peak.fetch_max(now, Ordering::SeqCst);
    let (status, text) = if now > room {
        counts.refused.fetch_add(1, Ordering::SeqCst);
        (
            "429 Too Many Requests",
            r#"{"error": {"message": "Rate limit reached"}}"#.to_string(),
        )
    } else {
        std::thread::sleep(latency);
        counts.answered.fetch_add(1, Ordering::SeqCst);
        let content = format!("```python\n{TOY_MODULAR}```\n");
        ("200 OK", completion(&content))
    };
    counts.in_flight.fetch_sub(1, Ordering::SeqCst);
    write_reply(&mut stream, status, &text);
}

#[test]
fn a_server_short_of_room_answers_429_and_the_run_lowers_its_limit_and_finishes_every_unit() {
    let ws = toy();
    let (port, counts) = room_server(3, Duration::from_millis(150));
    add_model(&ws, port);
    let args = [
        "--json",
        "stage",
        "generate",
        "--model",
        "fake",
        "--force",
        "--seeds",
        "12",
        "--max-in-flight",
        "12",
    ];
    let (out, _) = ml2b(&ws, &args);
    let summary = &out["summary"];
    let planned = summary["planned"].as_u64().unwrap();
    assert!(planned >= 24, "{summary}");
    assert_eq!(summary["ran"], planned, "every unit ran: {summary}");
    assert_eq!(summary["failed"].as_array().unwrap().len(), 0, "{summary}");
    assert_eq!(
        counts.answered.load(Ordering::SeqCst) as u64,
        planned,
        "each answered once"
    );
    let requests = &summary["requests"];
    assert!(
        counts.refused.load(Ordering::SeqCst) > 0,
        "the server was overrun"
    );
    assert_eq!(
        requests["throttled"],
        counts.refused.load(Ordering::SeqCst) as u64
    );
    assert_eq!(requests["max_in_flight"], 12);
    assert!(
        requests["lowest_limit"].as_u64().unwrap() <= 3,
        "12 halved down to the server's room: {requests}"
    );
    assert_eq!(
        requests["requests"].as_u64().unwrap(),
        planned + requests["throttled"].as_u64().unwrap(),
        "every attempt counted: {requests}"
    );
}

#[test]
fn two_stages_asking_one_model_at_once_never_pass_its_limit() {
    let ws = toy();
    let (port, counts) = room_server(usize::MAX, Duration::from_millis(80));
    // A local server: no key.
    let models = ws.dir.path().join("manifests/models.toml");
    let mut text = std::fs::read_to_string(&models).unwrap();
    text.push_str(&format!(
        "\n[[model]]\nname = \"shared\"\nprovider = \"openai\"\nendpoint = \"http://127.0.0.1:{port}/v1\"\nmodel = \"fake-coder-2025-01-01\"\nmax_in_flight = 3\n"
    ));
    std::fs::write(&models, text).unwrap();
    let store = ws.store();
    let pipeline = Pipeline::new(&store, &NoProgress);
    let settings = |format: Format| GenerateSettings {
        selection: Selection {
            root: ws.dir.path().to_path_buf(),
            competitions: Vec::new(),
            languages: Vec::new(),
        },
        model: "shared".into(),
        formats: vec![format],
        seeds: 10,
        request_timeout: Duration::from_secs(30),
        max_tokens: None,
        requests: LimitOverrides::default(),
        request_shares: 1,
        force: true,
        agent: AgentSettings::OneShot,
        sandbox: SandboxSettings::of(BackendKind::Local, 60, 1 << 30, 1),
        engine: EngineSettings::Local,
        shard: None,
        stop: None,
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| pipeline.generate(&settings(Format::Modular)).unwrap());
        let b = s.spawn(|| pipeline.generate(&settings(Format::Mono)).unwrap());
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!(a.ran + b.ran, counts.answered.load(Ordering::SeqCst) as u64);
    assert!(a.ran >= 10 && b.ran >= 10, "{a:?} {b:?}");
    assert_eq!(
        counts.peak.load(Ordering::SeqCst),
        3,
        "the manifest's max_in_flight, together"
    );
    let report = a.requests.unwrap();
    assert_eq!((report.max_in_flight, report.peak_in_flight), (3, 3));
}
