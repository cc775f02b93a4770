//! A model's request budget: how many of its requests may be in flight, start per minute
//! and spend tokens per minute, shared by everything in this process that asks it.
//!
//! Providers publish three limits per model and key: requests in flight (connections),
//! requests per minute (RPM) and tokens per minute (TPM). [`RequestLimits`] holds them,
//! from `manifests/models.toml` (`max_in_flight`, `requests_per_minute`,
//! `tokens_per_minute`) or the flags, with defaults per provider kind
//! ([`RequestLimits::for_provider`]). One [`Budget`] per model ([`Budgets`]) is shared by
//! every stage and agent of a process that asks that model (one-shot generate, the AIDE and
//! ReAct searches), so together they never exceed it.
//!
//! ```text
//! acquire(estimate) ──► waits while: in flight ≥ the effective limit
//!                                    │ a 429's Retry-After has not passed
//!                                    │ the previous start was < 60 s / RPM ago
//!                                    │ the token bucket holds < min(estimate, a second's worth)
//!                   ──► Permit ──► answered(tokens used)  refunds or charges the estimate
//!                                  throttled(Retry-After) a 429: halve the limit (once per
//!                                                          epoch), pause for Retry-After
//!                                  dropped                 any other end: the slot is freed
//! ```
//!
//! Invariants:
//! - at most `limit` permits are out, where `limit` (the effective in-flight limit) is at
//!   most `max_in_flight` and at least 1;
//! - starts are paced: two starts are never closer than 60 s / RPM, so no 60-second window
//!   holds more than RPM starts;
//! - tokens are paced by a bucket holding at most TPM / 60 (a second's worth) and refilled
//!   at TPM · 59/60 a minute, so no 60-second window passes TPM (the bucket's bound:
//!   what it holds plus what a minute refills); a request takes its estimate
//!   ([`ChatRequest::token_estimate`](crate::providers::ChatRequest::token_estimate)), and the answer's usage corrects it, so the bucket
//!   may go below zero and the next request then waits for it to refill;
//! - adaptive in-flight limit (AIMD): a 429 halves the limit, but only a request that started
//!   under the current limit can lower it (a burst of 429s from one overload halves once);
//!   `limit` answers in a row without a 429 raise it by one, back up to `max_in_flight`.
//!
//! The budget is in memory: two processes (two shell commands, two Slurm tasks) asking one
//! key each have their own. [`Report`] says what it did, for the run's summary.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use crate::events::Provider;
use crate::manifest::models::Model;

/// The three limits a provider publishes for a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestLimits {
    /// Requests in flight at once (at least 1).
    pub max_in_flight: usize,
    /// Requests started per minute; `None`: no limit.
    pub requests_per_minute: Option<u32>,
    /// Tokens (input and output) per minute; `None`: no limit.
    pub tokens_per_minute: Option<u64>,
}

impl RequestLimits {
    /// The defaults of a provider kind: a hosted or served API (`openai`, `anthropic`) 32
    /// in flight, no per-minute limits (a 429 lowers the in-flight limit); the embedded
    /// model 1 (it computes one answer at a time); replayed responses 64 (they are read
    /// from a store); the others ask nothing, and their units (a file copied, a template
    /// rendered) run 8 at once.
    pub fn for_provider(provider: Provider) -> Self {
        let max_in_flight = match provider {
            Provider::Openai | Provider::Anthropic => 32,
            Provider::Local => 1,
            Provider::Replay => 64,
            Provider::Reference | Provider::Template => 8,
        };
        Self {
            max_in_flight,
            requests_per_minute: None,
            tokens_per_minute: None,
        }
    }

    /// The limits of `model`: `flags`' where set, else its manifest entry's, else its
    /// provider kind's defaults.
    pub fn of(model: &Model, flags: LimitOverrides) -> Self {
        let entry = LimitOverrides {
            max_in_flight: model.max_in_flight,
            requests_per_minute: model.requests_per_minute,
            tokens_per_minute: model.tokens_per_minute,
        };
        Self::for_provider(model.provider)
            .overridden(&entry)
            .overridden(&flags)
    }

    /// Overrides these limits with whichever of `o`'s are set.
    pub fn overridden(self, o: &LimitOverrides) -> Self {
        Self {
            max_in_flight: o.max_in_flight.unwrap_or(self.max_in_flight),
            requests_per_minute: o.requests_per_minute.or(self.requests_per_minute),
            tokens_per_minute: o.tokens_per_minute.or(self.tokens_per_minute),
        }
    }

    /// One of `shares` processes' part of these limits (each at least 1), so that
    /// together they keep them.
    pub fn shared_by(self, shares: u32) -> Self {
        let n = shares.max(1);
        Self {
            max_in_flight: (self.max_in_flight / n as usize).max(1),
            requests_per_minute: self.requests_per_minute.map(|r| (r / n).max(1)),
            tokens_per_minute: self.tokens_per_minute.map(|t| (t / u64::from(n)).max(1)),
        }
    }

