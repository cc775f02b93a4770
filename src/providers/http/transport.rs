//! The HTTP side both protocols share: the reqwest client, the model's request budget
//! ([`Budget`]: a permit per attempt), the key, and the attempt loop that applies
//! `retry.rs` and records every [`Attempt`].
//!
//! A protocol hands over its URL path, extra headers, where the key goes, the serialised
//! body and a parser for a 2xx body; a parser error counts as a malformed response and is
//! retried like a 5xx. Bodies are read chunk by chunk up to the cap ([`read_capped`]).

use std::error::Error as _;
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use std::sync::Arc;

use super::retry::{self, Verdict};
use super::{Attempt, ClientConfig, Completion, ERROR_BODY_BYTES, ProviderError};
use crate::providers::budget::Budget;

/// What a protocol's parser reads from a successful body.
pub(super) struct Parsed {
    pub text: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub finish_reason: Option<String>,
    pub usage_missing: bool,
    pub tool_calls: Vec<super::ToolCall>,
}

/// Reads a 2xx body; `Err` says what was wrong with it.
pub(super) type Parser = fn(&[u8]) -> Result<Parsed, String>;

/// Where the key goes: header `name` with value `prefix` + key.
pub(super) struct Auth {
    pub name: HeaderName,
    pub prefix: &'static str,
}

/// How one attempt ended.
enum Outcome {
    Success {
        status: u16,
        parsed: Parsed,
        body: String,
    },
    Retry {
        status: Option<u16>,
        error: String,
        retry_after: Option<Duration>,
    },
    Fatal {
        status: u16,
        message: String,
    },
    /// A 2xx answer whose body passed the cap.
    TooLarge {
        status: u16,
        limit: u64,
    },
}

/// Longest server text kept in an error.
const EXCERPT_CHARS: usize = 500;

#[derive(Debug)]
pub(super) struct Transport {
    http: reqwest::Client,
    budget: Arc<Budget>,
    config: ClientConfig,
    url: String,
}

