//! The clients against a scripted local server (`test_server.rs`): retries, timeouts,
//! broken bodies, fatal statuses, the key's secrecy, the concurrency limit, both protocols.

use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use super::test_server::{Reply, Server};
use super::*;
use crate::providers::budget::RequestLimits;

const OK: &str = r#"{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"print(42)"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}"#;

/// The key of the key tests: unique, so that finding it anywhere is a real leak.
const KEY: &str = "sk-ml2b-test-7f3a9c1e5b2d4086";
const KEY_VAR: &str = "ML2B_PROVIDER_TEST_KEY_7F3A9C";

fn set_key() {
    static SET: Once = Once::new();
    // SAFETY: std serialises its own environment accesses, and nothing in these tests reads
    // the environment from C (the servers are IP literals: no resolver runs).
    SET.call_once(|| unsafe { std::env::set_var(KEY_VAR, KEY) });
}

fn config(server: &Server, max_attempts: u32) -> ClientConfig {
    ClientConfig {
        endpoint: format!("{}/v1", server.url),
        api_key_env: None,
        timeout: Duration::from_secs(5),
        max_attempts,
        base_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(20),
        limits: RequestLimits {
            max_in_flight: 4,
            requests_per_minute: None,
            tokens_per_minute: None,
        },
        max_response_bytes: MAX_RESPONSE_BYTES,
    }
}

fn request() -> ChatRequest {
    let message = |role: &str, content: &str| Message::text(role, content);
    ChatRequest {
        model: "gpt-4.1-2025-04-14".into(),
        messages: vec![
            message("system", "You write Python."),
            message("user", "Print 42."),
        ],
        temperature: 0.0,
        seed: Some(7),
        max_tokens: 256,
        tools: Vec::new(),
    }
}

async fn openai(script: Vec<Reply>, max_attempts: u32) -> (Server, Result<Completion, ProviderError>) {
    let server = Server::start(script).await;
    let client = OpenAiClient::new(config(&server, max_attempts)).unwrap();
    let result = client.complete(&request()).await;
    (server, result)
}

fn statuses(attempts: &[Attempt]) -> Vec<Option<u16>> {
    attempts.iter().map(|a| a.status).collect()
}

#[tokio::test]
async fn success_reads_text_usage_and_sends_the_openai_shape() {
    let (server, result) = openai(vec![Reply::json(200, OK)], 3).await;
    let c = result.unwrap();
    assert_eq!(
        (c.text.as_str(), c.input_tokens, c.output_tokens),
        ("print(42)", 12, 5)
    );
    assert_eq!(c.finish_reason.as_deref(), Some("stop"));
    assert!(!c.usage_missing);
    assert_eq!(c.response_json, OK);
    assert_eq!(statuses(&c.attempts), [Some(200)]);
    assert_eq!(c.attempts[0].error, None);
    let got = &server.received()[0];
    assert_eq!(got.path, "/v1/chat/completions");
    assert_eq!(got.header("authorization"), None, "no api_key_env, no auth");
    assert_eq!(got.header("content-type"), Some("application/json"));
    let expected = serde_json::json!({
        "model": "gpt-4.1-2025-04-14",
        "messages": [{"role": "system", "content": "You write Python."},
                     {"role": "user", "content": "Print 42."}],
        "temperature": 0.0, "max_tokens": 256, "seed": 7, "stream": false,
    });
    assert_eq!(got.body, expected);
}

/// A completion whose content is `count` chunks of 1 MiB, streamed.
fn huge_answer(status: u16, count: usize) -> Reply {
    Reply::Stream {
        status,
        head: r#"{"choices":[{"message":{"content":""#.into(),
        chunk: "x".repeat(1 << 20),
        count,
        tail: r#""},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}"#.into(),
    }
}

async fn openai_capped(script: Vec<Reply>, cap: u64) -> (Server, Result<Completion, ProviderError>) {
    let server = Server::start(script).await;
    let config = ClientConfig {
        max_response_bytes: cap,
        ..config(&server, 3)
    };
    let result = OpenAiClient::new(config).unwrap().complete(&request()).await;
    (server, result)
}