    /// Why these limits cannot be applied, if they cannot.
    pub fn invalid(&self) -> Option<&'static str> {
        if self.max_in_flight == 0 {
            Some("max_in_flight must be at least 1")
        } else if self.requests_per_minute == Some(0) {
            Some("requests_per_minute must be at least 1")
        } else if self.tokens_per_minute == Some(0) {
            Some("tokens_per_minute must be at least 1")
        } else {
            None
        }
    }
}

/// Limits given on the command line or in a manifest entry; unset ones keep the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitOverrides {
    pub max_in_flight: Option<usize>,
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u64>,
}

/// What a budget did: its limits, how its effective in-flight limit moved, and how its
/// requests fared. Recorded in the run's summary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub model: String,
    pub max_in_flight: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_minute: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_minute: Option<u64>,
    /// The effective in-flight limit at its lowest and at the end.
    pub lowest_limit: usize,
    pub final_limit: usize,
    /// The most requests that were in flight at once.
    pub peak_in_flight: usize,
    /// Requests started (every attempt counts).
    pub requests: u64,
    /// Of them, answered 429.
    pub throttled: u64,
    /// Time requests spent waiting for the budget, summed over requests.
    pub waited_ms: u64,
}

/// One model's budget.
#[derive(Debug)]
pub struct Budget {
    limits: RequestLimits,
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Debug)]
struct State {
    in_flight: usize,
    /// The effective in-flight limit.
    limit: usize,
    /// Bumped whenever the limit is lowered.
    epoch: u64,
    /// Answers without a 429 since the limit last changed.
    streak: usize,
    /// When the next request may start (RPM pacing).
    next_start: Instant,
    /// The token bucket's level, and when it was last refilled.
    tokens: f64,
    refilled: Instant,
    /// No request starts before this (a 429's Retry-After).
    paused_until: Option<Instant>,
    report: Report,
}

impl Budget {
    /// A budget of `limits` for the model called `model`.
    pub fn new(model: &str, limits: RequestLimits) -> Self {
        let limits = RequestLimits {
            max_in_flight: limits.max_in_flight.max(1),
            ..limits
        };
        let now = Instant::now();
        let state = State {
            in_flight: 0,
            limit: limits.max_in_flight,
            epoch: 0,
            streak: 0,
            next_start: now,
            tokens: limits.tokens_per_minute.map_or(0.0, bucket_size),
            refilled: now,
            paused_until: None,
            report: Report {
                model: model.to_string(),
                max_in_flight: limits.max_in_flight,
                requests_per_minute: limits.requests_per_minute,
                tokens_per_minute: limits.tokens_per_minute,
                lowest_limit: limits.max_in_flight,
                final_limit: limits.max_in_flight,
                ..Report::default()
            },
        };
        Self {
            limits,
            state: Mutex::new(state),
            changed: Notify::new(),
        }
    }

    /// The limits this budget applies.
    pub fn limits(&self) -> RequestLimits {
        self.limits
    }

