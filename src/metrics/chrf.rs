//! chrF and chrF++ exactly as sacreBLEU 2.6.0 computes them
//! (`sacrebleu/metrics/chrf.py`).
//!
//! Invariants:
//! * no tokenizer: character n-grams (orders 1..=`char_order`, Python code
//!   points) of the segment with all whitespace removed (unless
//!   `whitespace`), plus word n-grams (orders 1..=`word_order`) of the words
//!   with one leading or trailing ASCII punctuation mark split off;
//! * per order the statistics are `[hyp n-grams (0 if the reference has none
//!   of that order), ref n-grams, clipped matches]`;
//! * with several references a segment keeps the statistics of the reference
//!   with the strictly highest segment-level chrF (the first on ties);
//! * the corpus score comes from the summed statistics, averaging precision
//!   and recall over the orders present in both (or, with `eps_smoothing`,
//!   averaging per-order F-scores over all orders).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::bleu::SACREBLEU_VERSION;
use super::corpus::{CorpusError, check_streams, map_segments, segment_refs};
use std::borrow::Cow;

use super::ngram_count::{CHAR_BITS, Interner, Ngrams, TOKEN_BITS, char_symbols};
use super::tokenize::pystr::{is_py_whitespace, py_lower, py_split};

const EPS: f64 = 1e-16;

/// `CHRF._PUNCTS`.
const PUNCTS: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

/// The parameters of `sacrebleu.metrics.CHRF`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChrfOptions {
    /// Highest character n-gram order (6).
    pub char_order: usize,
    /// Highest word n-gram order (0 = chrF, 2 = chrF++).
    pub word_order: usize,
    /// Recall weight β (2).
    pub beta: u32,
    /// Lower-case first.
    pub lowercase: bool,
    /// Keep whitespace inside character n-grams.
    pub whitespace: bool,
    /// Average per-order F-scores instead (chrF++.py / Moses behaviour).
    pub eps_smoothing: bool,
}

impl Default for ChrfOptions {
    /// `CHRF()` / `sacrebleu.corpus_chrf`.
    fn default() -> Self {
        Self {
            char_order: 6,
            word_order: 0,
            beta: 2,
            lowercase: false,
            whitespace: false,
            eps_smoothing: false,
        }
    }
}

impl ChrfOptions {
    /// chrF++: the defaults with word bigrams (`CHRF(word_order=2)`).
    pub fn plus_plus() -> Self {
        Self {
            word_order: 2,
            ..Self::default()
        }
    }

    fn order(&self) -> usize {
        self.char_order + self.word_order
    }

    /// sacreBLEU's signature, e.g.
    /// `nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0`.
    pub fn signature(&self, nrefs: usize) -> String {
        let case = if self.lowercase { "lc" } else { "mixed" };
        let eff = if self.eps_smoothing { "no" } else { "yes" };
        let space = if self.whitespace { "yes" } else { "no" };
        let (nc, nw) = (self.char_order, self.word_order);
        format!(
            "nrefs:{nrefs}|case:{case}|eff:{eff}|nc:{nc}|nw:{nw}|space:{space}|version:{SACREBLEU_VERSION}"
        )
    }
}

/// Per-order `[hyp, ref, match]` counts (character orders, then word orders).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChrfStats(pub Vec<[u64; 3]>);

impl ChrfStats {
    fn add(&mut self, other: &ChrfStats) {
        for (acc, more) in self.0.iter_mut().zip(&other.0) {
            acc.iter_mut().zip(more).for_each(|(a, b)| *a += b);
        }
    }
}

/// A chrF result, shaped like sacreBLEU's `CHRFScore`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChrfScore {
    /// chrF on 0–100.
    pub score: f64,
    /// Character order.
    pub char_order: usize,
    /// Word order.
    pub word_order: usize,
    /// β.
    pub beta: u32,
}

impl ChrfScore {
    /// `chrF2`, `chrF2++`, ...
    pub fn name(&self) -> String {
        format!("chrF{}{}", self.beta, "+".repeat(self.word_order))
    }
}

impl fmt::Display for ChrfScore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {:.2}", self.name(), self.score)
    }
}

/// A segment prepared for n-gram extraction.
struct Prepared {
    chars: Vec<u32>,
    words: Vec<String>,
}

/// A chrF scorer with fixed options.
#[derive(Debug, Clone, Default)]
pub struct Chrf {
    opts: ChrfOptions,
}

impl Chrf {
    /// A scorer for `opts`.
    pub fn new(opts: ChrfOptions) -> Self {
        Self { opts }
    }

