//! The request budget against a scripted server that counts (`test_server.rs`): requests
//! in flight, starts per minute and tokens per minute are each honoured as the server sees
//! them; a 429, with or without `Retry-After`, lowers the in-flight limit and every request
//! is still answered; two clients of one model share its budget.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::test_server::{Reply, Server};
use super::*;
use crate::providers::budget::{Budget, RequestLimits};

/// An answer using 150 + 100 tokens.
const ANSWER: &str = r#"{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"print(42)"},"finish_reason":"stop"}],"usage":{"prompt_tokens":150,"completion_tokens":100,"total_tokens":250}}"#;

fn limits(max_in_flight: usize) -> RequestLimits {
    RequestLimits {
        max_in_flight,
        requests_per_minute: None,
        tokens_per_minute: None,
    }
}

fn config(server: &Server, limits: RequestLimits) -> ClientConfig {
    ClientConfig {
        endpoint: format!("{}/v1", server.url),
        api_key_env: None,
        timeout: Duration::from_secs(10),
        max_attempts: 30,
        base_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(100),
        limits,
        max_response_bytes: MAX_RESPONSE_BYTES,
    }
}

/// A request whose estimate is 7 (prompt) + 256 (max_tokens) = 263 tokens.
fn request() -> ChatRequest {
    ChatRequest {
        model: "m".into(),
        messages: vec![
            Message::text("system", "You write Python."),
            Message::text("user", "Print 42."),
        ],
        temperature: 0.0,
        seed: None,
        max_tokens: 256,
        tools: Vec::new(),
    }
}

/// Sends `n` requests at once through `clients` (round robin); every one must be answered.
async fn send_all(clients: &[Arc<OpenAiClient>], n: usize) {
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        let client = clients[i % clients.len()].clone();
        tasks.spawn(async move { client.complete(&request()).await });
    }
    while let Some(done) = tasks.join_next().await {
        let completion = done.unwrap().expect("every request is answered in the end");
        assert_eq!(completion.text, "print(42)");
    }
}

fn slow(ms: u64) -> Reply {
    Reply::Slow(Duration::from_millis(ms), Box::new(Reply::json(200, ANSWER)))
}

/// A server with room for `room` requests at once, answering 429 beyond it.
fn room(room: usize, retry_after: Option<&'static str>, ms: u64) -> Reply {
    Reply::Room {
        room,
        retry_after,
        then: Box::new(slow(ms)),
    }
}

#[tokio::test]
async fn requests_in_flight_never_pass_the_limit() {
    let server = Server::start(vec![slow(100)]).await;
    let client = Arc::new(OpenAiClient::new(config(&server, limits(3))).unwrap());
    send_all(&[client], 12).await;
    assert_eq!(server.hits(), 12);
    assert_eq!(server.max_in_flight(), 3, "the limit is reached and never passed");
}

#[tokio::test]
async fn starts_per_minute_are_paced_as_the_server_sees_them() {
    let server = Server::start(vec![slow(10)]).await;
    let rpm = RequestLimits {
        requests_per_minute: Some(600), // one start per 100 ms
        ..limits(16)
    };
    let client = Arc::new(OpenAiClient::new(config(&server, rpm)).unwrap());
    send_all(&[client], 8).await;
    let arrivals: Vec<Instant> = server.arrivals().into_iter().map(|(t, _)| t).collect();
    assert_eq!(arrivals.len(), 8);
    for pair in arrivals.windows(2) {
        // 100 ms apart at the client; the network may shift an arrival by a few ms.
        let gap = pair[1] - pair[0];
        assert!(gap >= Duration::from_millis(80), "two starts {gap:?} apart");
    }
    // So no window of a second holds more than 10: 600 a minute, as asked.
    assert!(arrivals[7] - arrivals[0] >= Duration::from_millis(650));
}