    /// Waits until a request estimated at `tokens` tokens may start, and takes its slot.
    pub async fn acquire(&self, tokens: u64) -> Permit<'_> {
        let asked = Instant::now();
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let wait = {
                let mut s = self.lock();
                match s.try_take(&self.limits, tokens, Instant::now()) {
                    Ok(epoch) => {
                        s.report.waited_ms += asked.elapsed().as_millis() as u64;
                        return Permit {
                            budget: self,
                            epoch,
                            tokens,
                            done: false,
                        };
                    }
                    Err(until) => until,
                }
            };
            match wait {
                Some(until) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(until.into()) => {}
                        () = &mut changed => {}
                    }
                }
                None => changed.await,
            }
        }
    }

    /// What the budget did so far.
    pub fn report(&self) -> Report {
        let s = self.lock();
        Report {
            final_limit: s.limit,
            ..s.report.clone()
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn release(&self, update: impl FnOnce(&mut State)) {
        let mut s = self.lock();
        s.in_flight -= 1;
        update(&mut s);
        drop(s);
        self.changed.notify_waiters();
    }
}

impl State {
    /// Takes a slot for a request of `tokens` at `now` (its epoch), or says until when to
    /// wait (`None`: until a slot frees).
    fn try_take(
        &mut self,
        limits: &RequestLimits,
        tokens: u64,
        now: Instant,
    ) -> Result<u64, Option<Instant>> {
        if self.in_flight >= self.limit {
            return Err(None);
        }
        let mut until = now;
        if let Some(paused) = self.paused_until {
            until = until.max(paused);
        }
        if limits.requests_per_minute.is_some() {
            until = until.max(self.next_start);
        }
        if let Some(tpm) = limits.tokens_per_minute {
            let rate = refill_rate(tpm);
            self.refill(tpm, now);
            let need = (tokens as f64).min(bucket_size(tpm));
            if self.tokens < need {
                until = until.max(now + Duration::from_secs_f64((need - self.tokens) / rate));
            }
        }
        if until > now {
            return Err(Some(until));
        }
        self.in_flight += 1;
        self.report.requests += 1;
        self.report.peak_in_flight = self.report.peak_in_flight.max(self.in_flight);
        if let Some(rpm) = limits.requests_per_minute {
            self.next_start = self.next_start.max(now) + Duration::from_secs_f64(60.0 / f64::from(rpm));
        }
        if limits.tokens_per_minute.is_some() {
            self.tokens -= tokens as f64;
        }
        Ok(self.epoch)
    }

    /// Adds what the refill of `tpm` brought since the last one, up to the bucket's size.
    fn refill(&mut self, tpm: u64, now: Instant) {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.tokens = (self.tokens + elapsed * refill_rate(tpm)).min(bucket_size(tpm));
        self.refilled = now;
    }
}

/// The token bucket's size under `tpm`: a second's worth.
fn bucket_size(tpm: u64) -> f64 {
    tpm as f64 / 60.0
}

/// Tokens per second the bucket gains under `tpm`: what it holds plus a minute's refill is
/// exactly `tpm`.
fn refill_rate(tpm: u64) -> f64 {
    tpm as f64 * 59.0 / 3600.0
}

/// A started request's slot in its budget; freed when dropped.
#[derive(Debug)]
pub struct Permit<'a> {
    budget: &'a Budget,
    epoch: u64,
    tokens: u64,
    done: bool,
}

impl Permit<'_> {
    /// The request was answered, using `used` tokens (input and output; `None`: the answer
    /// did not say, and the estimate stands).
    pub fn answered(mut self, used: Option<u64>) {
        self.done = true;
        let (estimate, max) = (self.tokens, self.budget.limits.max_in_flight);
        self.budget.release(|s| {
            if let Some(used) = used {
                s.tokens += estimate as f64 - used as f64;
            }
            s.streak += 1;
            if s.streak >= s.limit && s.limit < max {
                s.limit += 1;
                s.streak = 0;
            }
        });
    }

    /// The request was answered 429 (too many requests), asking to wait `retry_after`.
    pub fn throttled(mut self, retry_after: Option<Duration>) {
        self.done = true;
        let epoch = self.epoch;
        self.budget.release(|s| {
            s.report.throttled += 1;
            s.streak = 0;
            if s.epoch == epoch {
                s.limit = (s.limit / 2).max(1);
                s.epoch += 1;
                s.report.lowest_limit = s.report.lowest_limit.min(s.limit);
            }
            if let Some(wait) = retry_after {
                let until = Instant::now() + wait;
                s.paused_until = Some(s.paused_until.map_or(until, |p| p.max(until)));
            }
        });
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.budget.release(|_| {});
        }
    }
}

/// The budgets of one process, one per model name.
#[derive(Debug, Default)]
pub struct Budgets(Mutex<HashMap<String, Arc<Budget>>>);