    fn prepare(&self, segment: &str) -> Prepared {
        let text = if self.opts.lowercase {
            Cow::Owned(py_lower(segment))
        } else {
            Cow::Borrowed(segment)
        };
        let keep = |c: &char| self.opts.whitespace || !is_py_whitespace(*c);
        let chars = char_symbols(text.chars().filter(keep));
        let words = if self.opts.word_order > 0 {
            remove_punctuation(&text)
        } else {
            Vec::new()
        };
        Prepared { chars, words }
    }

    /// `CHRF._compute_segment_statistics`: the best reference's statistics.
    pub fn segment_stats(&self, hyp: &str, refs: &[&str]) -> ChrfStats {
        let hyp = self.prepare(hyp);
        let hyp_chars = Ngrams::new(&hyp.chars, self.opts.char_order, CHAR_BITS);
        let mut best: Option<(f64, ChrfStats)> = None;
        for reference in refs {
            let stats = self.pair_stats(&hyp, &hyp_chars, &self.prepare(reference));
            let f = self.f_score(&stats);
            if best.as_ref().is_none_or(|(best_f, _)| f > *best_f) {
                best = Some((f, stats));
            }
        }
        best.map_or_else(|| ChrfStats(vec![[0; 3]; self.opts.order()]), |(_, s)| s)
    }

    fn pair_stats(&self, hyp: &Prepared, hyp_chars: &Ngrams<'_>, reference: &Prepared) -> ChrfStats {
        let (char_order, word_order) = (self.opts.char_order, self.opts.word_order);
        let ref_chars = Ngrams::new(&reference.chars, char_order, CHAR_BITS);
        let mut stats: Vec<_> = match_stats(hyp_chars, &ref_chars, char_order).collect();
        if word_order > 0 {
            let mut interner = Interner::default();
            let hyp_words = interner.ids(hyp.words.iter().map(String::as_str));
            let ref_words = interner.ids(reference.words.iter().map(String::as_str));
            let hyp_words = Ngrams::new(&hyp_words, word_order, TOKEN_BITS);
            let ref_words = Ngrams::new(&ref_words, word_order, TOKEN_BITS);
            stats.extend(match_stats(&hyp_words, &ref_words, word_order));
        }
        ChrfStats(stats)
    }

    /// `CHRF._compute_f_score`.
    pub fn f_score(&self, stats: &ChrfStats) -> f64 {
        let factor = f64::from(self.opts.beta.pow(2));
        let mut sum_f = 0.0;
        let (mut avg_prec, mut avg_rec, mut eff_order) = (0.0, 0.0, 0usize);
        for &[n_hyp, n_ref, n_match] in &stats.0 {
            let prec = if n_hyp > 0 {
                n_match as f64 / n_hyp as f64
            } else {
                EPS
            };
            let rec = if n_ref > 0 {
                n_match as f64 / n_ref as f64
            } else {
                EPS
            };
            let denom = factor * prec + rec;
            sum_f += if denom > 0.0 {
                (1.0 + factor) * prec * rec / denom
            } else {
                EPS
            };
            if n_hyp > 0 && n_ref > 0 {
                avg_prec += prec;
                avg_rec += rec;
                eff_order += 1;
            }
        }
        if self.opts.eps_smoothing {
            return 100.0 * sum_f / self.opts.order() as f64;
        }
        f_beta(factor, avg_prec, avg_rec, eff_order)
    }

    /// Per-segment statistics of a corpus (`refs[stream][segment]`).
    pub fn all_segment_stats<S: AsRef<str> + Sync, R: AsRef<[S]> + Sync>(
        &self,
        hyps: &[S],
        refs: &[R],
    ) -> Result<Vec<ChrfStats>, CorpusError> {
        check_streams(hyps, refs)?;
        let stats = |i: usize| self.segment_stats(hyps[i].as_ref(), &segment_refs(refs, i));
        Ok(map_segments(hyps.len(), stats))
    }

    /// Corpus chrF (`CHRF.corpus_score`).
    pub fn corpus_score<S: AsRef<str> + Sync, R: AsRef<[S]> + Sync>(
        &self,
        hyps: &[S],
        refs: &[R],
    ) -> Result<ChrfScore, CorpusError> {
        let mut total = ChrfStats(vec![[0; 3]; self.opts.order()]);
        for stats in self.all_segment_stats(hyps, refs)? {
            total.add(&stats);
        }
        Ok(self.score_from_stats(&total))
    }

    /// Sentence chrF (`CHRF.sentence_score`).
    pub fn sentence_score(&self, hyp: &str, refs: &[&str]) -> ChrfScore {
        self.score_from_stats(&self.segment_stats(hyp, refs))
    }

