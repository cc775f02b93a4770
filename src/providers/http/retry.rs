//! The retry policy: which statuses are retried and how long to wait before the next try.
//!
//! Retried: 408, 429, every 5xx (Anthropic's 529 "overloaded" included), and failures with
//! no usable response (connect errors, timeouts, truncated or malformed bodies). Any other
//! non-2xx status is fatal at once: a bad request or a bad key does not improve by asking
//! again. The wait before attempt k+2 (k = 0 after the first failure) is
//!
//! - the server's `Retry-After` (delta-seconds or an HTTP-date), exactly, capped at
//!   [`RETRY_AFTER_CAP`] so that a confused server cannot park a run for hours;
//! - otherwise "full jitter" ([`crate::backoff`]): uniform in
//!   `0..=min(max_backoff, base_backoff·2^k)`, which spreads the retries of many concurrent
//!   requests instead of synchronising them.

use std::time::{Duration, SystemTime};

use super::ClientConfig;
use crate::backoff::{Backoff, Jitter};

/// The longest `Retry-After` honoured; a longer one is waited for this long.
pub const RETRY_AFTER_CAP: Duration = Duration::from_secs(120);

/// What a response status means for the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Success,
    Retry,
    Fatal,
}

pub(super) fn verdict(status: u16) -> Verdict {
    match status {
        200..=299 => Verdict::Success,
        408 | 429 | 500..=599 => Verdict::Retry,
        _ => Verdict::Fatal,
    }
}

/// The wait after the failure of attempt `k + 1`.
pub(super) fn wait(config: &ClientConfig, k: u32, retry_after: Option<Duration>) -> Duration {
    match retry_after {
        Some(asked) => asked.min(RETRY_AFTER_CAP),
        None => jittered(config, k),
    }
}

fn jittered(config: &ClientConfig, k: u32) -> Duration {
    Backoff {
        base: config.base_backoff,
        max: config.max_backoff,
        jitter: Jitter::Full,
    }
    .wait(k)
}

/// Parses a `Retry-After` value: delta-seconds, or an HTTP-date (a date already past means
/// no wait). `None` when it is neither.
pub(super) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let at = SystemTime::from(date);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(base_ms: u64, max_ms: u64) -> ClientConfig {
        ClientConfig {
            endpoint: "http://127.0.0.1:1".into(),
            api_key_env: None,
            timeout: Duration::from_secs(1),
            max_attempts: 3,
            base_backoff: Duration::from_millis(base_ms),
            max_backoff: Duration::from_millis(max_ms),
            limits: crate::providers::budget::RequestLimits::for_provider(crate::events::Provider::Openai),
            max_response_bytes: super::super::MAX_RESPONSE_BYTES,
        }
    }

    #[test]
    fn statuses_split_into_success_retry_and_fatal() {
        for s in [200, 201] {
            assert_eq!(verdict(s), Verdict::Success);
        }
        for s in [408, 429, 500, 502, 503, 529] {
            assert_eq!(verdict(s), Verdict::Retry);
        }
        for s in [301, 400, 401, 403, 404, 422] {
            assert_eq!(verdict(s), Verdict::Fatal);
        }
    }

    #[test]
    fn backoff_is_full_jitter_under_a_doubling_capped_ceiling() {
        let c = config(100, 1_000);
        for (k, ceiling) in [(0, 100), (1, 200), (3, 800), (4, 1_000), (40, 1_000)] {
            let waits: Vec<u128> = (0..200).map(|_| wait(&c, k, None).as_millis()).collect();
            assert!(waits.iter().all(|&w| w <= ceiling), "k={k}: {waits:?}");
            assert!(waits.iter().any(|&w| w < ceiling / 2), "k={k}: no jitter");
        }
    }

    #[test]
    fn retry_after_is_waited_exactly_up_to_the_cap() {
        let c = config(100, 1_000);
        let asked = Some(Duration::from_secs(7));
        assert_eq!(wait(&c, 0, asked), Duration::from_secs(7));
        assert_eq!(wait(&c, 0, Some(Duration::from_secs(10_000))), RETRY_AFTER_CAP);
    }

    #[test]
    fn retry_after_parses_seconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470); // 07:27:50
        let parse = |v| parse_retry_after(v, now);
        assert_eq!(parse("1"), Some(Duration::from_secs(1)));
        assert_eq!(parse(" 120 "), Some(Duration::from_secs(120)));
        let date = "Wed, 21 Oct 2015 07:28:00 GMT";
        assert_eq!(parse(date), Some(Duration::from_secs(10)));
        assert_eq!(parse("Wed, 21 Oct 2015 07:00:00 GMT"), Some(Duration::ZERO));
        assert_eq!(parse("soon"), None);
        assert_eq!(parse("-5"), None);
    }
}