impl Transport {
    /// Checks the configuration and builds the client for `{endpoint}/{path}`, drawing on
    /// `budget` (`None`: a budget of its own, of `config.limits`).
    pub(super) fn new(
        config: ClientConfig,
        path: &str,
        budget: Option<Arc<Budget>>,
    ) -> Result<Self, ProviderError> {
        let invalid = |message: String| ProviderError::InvalidConfig { message };
        if config.max_attempts == 0 || config.max_response_bytes == 0 {
            return Err(invalid(
                "max_attempts and max_response_bytes must be at least 1".into(),
            ));
        }
        if let Some(why) = config.limits.invalid() {
            return Err(invalid(why.into()));
        }
        let url = format!("{}/{path}", config.endpoint.trim_end_matches('/'));
        reqwest::Url::parse(&url).map_err(|e| invalid(format!("endpoint `{}`: {e}", config.endpoint)))?;
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .user_agent(concat!("ml2b/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(ProviderError::Client)?;
        let budget = budget.unwrap_or_else(|| Arc::new(Budget::new(&config.endpoint, config.limits)));
        Ok(Self {
            http,
            budget,
            config,
            url,
        })
    }

    /// Sends `body` until it succeeds, fails fatally or runs out of attempts.
    /// `tokens` is the request's estimate against a tokens-per-minute limit.
    pub(super) async fn complete(
        &self,
        headers: HeaderMap,
        auth: Auth,
        body: Vec<u8>,
        parse: Parser,
        tokens: u64,
    ) -> Result<Completion, ProviderError> {
        let key = self.key()?;
        let headers = self.with_key(headers, auth, key.as_deref())?;
        let mut attempts = Vec::new();
        for number in 1..=self.config.max_attempts {
            let (outcome, took) = self.attempt(&headers, &body, parse, tokens).await;
            let mut attempt = Attempt {
                number,
                duration_ms: millis(took),
                status: None,
                error: None,
                retry_after_ms: None,
                backoff_ms: None,
            };
            match outcome {
                Outcome::Success { status, parsed, body } => {
                    attempt.status = Some(status);
                    attempts.push(attempt);
                    return Ok(self.completion(parsed, body, attempts));
                }
                Outcome::TooLarge { status, limit } => {
                    tracing::warn!(url = %self.url, limit, "the answer is over the cap; not read");
                    attempt.status = Some(status);
                    attempt.error = Some(format!("too large: the body passed {limit} bytes"));
                    attempts.push(attempt);
                    return Ok(too_large(limit, attempts));
                }
                Outcome::Fatal { status, message } => {
                    let message = redact(message, key.as_deref());
                    tracing::warn!(url = %self.url, status, %message, "request refused");
                    attempt.status = Some(status);
                    attempt.error = Some(format!("status {status}: {message}"));
                    attempts.push(attempt);
                    return Err(ProviderError::Fatal {
                        status,
                        message,
                        attempts,
                    });
                }
                Outcome::Retry {
                    status,
                    error,
                    retry_after,
                } => {
                    attempt.status = status;
                    attempt.error = Some(redact(error, key.as_deref()));
                    attempt.retry_after_ms = retry_after.map(millis);
                    if number < self.config.max_attempts {
                        let backoff = retry::wait(&self.config, number - 1, retry_after);
                        attempt.backoff_ms = Some(millis(backoff));
                        tracing::info!(url = %self.url, ?attempt, "retrying");
                        attempts.push(attempt);
                        tokio::time::sleep(backoff).await;
                    } else {
                        attempts.push(attempt);
                    }
                }
            }
        }
        let last = attempts.last().and_then(|a| a.error.clone()).unwrap_or_default();
        tracing::warn!(url = %self.url, attempts = attempts.len(), %last, "giving up");
        Err(ProviderError::Exhausted { attempts, last })
    }

    /// Adds the key (marked sensitive, so `Debug` of the headers hides it) and the type.
    fn with_key(
        &self,
        mut headers: HeaderMap,
        auth: Auth,
        key: Option<&str>,
    ) -> Result<HeaderMap, ProviderError> {
        if let Some(key) = key {
            let var = self.config.api_key_env.clone().unwrap_or_default();
            let mut value = HeaderValue::try_from(format!("{}{key}", auth.prefix))
                .map_err(|_| ProviderError::InvalidKey { var })?;
            value.set_sensitive(true);
            headers.insert(auth.name, value);
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Ok(headers)
    }

    /// The key, read now so that a rotated key is picked up; `None` without `api_key_env`.
    fn key(&self) -> Result<Option<String>, ProviderError> {
        let Some(var) = &self.config.api_key_env else {
            return Ok(None);
        };
        match std::env::var(var) {
            Ok(key) if !key.trim().is_empty() => Ok(Some(key)),
            Ok(_) | Err(std::env::VarError::NotPresent) => {
                Err(ProviderError::MissingKey { var: var.clone() })
            }
            Err(std::env::VarError::NotUnicode(_)) => Err(ProviderError::InvalidKey { var: var.clone() }),
        }
    }

    /// One attempt, under a permit of the budget that its outcome updates (an answer's
    /// usage, a 429's Retry-After); the time excludes waiting for the permit.
    async fn attempt(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        parse: Parser,
        tokens: u64,
    ) -> (Outcome, Duration) {
        let permit = self.budget.acquire(tokens).await;
        let start = Instant::now();
        let outcome = self.send(headers, body, parse).await;
        let took = start.elapsed();
        match &outcome {
            Outcome::Success { parsed, .. } => {
                let used = parsed.input_tokens + parsed.output_tokens;
                permit.answered((!parsed.usage_missing).then_some(used));
            }
            Outcome::Retry {
                status: Some(429),
                retry_after,
                ..
            } => permit.throttled(*retry_after),
            _ => drop(permit),
        }
        (outcome, took)
    }

    /// The budget this client draws on.
    pub(super) fn budget(&self) -> &Arc<Budget> {
        &self.budget
    }

    async fn send(&self, headers: &HeaderMap, body: &[u8], parse: Parser) -> Outcome {
        let request = self
            .http
            .post(&self.url)
            .headers(headers.clone())
            .body(body.to_vec());
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => return Outcome::network(None, &e, None),
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry::parse_retry_after(v, SystemTime::now()));
        let verdict = retry::verdict(status);
        let limit = match verdict {
            Verdict::Success => self.config.max_response_bytes,
            _ => ERROR_BODY_BYTES.min(self.config.max_response_bytes),
        };
        let bytes = match read_capped(response, limit).await {
            Ok(Body::Whole(bytes)) => bytes,
            Ok(Body::Over(_)) if verdict == Verdict::Success => return Outcome::TooLarge { status, limit },
            // An error body's start is all its excerpt needs.
            Ok(Body::Over(start)) => start,
            Err(e) => return Outcome::network(Some(status), &e, retry_after),
        };
        match verdict {
            Verdict::Success => match parse(&bytes) {
                Ok(parsed) => Outcome::Success {
                    status,
                    parsed,
                    body: String::from_utf8_lossy(&bytes).into_owned(),
                },
                Err(why) => Outcome::Retry {
                    status: Some(status),
                    error: format!("malformed: {why}"),
                    retry_after: None,
                },
            },
            Verdict::Retry => Outcome::Retry {
                status: Some(status),
                error: format!("status {status}: {}", excerpt(&bytes)),
                retry_after,
            },
            Verdict::Fatal => Outcome::Fatal {
                status,
                message: excerpt(&bytes),
            },
        }
    }

    fn completion(&self, parsed: Parsed, body: String, attempts: Vec<Attempt>) -> Completion {
        if parsed.usage_missing {
            tracing::warn!(url = %self.url, "the response reports no token usage; counting 0");
        }
        Completion {
            text: parsed.text,
            input_tokens: parsed.input_tokens,
            output_tokens: parsed.output_tokens,
            finish_reason: parsed.finish_reason,
            usage_missing: parsed.usage_missing,
            response_json: body,
            tool_calls: parsed.tool_calls,
            attempts,
            too_large: None,
        }
    }
}

/// The answer of a model whose body passed `limit` bytes: no text, no usage.
fn too_large(limit: u64, attempts: Vec<Attempt>) -> Completion {
    Completion {
        text: String::new(),
        input_tokens: 0,
        output_tokens: 0,
        finish_reason: None,
        usage_missing: true,
        response_json: String::new(),
        tool_calls: Vec::new(),
        attempts,
        too_large: Some(limit),
    }
}

/// A body as far as it was read.
enum Body {
    Whole(Vec<u8>),
    /// Past the limit: its first `limit` bytes (none when `Content-Length` said so first).
    Over(Vec<u8>),
}

/// Reads `response`'s body chunk by chunk, stopping once it passes `limit` bytes (the
/// connection is then dropped, unread).
async fn read_capped(mut response: reqwest::Response, limit: u64) -> Result<Body, reqwest::Error> {
    if response.content_length().is_some_and(|n| n > limit) {
        return Ok(Body::Over(Vec::new()));
    }
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if chunk.len() > limit - body.len() {
            let room = limit - body.len();
            body.extend_from_slice(&chunk[..room]);
            return Ok(Body::Over(body));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Body::Whole(body))
}

impl Outcome {
    /// A failure without a usable response: `kind: message: cause: …`.
    fn network(status: Option<u16>, e: &reqwest::Error, retry_after: Option<Duration>) -> Self {
        let kind = if e.is_timeout() {
            "timeout"
        } else if e.is_connect() {
            "connect"
        } else if e.is_body() || e.is_decode() {
            "body"
        } else {
            "request"
        };
        let mut error = format!("{kind}: {e}");
        let mut cause = e.source();
        while let Some(c) = cause {
            error.push_str(&format!(": {c}"));
            cause = c.source();
        }
        Self::Retry {
            status,
            error,
            retry_after,
        }
    }
}

/// The server's `error.message` (both protocols use that shape), else the start of the body.
fn excerpt(body: &[u8]) -> String {
    let json: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let message = json.as_ref().and_then(|v| v["error"]["message"].as_str());
    let text = match message {
        Some(m) => m.to_string(),
        None => String::from_utf8_lossy(body).trim().to_string(),
    };
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Servers may echo a key back (in an error about a bad key, say); it goes no further.
fn redact(text: String, key: Option<&str>) -> String {
    match key {
        Some(key) if text.contains(key) => text.replace(key, "[redacted]"),
        _ => text,
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
