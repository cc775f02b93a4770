//! The HTTP model providers: one chat completion per call, with retries, the model's
//! request budget (`crate::providers::budget`) and a record of every attempt.
//!
//! Two wire protocols: [`OpenAiClient`] speaks the OpenAI chat-completions API (OpenAI,
//! vLLM, Ollama, llama.cpp server, OpenRouter) and [`AnthropicClient`] the Anthropic
//! Messages API. Both share one transport (`transport.rs`) and one retry policy
//! (`retry.rs`):
//!
//! ```text
//!  complete(req) ──► read key from env ──► attempt 1 ──► 2xx + parsable body ──► Completion
//!                    (MissingKey)             │
//!                                             ├─ 408, 429, 5xx, connect error, timeout,
//!                                             │  truncated or malformed body
//!                                             │     └─► wait Retry-After, else base·2^k
//!                                             │         with full jitter ──► attempt k+2
//!                                             │         … until max_attempts ──► Exhausted
//!                                             └─ any other status ──► Fatal (no retry)
//! ```
//!
//! Invariants:
//! - every attempt, failed or not, is recorded in order ([`Attempt`]), and the record
//!   travels with the result, success or error;
//! - the API key is read from the environment at call time and lives only in the request
//!   header (marked sensitive). No error, attempt record, log line or `Debug` output contains
//!   it: error texts pass through a redaction of the key, since a server may echo it back;
//! - every attempt holds a permit of the model's [`Budget`](crate::providers::budget::Budget)
//!   (requests in flight, per minute, tokens per minute; shared by every client of the model
//!   in the process); the permit is held for one attempt, not across backoff sleeps, so a
//!   waiting retry does not block others; a 429 lowers the budget's in-flight limit;
//! - a body is read as it streams in and never past `max_response_bytes` (default
//!   [`MAX_RESPONSE_BYTES`], `max_response_bytes` of the model's manifest entry): a 2xx
//!   answer over the cap (by its `Content-Length`, or once that many bytes arrived) is the
//!   model's answer, too large to read: a [`Completion`] with no text and `too_large` set,
//!   not retried (the model answered), recorded like any other; an error body is read to
//!   [`ERROR_BODY_BYTES`] for its excerpt. So one request holds at most the cap in memory.

mod alias;
mod anthropic;
mod error;
mod openai;
mod retry;
mod transport;
mod wire;

#[cfg(test)]
mod limits_tests;
#[cfg(test)]
mod test_server;
#[cfg(test)]
mod tests;

pub use alias::is_floating_alias;
pub use anthropic::AnthropicClient;
pub use error::ProviderError;
pub use openai::OpenAiClient;
pub use retry::RETRY_AFTER_CAP;
pub use wire::{
    Attempt, ChatRequest, ClientConfig, Completion, ERROR_BODY_BYTES, FunctionCall, MAX_RESPONSE_BYTES,
    Message, ToolCall, cost_usd,
};

#[cfg(test)]
mod cost_tests {
    use super::cost_usd;

    #[test]
    fn cost_is_tokens_times_price_per_million() {
        assert_eq!(cost_usd(0, 0, 2.0, 8.0), 0.0);
        assert!((cost_usd(1_000_000, 500_000, 2.0, 8.0) - 6.0).abs() < 1e-12);
        assert!((cost_usd(1234, 567, 3.0, 15.0) - 0.012207).abs() < 1e-12);
    }
}