#[tokio::test]
async fn tokens_per_minute_are_paced_by_the_answers_usage() {
    let server = Server::start(vec![slow(10)]).await;
    let tpm = RequestLimits {
        tokens_per_minute: Some(60_000), // a second's worth (1,000) at once
        ..limits(16)
    };
    let client = Arc::new(OpenAiClient::new(config(&server, tpm)).unwrap());
    let started = Instant::now();
    send_all(&[client], 12).await;
    let arrivals: Vec<Instant> = server.arrivals().into_iter().map(|(t, _)| t).collect();
    // The server counts 250 tokens per answer: 3,000 in all. The bucket holds 1,000 and
    // refills at 60,000 · 59/60 per minute (983 a second), so that no minute passes 60,000;
    // over any window of W seconds at most 1,000 + 983·W, give or take one request.
    let (per_request, held, rate) = (250.0, 1_000.0, 60_000.0 * 59.0 / 3_600.0);
    for (i, &from) in arrivals.iter().enumerate() {
        for (j, &to) in arrivals.iter().enumerate().skip(i) {
            let window = (to - from).as_secs_f64();
            let tokens = (j - i + 1) as f64 * per_request;
            assert!(
                tokens <= held + rate * window + per_request,
                "{tokens} tokens in {window:.3} s"
            );
        }
    }
    let took = started.elapsed().as_secs_f64();
    assert!(took >= (3_000.0 - held - per_request) / rate, "{took:.3} s");
}

#[tokio::test]
async fn a_429_without_retry_after_halves_the_in_flight_limit_and_every_request_is_answered() {
    let server = Server::start(vec![room(4, None, 100)]).await;
    let client = Arc::new(OpenAiClient::new(config(&server, limits(16))).unwrap());
    let budget = client.budget().clone();
    send_all(&[client], 40).await;
    let report = budget.report();
    assert!(report.throttled > 0, "{report:?}");
    assert!(
        report.lowest_limit <= 4,
        "16 halved to the server's room or below: {report:?}"
    );
    let answered = server.arrivals().iter().filter(|(_, s)| *s == 200).count();
    assert_eq!(answered, 40, "every request answered once");
    assert_eq!(report.requests, server.hits() as u64, "every attempt is counted");
}

#[tokio::test]
async fn a_429_with_retry_after_pauses_every_start_for_that_long() {
    let server = Server::start(vec![room(2, Some("1"), 50)]).await;
    let client = Arc::new(OpenAiClient::new(config(&server, limits(8))).unwrap());
    let budget = client.budget().clone();
    send_all(&[client], 10).await;
    let arrivals = server.arrivals();
    let first_429 = arrivals
        .iter()
        .find(|(_, s)| *s == 429)
        .expect("the server was overrun")
        .0;
    // Requests sent before the client read the 429 may still arrive just after it; then
    // nothing for the second the server asked.
    let early = arrivals
        .iter()
        .filter(|(t, _)| *t > first_429 + Duration::from_millis(100))
        .filter(|(t, _)| *t < first_429 + Duration::from_millis(900))
        .count();
    assert_eq!(early, 0, "{arrivals:?}");
    assert!(budget.report().lowest_limit < 8);
    assert_eq!(arrivals.iter().filter(|(_, s)| *s == 200).count(), 10);
}

#[tokio::test]
async fn two_clients_of_one_model_share_its_budget() {
    let server = Server::start(vec![slow(60)]).await;
    let budget = Arc::new(Budget::new("m", limits(3)));
    let client = |server: &Server| {
        let cfg = config(server, limits(3));
        Arc::new(OpenAiClient::with_budget(cfg, Some(budget.clone())).unwrap())
    };
    // Two stages' clients (say, one-shot generate and an AIDE search) asking at once.
    send_all(&[client(&server), client(&server)], 20).await;
    assert_eq!(server.hits(), 20);
    assert_eq!(
        server.max_in_flight(),
        3,
        "together, never more than the model's limit"
    );
    assert_eq!(budget.report().peak_in_flight, 3);
}