    /// The score object for summed statistics.
    pub fn score_from_stats(&self, stats: &ChrfStats) -> ChrfScore {
        ChrfScore {
            score: self.f_score(stats),
            char_order: self.opts.char_order,
            word_order: self.opts.word_order,
            beta: self.opts.beta,
        }
    }
}

/// The F-beta of the averaged precision and recall, on 0–100.
fn f_beta(factor: f64, prec_sum: f64, rec_sum: f64, eff_order: usize) -> f64 {
    let (prec, rec) = match eff_order {
        0 => (0.0, 0.0),
        k => (prec_sum / k as f64, rec_sum / k as f64),
    };
    if prec + rec == 0.0 {
        return 0.0;
    }
    let score = (1.0 + factor) * prec * rec;
    100.0 * (score / (factor * prec + rec))
}

/// `CHRF._get_match_statistics` for orders `1..=max_n`.
fn match_stats<'a>(
    hyp: &'a Ngrams<'_>,
    reference: &'a Ngrams<'_>,
    max_n: usize,
) -> impl Iterator<Item = [u64; 3]> + 'a {
    let order = |n: usize| {
        let n_ref = reference.total(n);
        let n_hyp = if n_ref == 0 { 0 } else { hyp.total(n) };
        [n_hyp, n_ref, hyp.clipped(std::slice::from_ref(reference), n)]
    };
    (1..=max_n).map(order)
}

/// `CHRF._remove_punctuation`: split one ASCII punctuation mark off the end
/// of a word, or else off its start.
fn remove_punctuation(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for w in py_split(text) {
        let mut chars = w.chars();
        let (first, last) = (chars.next(), chars.next_back());
        match (first, last) {
            (Some(_), Some(l)) if PUNCTS.contains(l) => {
                words.push(w[..w.len() - l.len_utf8()].to_owned());
                words.push(l.to_string());
            }
            (Some(f), Some(_)) if PUNCTS.contains(f) => {
                words.push(f.to_string());
                words.push(w[f.len_utf8()..].to_owned());
            }
            _ => words.push(w.to_owned()),
        }
    }
    words
}

/// Corpus chrF of `hyps` against reference streams `refs[stream][segment]`.
pub fn corpus_chrf<S: AsRef<str> + Sync, R: AsRef<[S]> + Sync>(
    hyps: &[S],
    refs: &[R],
    opts: &ChrfOptions,
) -> Result<ChrfScore, CorpusError> {
    Chrf::new(opts.clone()).corpus_score(hyps, refs)
}

/// Sentence chrF of one hypothesis against its references.
pub fn sentence_chrf(hyp: &str, refs: &[&str], opts: &ChrfOptions) -> ChrfScore {
    Chrf::new(opts.clone()).sentence_score(hyp, refs)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::metrics::reference_fixture::{assert_close, cases, corpus, strings};

    fn options(v: &Value) -> ChrfOptions {
        serde_json::from_value(v.clone()).expect("fixture options deserialize")
    }

    #[test]
    fn corpus_chrf_matches_sacrebleu() {
        let mut max_diff: f64 = 0.0;
        for case in cases("chrf_corpus") {
            let (hyps, refs) = corpus(case["corpus"].as_str().unwrap());
            let opts = options(&case["options"]);
            let what = format!("{} {:?}", case["corpus"], opts);
            let got = corpus_chrf(&hyps, &refs, &opts).unwrap();
            max_diff = max_diff.max(assert_close(got.score, &case["score"], &what));
            assert_eq!(opts.signature(refs.len()), case["signature"].as_str().unwrap());
        }
        eprintln!("corpus chrF: max abs diff {max_diff:e}");
    }

    #[test]
    fn sentence_chrf_matches_sacrebleu() {
        let mut max_diff: f64 = 0.0;
        for case in cases("chrf_sentence") {
            let opts = options(&case["options"]);
            let hyp = case["hyp"].as_str().unwrap();
            let refs = strings(&case["refs"]);
            let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
            let got = sentence_chrf(hyp, &refs, &opts);
            max_diff = max_diff.max(assert_close(
                got.score,
                &case["score"],
                &format!("{hyp:?} {opts:?}"),
            ));
        }
        eprintln!("sentence chrF: max abs diff {max_diff:e}");
    }

    #[test]
    fn punctuation_is_split_once() {
        let words = remove_punctuation("(a) b, ,c x .");
        assert_eq!(words, ["(a", ")", "b", ",", ",", "c", "x", "."]);
    }
}
