//! Exact n-gram multisets for BLEU (word n-grams) and chrF (character and
//! word n-grams).
//!
//! Invariant: an [`NgramCounts`] is the multiset `Counter(seq[i:i+n])` of
//! Python, stored as a list of distinct n-grams in ascending order with their
//! counts, so two multisets are intersected by one merge walk. N-grams are
//! borrowed slices of the tokenised sequence: equality is exact, no hashing.

use std::cmp::Ordering;
use std::collections::HashMap;

/// Bits per code point (`char::MAX` < 2^21).
pub const CHAR_BITS: u32 = 21;
/// Bits per interned token id.
pub const TOKEN_BITS: u32 = 32;

/// One n-gram: its symbols packed into a `u128` when they fit, else the
/// slice itself. Within one [`NgramCounts`] (one order, one symbol width)
/// every key has the same variant, so the derived order is a total order on
/// n-grams and equal keys are equal n-grams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Key<'a> {
    Packed(u128),
    Slice(&'a [u32]),
}

/// The distinct n-grams of one order with their counts, sorted.
#[derive(Debug, Clone)]
pub struct NgramCounts<'a> {
    grams: Vec<(Key<'a>, u32)>,
}

impl<'a> NgramCounts<'a> {
    /// The n-gram multisets of orders `1..=max_n` of `seq`, whose symbols
    /// are below `2^bits − 1`. Multisets are comparable only with ones made
    /// by this function with the same `max_n` and `bits`.
    pub fn all_orders(seq: &'a [u32], max_n: usize, bits: u32) -> Vec<Self> {
        if max_n as u32 * bits > 128 {
            return (1..=max_n).map(|n| Self::sliced(seq, n)).collect();
        }
        // One sort serves every order: windows of `max_n` symbols (+1, so
        // that 0 pads past the end) sort by every prefix at once, and the
        // order-n grams are the runs of equal n-symbol prefixes.
        let pack = |i: usize| {
            let window = &seq[i..seq.len().min(i + max_n)];
            let packed = window
                .iter()
                .fold(0u128, |k, &s| (k << bits) | (u128::from(s) + 1));
            packed << ((max_n - window.len()) as u32 * bits)
        };
        let mut keys: Vec<u128> = (0..seq.len()).map(pack).collect();
        keys.sort_unstable();
        let last_symbol = (1u128 << bits) - 1;
        let order = |n: usize| {
            let shift = (max_n - n) as u32 * bits;
            let prefixes = keys.iter().map(|k| k >> shift).filter(|p| p & last_symbol != 0);
            Self {
                grams: run_lengths(prefixes.map(Key::Packed)),
            }
        };
        (1..=max_n).map(order).collect()
    }

    /// The order-`n` multiset keyed by slices (any order, any symbol width).
    fn sliced(seq: &'a [u32], n: usize) -> Self {
        let mut keys: Vec<&[u32]> = if n == 0 {
            Vec::new()
        } else {
            seq.windows(n).collect()
        };
        keys.sort_unstable();
        Self {
            grams: run_lengths(keys.into_iter().map(Key::Slice)),
        }
    }

    /// The number of n-grams, counted with multiplicity.
    pub fn total(&self) -> u64 {
        self.grams.iter().map(|&(_, c)| u64::from(c)).sum()
    }

    /// Whether there is no n-gram at all.
    pub fn is_empty(&self) -> bool {
        self.grams.is_empty()
    }

    /// For each distinct n-gram of `self`, its count in `other` (0 if absent).
    pub fn counts_in(&self, other: &NgramCounts<'_>) -> Vec<u32> {
        let mut out = vec![0; self.grams.len()];
        let (mut i, mut j) = (0, 0);
        while i < self.grams.len() && j < other.grams.len() {
            match self.grams[i].0.cmp(&other.grams[j].0) {
                Ordering::Less => i += 1,
                Ordering::Greater => j += 1,
                Ordering::Equal => {
                    out[i] = other.grams[j].1;
                    i += 1;
                    j += 1;
                }
            }
        }
        out
    }

    /// `Σ min(count_self(g), cap(g))` where `caps` is aligned with `self`.
    pub fn clipped(&self, caps: &[u32]) -> u64 {
        let pairs = self.grams.iter().zip(caps);
        pairs.map(|(&(_, c), &cap)| u64::from(c.min(cap))).sum()
    }

    /// The clipped matches of `self` against one other multiset.
    pub fn matches(&self, other: &NgramCounts<'_>) -> u64 {
        self.clipped(&self.counts_in(other))
    }
}

/// Distinct keys of a sorted sequence with their multiplicities.
fn run_lengths<'a>(sorted: impl Iterator<Item = Key<'a>>) -> Vec<(Key<'a>, u32)> {
    let mut grams: Vec<(Key<'a>, u32)> = Vec::new();
    for key in sorted {
        match grams.last_mut() {
            Some((last, count)) if *last == key => *count += 1,
            _ => grams.push((key, 1)),
        }
    }
    grams
}

/// Code points of `chars` as symbols.
pub fn char_symbols(chars: impl Iterator<Item = char>) -> Vec<u32> {
    chars.map(u32::from).collect()
}

/// Gives each distinct token a small id, shared by the sequences of one
/// segment (hypothesis and references), so that ids compare like tokens.
#[derive(Debug, Default)]
pub struct Interner<'s> {
    ids: HashMap<&'s str, u32>,
}

impl<'s> Interner<'s> {
    /// The ids of `tokens`.
    pub fn ids<I: IntoIterator<Item = &'s str>>(&mut self, tokens: I) -> Vec<u32> {
        tokens.into_iter().map(|t| self.id(t)).collect()
    }

    fn id(&mut self, token: &'s str) -> u32 {
        let next = u32::try_from(self.ids.len())
            .ok()
            .filter(|&id| id < u32::MAX)
            .expect("fewer than 2^32 − 1 distinct tokens in a segment");
        *self.ids.entry(token).or_insert(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_clips_packed_or_sliced() {
        let mut interner = Interner::default();
        let hyp = interner.ids(["a", "b", "a", "b", "a"]);
        let reference = interner.ids(["b", "a", "b", "c"]);
        // 100 bits per symbol forces the slice representation for bigrams.
        for bits in [TOKEN_BITS, 100] {
            let h = NgramCounts::all_orders(&hyp, 3, bits);
            let r = NgramCounts::all_orders(&reference, 3, bits);
            assert_eq!([h[0].total(), h[1].total(), h[2].total()], [5, 4, 3]);
            // unigrams: a×3 b×2 vs a b×2 c; bigrams: ab×2 ba×2 vs ba ab bc
            assert_eq!([h[0].matches(&r[0]), h[1].matches(&r[1])], [3, 2]);
            // trigrams: aba×2 bab vs bab abc
            assert_eq!(h[2].matches(&r[2]), 1);
        }
        assert!(NgramCounts::all_orders(&hyp[..1], 2, TOKEN_BITS)[1].is_empty());
    }
}
