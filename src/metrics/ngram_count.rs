//! Exact n-gram multisets for BLEU (word n-grams) and chrF (character and
//! word n-grams).
//!
//! Invariant: [`Ngrams`] answers, for every order n ≤ `max_n`, what BLEU and
//! chrF ask of Python's `Counter(seq[i:i+n])`: its size and its clipped
//! intersection with other such multisets, exactly. When `max_n` symbols fit
//! in 128 bits, each window of `max_n` symbols is packed into a `u128` and
//! the windows are sorted once: that sorts them by every prefix, so the
//! order-n grams are the runs of equal n-symbol prefixes and two multisets
//! intersect in one merge walk. Wider n-grams are counted as slices in hash
//! maps. Either way n-grams are compared symbol for symbol, never by a hash.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::iter::Peekable;

/// Bits per code point (`char::MAX` < 2^21).
pub(super) const CHAR_BITS: u32 = 21;
/// Bits per interned token id.
pub(super) const TOKEN_BITS: u32 = 32;

/// The n-grams of orders `1..=max_n` of one sequence.
#[derive(Debug, Clone)]
pub(super) struct Ngrams<'a> {
    seq: &'a [u32],
    max_n: usize,
    bits: u32,
    /// The packed windows, ascending; empty unless [`Ngrams::packed`].
    windows: Vec<u128>,
}

impl<'a> Ngrams<'a> {
    /// The n-grams of `seq`, whose symbols are below `2^bits − 1` (`bits` in
    /// 1..128). They are comparable only with ones of the same `max_n` and
    /// `bits`.
    pub(super) fn new(seq: &'a [u32], max_n: usize, bits: u32) -> Self {
        let mut grams = Self {
            seq,
            max_n,
            bits,
            windows: Vec::new(),
        };
        if grams.packed() {
            grams.windows = (0..seq.len()).map(|i| pack(&seq[i..], max_n, bits)).collect();
            grams.windows.sort_unstable();
        }
        grams
    }

    fn packed(&self) -> bool {
        self.max_n as u32 * self.bits <= 128
    }

    /// The number of order-`n` grams (n ≥ 1), counted with multiplicity.
    pub(super) fn total(&self, n: usize) -> u64 {
        (self.seq.len() + 1).saturating_sub(n) as u64
    }

    /// The clipped matches of order `n` (1..=`max_n`): over the distinct
    /// n-grams g of `self`, `Σ min(count(g), max over refs of count_ref(g))`.
    pub(super) fn clipped(&self, refs: &[Ngrams<'_>], n: usize) -> u64 {
        if !self.packed() {
            return self.clipped_counted(refs, n);
        }
        let mut cursors: Vec<_> = refs.iter().map(|r| r.runs(n).peekable()).collect();
        let clip = |(gram, count): (u128, u32)| {
            let cap = cursors.iter_mut().map(|r| count_of(r, gram)).max();
            u64::from(count.min(cap.unwrap_or(0)))
        };
        self.runs(n).map(clip).sum()
    }

    /// The distinct packed order-`n` grams, ascending, with their counts.
    fn runs(&self, n: usize) -> impl Iterator<Item = (u128, u32)> + '_ {
        let shift = (self.max_n - n) as u32 * self.bits;
        let last_symbol = u128::MAX >> (128 - self.bits);
        let same = move |a: &u128, b: &u128| a >> shift == b >> shift;
        let runs = self
            .windows
            .chunk_by(same)
            .map(move |run| (run[0] >> shift, run.len() as u32));
        runs.filter(move |(gram, _)| gram & last_symbol != 0)
    }

    /// [`Ngrams::clipped`] with n-grams counted as slices.
    fn clipped_counted(&self, refs: &[Ngrams<'_>], n: usize) -> u64 {
        let refs: Vec<_> = refs.iter().map(|r| counter(r.seq, n)).collect();
        let clip = |(gram, count): (&[u32], u32)| {
            let cap = refs.iter().map(|r| r.get(gram).copied().unwrap_or(0)).max();
            u64::from(count.min(cap.unwrap_or(0)))
        };
        counter(self.seq, n).into_iter().map(clip).sum()
    }
}

/// The first `max_n` symbols of `seq`, each plus 1, `bits` apiece, padded
/// with 0 past the end of `seq`.
fn pack(seq: &[u32], max_n: usize, bits: u32) -> u128 {
    let window = &seq[..seq.len().min(max_n)];
    let packed = window
        .iter()
        .fold(0u128, |k, &s| (k << bits) | (u128::from(s) + 1));
    packed << ((max_n - window.len()) as u32 * bits)
}

/// The count of `gram` in ascending `runs`, skipping the smaller n-grams.
fn count_of(runs: &mut Peekable<impl Iterator<Item = (u128, u32)>>, gram: u128) -> u32 {
    while runs.next_if(|&(g, _)| g < gram).is_some() {}
    runs.next_if(|&(g, _)| g == gram).map_or(0, |(_, count)| count)
}

/// Python's `Counter(seq[i:i+n])`.
fn counter(seq: &[u32], n: usize) -> HashMap<&[u32], u32> {
    let mut counts = HashMap::new();
    seq.windows(n)
        .for_each(|gram| *counts.entry(gram).or_default() += 1);
    counts
}

/// Code points of `chars` as symbols.
pub(super) fn char_symbols(chars: impl Iterator<Item = char>) -> Vec<u32> {
    chars.map(u32::from).collect()
}

/// rustc's FxHash: cheap, and good enough for the handful of tokens of one
/// segment.
#[derive(Debug, Default)]
struct FxHasher(u64);

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Gives each distinct token a small id, shared by the sequences of one
/// segment (hypothesis and references), so that ids compare like tokens.
#[derive(Debug, Default)]
pub(super) struct Interner<'s> {
    ids: HashMap<&'s str, u32, BuildHasherDefault<FxHasher>>,
}

impl<'s> Interner<'s> {
    /// The ids of `tokens`.
    pub(super) fn ids<I: IntoIterator<Item = &'s str>>(&mut self, tokens: I) -> Vec<u32> {
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
        let other = interner.ids(["a", "b", "a", "b", "c"]);
        // 100 bits per symbol forces the slice representation for bigrams.
        for bits in [TOKEN_BITS, 100] {
            let h = Ngrams::new(&hyp, 3, bits);
            let r = [Ngrams::new(&reference, 3, bits)];
            assert_eq!([h.total(1), h.total(2), h.total(3)], [5, 4, 3]);
            // unigrams: a×3 b×2 vs a b×2 c; bigrams: ab×2 ba×2 vs ba ab bc
            assert_eq!([h.clipped(&r, 1), h.clipped(&r, 2)], [3, 2]);
            // trigrams: aba×2 bab vs bab abc
            assert_eq!(h.clipped(&r, 3), 1);
            // the cap is the highest count over the references: ab×2 ba×1
            let both = [Ngrams::new(&reference, 3, bits), Ngrams::new(&other, 3, bits)];
            assert_eq!([h.clipped(&both, 1), h.clipped(&both, 2)], [4, 3]);
        }
        assert_eq!(Ngrams::new(&hyp[..1], 2, TOKEN_BITS).total(2), 0);
    }
}