#[tokio::test]
async fn an_answer_over_the_cap_is_recorded_too_large_and_not_read_or_retried() {
    // 64 MiB streamed without a length, against a 1 MiB cap.
    let (server, result) = openai_capped(vec![huge_answer(200, 64)], 1 << 20).await;
    let c = result.unwrap();
    assert_eq!(c.too_large, Some(1 << 20));
    assert_eq!((c.text.as_str(), c.response_json.as_str()), ("", ""));
    assert!(c.usage_missing && c.finish_reason.is_none());
    assert_eq!(server.hits(), 1, "the model answered: no retry");
    assert_eq!(statuses(&c.attempts), [Some(200)]);
    let error = c.attempts[0].error.as_deref().unwrap();
    assert_eq!(error, "too large: the body passed 1048576 bytes");
    // Announced by its length: refused before a byte of the body is read.
    let big = format!(
        r#"{{"choices":[{{"message":{{"content":"{}"}}}}]}}"#,
        "x".repeat(4096)
    );
    let (_, result) = openai_capped(vec![Reply::json(200, &big)], 4096).await;
    assert_eq!(result.unwrap().too_large, Some(4096));
    // Under the cap, an answer is read as always, and says nothing of a cap.
    let (_, result) = openai_capped(vec![huge_answer(200, 2)], 3 << 20).await;
    let c = result.unwrap();
    assert_eq!((c.text.len(), c.too_large), (2 << 20, None));
    assert!(!serde_json::to_string(&c).unwrap().contains("too_large"));
}

#[tokio::test]
async fn a_huge_error_body_is_read_only_for_its_excerpt() {
    let (server, result) = openai_capped(vec![huge_answer(503, 64)], 8 << 20).await;
    let err = result.unwrap_err();
    assert_eq!(server.hits(), 3, "a 503 is retried");
    for a in err.attempts() {
        let error = a.error.as_deref().unwrap();
        assert!(
            error.starts_with("status 503: {\"choices\"") && error.len() < 1000,
            "{error}"
        );
    }
}

#[tokio::test]
async fn missing_usage_counts_zero_and_says_so() {
    let body = r#"{"choices":[{"message":{"content":"x"},"finish_reason":"length"}]}"#;
    let (_, result) = openai(vec![Reply::json(200, body)], 1).await;
    let c = result.unwrap();
    assert_eq!((c.input_tokens, c.output_tokens, c.usage_missing), (0, 0, true));
}