impl Budgets {
    /// The budget of `model`: made with `limits` on first use; later asks share it (the
    /// first limits stand).
    pub fn of(&self, model: &str, limits: RequestLimits) -> Arc<Budget> {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let budget = all
            .entry(model.to_string())
            .or_insert_with(|| Arc::new(Budget::new(model, limits)));
        if budget.limits() != limits {
            tracing::warn!(
                model,
                "asked with other request limits than the model's budget was made with; the first stand"
            );
        }
        budget.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(n: usize) -> RequestLimits {
        RequestLimits {
            max_in_flight: n,
            requests_per_minute: None,
            tokens_per_minute: None,
        }
    }

    #[tokio::test]
    async fn permits_beyond_the_limit_wait_for_a_free_slot() {
        let budget = Budget::new("m", limits(2));
        let a = budget.acquire(0).await;
        let _b = budget.acquire(0).await;
        let third = tokio::time::timeout(Duration::from_millis(50), budget.acquire(0)).await;
        assert!(third.is_err(), "a third permit waits");
        drop(a);
        let third = tokio::time::timeout(Duration::from_millis(500), budget.acquire(0)).await;
        assert!(third.is_ok(), "and gets the freed slot");
        assert_eq!(budget.report().peak_in_flight, 2);
    }

    #[tokio::test]
    async fn a_burst_of_429s_halves_the_limit_once_and_answers_raise_it_again() {
        let budget = Budget::new("m", limits(8));
        let permits: Vec<_> = futures_join(&budget, 8).await;
        for p in permits {
            p.throttled(None);
        }
        let r = budget.report();
        assert_eq!((r.final_limit, r.lowest_limit, r.throttled), (4, 4, 8));
        // Another overload under the new limit halves it again.
        budget.acquire(0).await.throttled(None);
        assert_eq!(budget.report().final_limit, 2);
        // 2 answers at limit 2 raise it to 3, 3 more to 4, …, up to 8 and no further.
        for _ in 0..(2 + 3 + 4 + 5 + 6 + 7 + 20) {
            budget.acquire(0).await.answered(None);
        }
        let r = budget.report();
        assert_eq!((r.final_limit, r.lowest_limit), (8, 2));
    }

    async fn futures_join(budget: &Budget, n: usize) -> Vec<Permit<'_>> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(budget.acquire(0).await);
        }
        out
    }

    #[tokio::test]
    async fn retry_after_pauses_every_start() {
        let budget = Budget::new("m", limits(4));
        budget
            .acquire(0)
            .await
            .throttled(Some(Duration::from_millis(300)));
        let start = Instant::now();
        let _p = budget.acquire(0).await;
        assert!(
            start.elapsed() >= Duration::from_millis(250),
            "{:?}",
            start.elapsed()
        );
    }

    #[tokio::test]
    async fn starts_are_paced_by_the_requests_per_minute() {
        let budget = Budget::new(
            "m",
            RequestLimits {
                requests_per_minute: Some(1200), // one per 50 ms
                ..limits(100)
            },
        );
        let start = Instant::now();
        let mut held = Vec::new();
        for _ in 0..5 {
            held.push(budget.acquire(0).await);
        }
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(190),
            "5 starts take 4 intervals: {took:?}"
        );
    }

    #[tokio::test]
    async fn tokens_are_paced_and_corrected_by_the_answer() {
        let budget = Budget::new(
            "m",
            RequestLimits {
                tokens_per_minute: Some(60_000), // 1,000 held, 983 a second refilled
                ..limits(100)
            },
        );
        // The bucket starts full: 1000 tokens go at once.
        budget.acquire(1000).await.answered(Some(1000));
        // An estimate of 1000 that used 100 gives 900 back.
        let start = Instant::now();
        budget.acquire(1000).await.answered(Some(100));
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(900), "{waited:?}");
        let start = Instant::now();
        budget.acquire(800).await.answered(Some(800));
        assert!(
            start.elapsed() < Duration::from_millis(100),
            "refunded: {:?}",
            start.elapsed()
        );
    }

    #[test]
    fn flags_win_over_the_manifest_entry_which_wins_over_the_providers_default() {
        let text = "[[model]]\nname = \"m\"\nprovider = \"openai\"\nendpoint = \"http://h/v1\"\nmodel = \"x\"\nmax_in_flight = 10\nrequests_per_minute = 500\n";
        let path = std::path::Path::new("models.toml");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(path), text).unwrap();
        let models = crate::manifest::Models::load(&dir.path().join(path)).unwrap();
        let m = models.get("m").unwrap();
        let none = LimitOverrides::default();
        let flags = LimitOverrides {
            max_in_flight: Some(3),
            tokens_per_minute: Some(9_000),
            ..none
        };
        assert_eq!(
            RequestLimits::of(m, none),
            RequestLimits {
                max_in_flight: 10,
                requests_per_minute: Some(500),
                tokens_per_minute: None
            }
        );
        assert_eq!(
            RequestLimits::of(m, flags),
            RequestLimits {
                max_in_flight: 3,
                requests_per_minute: Some(500),
                tokens_per_minute: Some(9_000)
            }
        );
        let local = Model {
            provider: Provider::Local,
            max_in_flight: None,
            ..m.clone()
        };
        assert_eq!(RequestLimits::of(&local, none).max_in_flight, 1);
    }

    #[test]
    fn a_share_of_the_limits_keeps_them_together_and_is_never_zero() {
        let all = RequestLimits {
            max_in_flight: 10,
            requests_per_minute: Some(100),
            tokens_per_minute: Some(1_000),
        };
        let part = all.shared_by(4);
        assert_eq!(
            (
                part.max_in_flight,
                part.requests_per_minute,
                part.tokens_per_minute
            ),
            (2, Some(25), Some(250))
        );
        assert_eq!(all.shared_by(64).max_in_flight, 1);
        assert_eq!(all.shared_by(0), all.shared_by(1));
        assert_eq!(all.shared_by(1), all);
    }

    #[test]
    fn one_budget_per_model_in_a_process() {
        let budgets = Budgets::default();
        let a = budgets.of("m", limits(3));
        let b = budgets.of("m", limits(3));
        let c = budgets.of("n", limits(3));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
    }
}
