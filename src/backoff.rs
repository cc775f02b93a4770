//! Exponential backoff with jitter: the one wait-before-retry policy of every retry loop
//! (the HTTP providers' requests, the S3 store's conditional writes).
//!
//! The ceiling of the wait after failure k (k = 0 after the first) is `base · 2^k`, at most
//! `max`; the wait is drawn under it, uniformly:
//! - [`Jitter::Full`]: in `0..=ceiling`, which spreads the retries of many concurrent
//!   clients instead of synchronising them (AWS's "full jitter");
//! - [`Jitter::Equal`]: in `ceiling/2..=ceiling`, half the wait kept, so that a retry never
//!   comes at once (AWS's "equal jitter").
//!
//! A leaf: it imports nothing of the crate. Waits are whole milliseconds.

use std::time::Duration;

use rand::Rng;

/// How much of the ceiling the wait may leave out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jitter {
    Full,
    Equal,
}

/// A backoff policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    pub base: Duration,
    pub max: Duration,
    pub jitter: Jitter,
}

impl Backoff {
    /// The ceiling of the wait after failure `k`: `base · 2^k`, at most `max`.
    pub fn ceiling(&self, k: u32) -> Duration {
        let factor = 1u32.checked_shl(k).unwrap_or(u32::MAX);
        self.base
            .checked_mul(factor)
            .unwrap_or(Duration::MAX)
            .min(self.max)
    }

    /// The wait after failure `k`, drawn under its ceiling.
    pub fn wait(&self, k: u32) -> Duration {
        let ceiling = u64::try_from(self.ceiling(k).as_millis()).unwrap_or(u64::MAX);
        let floor = match self.jitter {
            Jitter::Full => 0,
            Jitter::Equal => ceiling / 2,
        };
        Duration::from_millis(rand::rng().random_range(floor..=ceiling))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waits(b: &Backoff, k: u32) -> Vec<u128> {
        (0..200).map(|_| b.wait(k).as_millis()).collect()
    }

    #[test]
    fn full_jitter_draws_under_a_doubling_capped_ceiling() {
        let b = Backoff {
            base: Duration::from_millis(100),
            max: Duration::from_secs(1),
            jitter: Jitter::Full,
        };
        for (k, ceiling) in [(0, 100), (1, 200), (3, 800), (4, 1_000), (40, 1_000)] {
            let w = waits(&b, k);
            assert!(w.iter().all(|&w| w <= ceiling), "k={k}: {w:?}");
            assert!(w.iter().any(|&w| w < ceiling / 2), "k={k}: no jitter");
        }
    }

    #[test]
    fn equal_jitter_keeps_half_the_ceiling() {
        let b = Backoff {
            base: Duration::from_millis(50),
            max: Duration::from_secs(2),
            jitter: Jitter::Equal,
        };
        for (k, ceiling) in [(0, 50), (2, 200), (5, 1_600), (6, 2_000), (39, 2_000)] {
            let w = waits(&b, k);
            assert!(
                w.iter().all(|&w| ceiling / 2 <= w && w <= ceiling),
                "k={k}: {w:?}"
            );
            assert!(w.iter().any(|&w| w < ceiling), "k={k}: no jitter");
        }
    }
}