#[tokio::test]
async fn retry_after_seconds_is_waited_exactly() {
    let throttle = Reply::with_header(429, "retry-after", "1", r#"{"error":{"message":"slow down"}}"#);
    let start = Instant::now();
    let (server, result) = openai(vec![throttle, Reply::json(200, OK)], 3).await;
    let c = result.unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(990),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(server.hits(), 2);
    assert_eq!(statuses(&c.attempts), [Some(429), Some(200)]);
    let first = &c.attempts[0];
    assert_eq!(
        (first.number, first.retry_after_ms, first.backoff_ms),
        (1, Some(1000), Some(1000))
    );
    assert_eq!(first.error.as_deref(), Some("status 429: slow down"));
    assert_eq!(c.attempts[1].number, 2);
}

#[tokio::test]
async fn server_errors_are_retried_until_success() {
    let script = vec![
        Reply::json(500, "oops"),
        Reply::json(500, "oops"),
        Reply::json(200, OK),
    ];
    let (server, result) = openai(script, 5).await;
    let c = result.unwrap();
    assert_eq!(server.hits(), 3);
    assert_eq!(statuses(&c.attempts), [Some(500), Some(500), Some(200)]);
    assert!(
        c.attempts[..2]
            .iter()
            .all(|a| a.backoff_ms.is_some_and(|b| b <= 20))
    );
    assert_eq!(c.attempts.iter().map(|a| a.number).collect::<Vec<_>>(), [1, 2, 3]);
}

#[tokio::test]
async fn persistent_503_exhausts_max_attempts() {
    let (server, result) = openai(vec![Reply::json(503, "busy")], 4).await;
    let ProviderError::Exhausted { attempts, last } = result.unwrap_err() else {
        panic!("expected Exhausted");
    };
    assert_eq!(server.hits(), 4);
    assert_eq!(statuses(&attempts), [Some(503); 4]);
    assert_eq!(last, "status 503: busy");
    assert_eq!(attempts[3].backoff_ms, None, "no wait after the last attempt");
}

#[tokio::test]
async fn a_hang_past_the_timeout_is_retried_as_a_timeout() {
    let server = Server::start(vec![Reply::Hang(Duration::from_secs(3)), Reply::json(200, OK)]).await;
    let mut cfg = config(&server, 3);
    cfg.timeout = Duration::from_millis(300);
    let c = OpenAiClient::new(cfg)
        .unwrap()
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(server.hits(), 2);
    assert_eq!(statuses(&c.attempts), [None, Some(200)]);
    let first = &c.attempts[0];
    assert!(
        first.error.as_deref().unwrap().starts_with("timeout: "),
        "{first:?}"
    );
    assert!((250..2000).contains(&first.duration_ms), "{first:?}");
}

#[tokio::test]
async fn malformed_json_is_retried() {
    let (server, result) = openai(
        vec![Reply::json(200, "{\"choices\": [oops"), Reply::json(200, OK)],
        3,
    )
    .await;
    let c = result.unwrap();
    assert_eq!(server.hits(), 2);
    assert_eq!(statuses(&c.attempts), [Some(200), Some(200)]);
    assert!(c.attempts[0].error.as_deref().unwrap().starts_with("malformed: "));
    assert_eq!(c.text, "print(42)");
}

#[tokio::test]
async fn a_truncated_body_is_retried() {
    let cut = Reply::Truncated {
        declared: OK.len(),
        body: OK[..20].to_string(),
    };
    let (server, result) = openai(vec![cut, Reply::json(200, OK)], 3).await;
    let c = result.unwrap();
    assert_eq!(server.hits(), 2);
    assert_eq!(statuses(&c.attempts), [Some(200), Some(200)]);
    assert!(
        c.attempts[0].error.as_deref().unwrap().starts_with("body: "),
        "{:?}",
        c.attempts[0]
    );
}

#[tokio::test]
async fn bad_request_is_fatal_after_one_attempt() {
    let body = r#"{"error":{"message":"max_tokens is too large","type":"invalid_request_error"}}"#;
    let (server, result) = openai(vec![Reply::json(400, body), Reply::json(200, OK)], 5).await;
    let err = result.unwrap_err();
    assert_eq!(server.hits(), 1);
    assert_eq!(
        err.to_string(),
        "the server refused the request with HTTP 400: max_tokens is too large"
    );
    assert_eq!(statuses(err.attempts()), [Some(400)]);
}

#[tokio::test]
async fn the_key_is_sent_but_never_shown() {
    set_key();
    let echo = format!(r#"{{"error":{{"message":"Incorrect API key provided: {KEY}"}}}}"#);
    let script = vec![Reply::json(500, &echo), Reply::json(401, &echo)];
    let server = Server::start(script).await;
    let mut cfg = config(&server, 3);
    cfg.api_key_env = Some(KEY_VAR.into());
    let client = OpenAiClient::new(cfg.clone()).unwrap();
    let err = client.complete(&request()).await.unwrap_err();

    let auth: Vec<_> = server
        .received()
        .iter()
        .map(|r| r.header("authorization").map(str::to_string))
        .collect();
    let bearer = Some(format!("Bearer {KEY}"));
    assert_eq!(auth, [bearer.clone(), bearer]);
    assert!(matches!(err, ProviderError::Fatal { status: 401, .. }));
    let shown = [
        err.to_string(),
        format!("{err:?}"),
        format!("{err:#?}"),
        format!("{:?}", err.attempts()),
        serde_json::to_string(err.attempts()).unwrap(),
        format!("{client:?}"),
        format!("{cfg:?}"),
    ];
    for text in &shown {
        assert!(!text.contains(KEY), "the key leaked: {text}");
    }
    assert!(
        shown[0].contains("Incorrect API key provided: [redacted]"),
        "{}",
        shown[0]
    );
}

#[tokio::test]
async fn a_missing_key_fails_before_any_request() {
    let server = Server::start(vec![Reply::json(200, OK)]).await;
    let mut cfg = config(&server, 3);
    cfg.api_key_env = Some("ML2B_PROVIDER_TEST_UNSET_VAR".into());
    let err = OpenAiClient::new(cfg)
        .unwrap()
        .complete(&request())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the API key variable `ML2B_PROVIDER_TEST_UNSET_VAR` is not set or empty"
    );
    assert_eq!(server.hits(), 0);
}

#[tokio::test]
async fn the_concurrency_limit_is_honoured() {
    let slow = Reply::Slow(Duration::from_millis(150), Box::new(Reply::json(200, OK)));
    let server = Server::start(vec![slow]).await;
    let mut cfg = config(&server, 1);
    cfg.limits.max_in_flight = 2;
    let client = Arc::new(OpenAiClient::new(cfg).unwrap());
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..6 {
        let client = client.clone();
        tasks.spawn(async move { client.complete(&request()).await });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap().unwrap();
    }
    assert_eq!(server.hits(), 6);
    assert_eq!(server.max_in_flight(), 2);
}

#[tokio::test]
async fn anthropic_separates_the_system_prompt_and_reads_usage() {
    set_key();
    let ok = r#"{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"print("},{"type":"text","text":"42)"}],"stop_reason":"end_turn","usage":{"input_tokens":20,"output_tokens":6}}"#;
    let overloaded = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let server = Server::start(vec![Reply::json(529, overloaded), Reply::json(200, ok)]).await;
    let mut cfg = config(&server, 3);
    cfg.endpoint = server.url.clone();
    cfg.api_key_env = Some(KEY_VAR.into());
    let c = AnthropicClient::new(cfg)
        .unwrap()
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(
        (c.text.as_str(), c.input_tokens, c.output_tokens),
        ("print(42)", 20, 6)
    );
    assert_eq!(c.finish_reason.as_deref(), Some("end_turn"));
    assert_eq!(c.attempts[0].error.as_deref(), Some("status 529: Overloaded"));

    let got = &server.received()[1];
    assert_eq!(got.path, "/v1/messages");
    assert_eq!(got.header("x-api-key"), Some(KEY));
    assert_eq!(got.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(got.header("authorization"), None);
    let expected = serde_json::json!({
        "model": "gpt-4.1-2025-04-14", "max_tokens": 256,
        "system": "You write Python.",
        "messages": [{"role": "user", "content": "Print 42."}],
        "temperature": 0.0,
    });
    assert_eq!(got.body, expected);
}

#[test]
fn bad_configs_are_refused() {
    let cfg = |endpoint: &str, attempts, max_in_flight| ClientConfig {
        endpoint: endpoint.into(),
        api_key_env: None,
        timeout: Duration::from_secs(1),
        max_attempts: attempts,
        base_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(1),
        limits: RequestLimits {
            max_in_flight,
            requests_per_minute: None,
            tokens_per_minute: None,
        },
        max_response_bytes: 1 << 20,
    };
    assert!(OpenAiClient::new(cfg("http://127.0.0.1:9/v1", 1, 1)).is_ok());
    for bad in [
        cfg("http://x", 0, 1),
        cfg("http://x", 1, 0),
        cfg("not a url", 1, 1),
        ClientConfig {
            max_response_bytes: 0,
            ..cfg("http://x", 1, 1)
        },
    ] {
        let err = OpenAiClient::new(bad).unwrap_err();
        assert!(matches!(err, ProviderError::InvalidConfig { .. }), "{err}");
    }
}
