//! Corpus and sentence BLEU exactly as sacreBLEU 2.6.0 computes them
//! (`sacrebleu/metrics/bleu.py`), including its signature string.
//!
//! Invariants:
//! * a segment is lower-cased (optional, Python `str.lower`), right-stripped,
//!   tokenised, then split on Python whitespace;
//! * clipped n-gram counts use, per n-gram, the maximum count over the
//!   segment's references; the reference length is the one closest to the
//!   hypothesis length, the shorter one on ties;
//! * corpus statistics are sums over segments, and the score is computed once
//!   from the sums with sacreBLEU's smoothing and effective-order rules, in
//!   the same floating-point order;
//! * streams of different lengths are an error (sacreBLEU truncates).
//!
//! Known deviation: with `add-k` smoothing sacreBLEU returns the *smoothed*
//! counts/totals in its score object (it mutates the lists); here `counts`
//! and `totals` are always the raw statistics. Scores and precisions match.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::corpus::{CorpusError, check_streams, map_segments, segment_refs};
use super::ngram_count::{Interner, Ngrams, TOKEN_BITS};
use super::tokenize::Tokenizer;
use super::tokenize::pystr::{py_lower, py_rstrip, py_split};

/// The sacreBLEU version whose behaviour (and signature) this module mirrors.
pub const SACREBLEU_VERSION: &str = "2.6.0";

/// `my_log(0)` in sacreBLEU: a floor instead of minus infinity.
const LOG_ZERO: f64 = -9_999_999_999.0;

/// A BLEU smoothing method (Chen & Cherry 2014), as named by sacreBLEU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Smoothing {
    /// No smoothing: a zero precision makes the score 0.
    #[serde(rename = "none")]
    None,
    /// Method 1: a zero count becomes `smooth_value` (default 0.1).
    #[serde(rename = "floor")]
    Floor,
    /// Method 2: add `smooth_value` (default 1) to counts and totals, n > 1.
    #[serde(rename = "add-k")]
    AddK,
    /// Method 3 (mteval-v13a's NIST smoothing), sacreBLEU's default.
    #[default]
    #[serde(rename = "exp")]
    Exp,
}

/// The smoothing name was not one sacreBLEU knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown smoothing method `{0}` (expected one of none, floor, add-k, exp)")]
pub struct UnknownSmoothing(pub String);

impl Smoothing {
    const ALL: [Smoothing; 4] = [Self::None, Self::Floor, Self::AddK, Self::Exp];

    /// The name used by sacreBLEU (`smooth_method`).
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Floor => "floor",
            Self::AddK => "add-k",
            Self::Exp => "exp",
        }
    }

    /// `BLEU.SMOOTH_DEFAULTS`.
    pub fn default_value(self) -> Option<f64> {
        match self {
            Self::Floor => Some(0.1),
            Self::AddK => Some(1.0),
            Self::None | Self::Exp => None,
        }
    }
}

impl FromStr for Smoothing {
    type Err = UnknownSmoothing;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let found = Self::ALL.into_iter().find(|m| m.name() == s);
        found.ok_or_else(|| UnknownSmoothing(s.to_owned()))
    }
}

/// The parameters of `sacrebleu.metrics.BLEU`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BleuOptions {
    /// Tokenizer applied to hypotheses and references.
    pub tokenizer: Tokenizer,
    /// Lower-case every segment first.
    pub lowercase: bool,
    /// Smoothing method.
    pub smooth: Smoothing,
    /// Value for `floor` / `add-k`; `None` takes sacreBLEU's default.
    pub smooth_value: Option<f64>,
    /// Average only over the orders that have hypothesis n-grams.
    pub effective_order: bool,
    /// Highest n-gram order (4).
    pub max_ngram_order: usize,
}

impl Default for BleuOptions {
    /// `BLEU()` / `sacrebleu.corpus_bleu`.
    fn default() -> Self {
        Self {
            tokenizer: Tokenizer::default(),
            lowercase: false,
            smooth: Smoothing::default(),
            smooth_value: None,
            effective_order: false,
            max_ngram_order: 4,
        }
    }
}

impl BleuOptions {
    /// `sacrebleu.sentence_bleu`: the defaults with effective order on.
    pub fn sentence() -> Self {
        Self {
            effective_order: true,
            ..Self::default()
        }
    }

    fn smooth_value(&self) -> Option<f64> {
        self.smooth_value.or(self.smooth.default_value())
    }

    /// sacreBLEU's signature, e.g.
    /// `nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0`.
    pub fn signature(&self, nrefs: usize) -> String {
        let case = if self.lowercase { "lc" } else { "mixed" };
        let eff = if self.effective_order { "yes" } else { "no" };
        let mut smooth = self.smooth.name().to_owned();
        if let Some(v) = self.smooth.default_value().and(self.smooth_value()) {
            smooth.push_str(&format!("[{v:.2}]"));
        }
        let tok = self.tokenizer.signature();
        format!("nrefs:{nrefs}|case:{case}|eff:{eff}|tok:{tok}|smooth:{smooth}|version:{SACREBLEU_VERSION}")
    }
}

/// BLEU's sufficient statistics, summed over segments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BleuStats {
    /// Hypothesis length in tokens.
    pub sys_len: u64,
    /// Closest reference length in tokens.
    pub ref_len: u64,
    /// Clipped matches per order.
    pub correct: Vec<u64>,
    /// Hypothesis n-grams per order.
    pub total: Vec<u64>,
}

impl BleuStats {
    fn zero(order: usize) -> Self {
        Self {
            sys_len: 0,
            ref_len: 0,
            correct: vec![0; order],
            total: vec![0; order],
        }
    }

    fn add(&mut self, other: &BleuStats) {
        self.sys_len += other.sys_len;
        self.ref_len += other.ref_len;
        add_into(&mut self.correct, &other.correct);
        add_into(&mut self.total, &other.total);
    }
}

fn add_into(acc: &mut [u64], more: &[u64]) {
    acc.iter_mut().zip(more).for_each(|(a, b)| *a += b);
}

/// A BLEU result, shaped like sacreBLEU's `BLEUScore`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BleuScore {
    /// BLEU on 0–100.
    pub score: f64,
    /// Clipped matches per order (raw, see the module docs).
    pub counts: Vec<u64>,
    /// Hypothesis n-grams per order (raw).
    pub totals: Vec<u64>,
    /// Smoothed precisions per order, in percent.
    pub precisions: Vec<f64>,
    /// Brevity penalty.
    pub bp: f64,
    /// Hypothesis length.
    pub sys_len: u64,
    /// Reference length.
    pub ref_len: u64,
}

impl fmt::Display for BleuScore {
    /// sacreBLEU's verbose form: `BLEU = 23.46 78.4/41.2/25.8/10.7 (BP = ...)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let precs: Vec<String> = self.precisions.iter().map(|p| format!("{p:.1}")).collect();
        let ratio = if self.ref_len > 0 {
            self.sys_len as f64 / self.ref_len as f64
        } else {
            0.0
        };
        write!(
            f,
            "BLEU = {:.2} {} (BP = {:.3} ratio = {ratio:.3} hyp_len = {} ref_len = {})",
            self.score,
            precs.join("/"),
            self.bp,
            self.sys_len,
            self.ref_len
        )
    }
}

/// A BLEU scorer with fixed options.
#[derive(Debug, Clone, Default)]
pub struct Bleu {
    opts: BleuOptions,
}

impl Bleu {
    /// A scorer for `opts`.
    pub fn new(opts: BleuOptions) -> Self {
        Self { opts }
    }

    /// The options in use.
    pub fn options(&self) -> &BleuOptions {
        &self.opts
    }

    /// `BLEU._preprocess_segment`.
    pub fn preprocess(&self, segment: &str) -> String {
        if self.opts.lowercase {
            self.opts.tokenizer.tokenize(py_rstrip(&py_lower(segment)))
        } else {
            self.opts.tokenizer.tokenize(py_rstrip(segment))
        }
    }

    /// The statistics of one hypothesis against its references.
    pub fn segment_stats(&self, hyp: &str, refs: &[&str]) -> BleuStats {
        let hyp_text = self.preprocess(hyp);
        let ref_texts: Vec<String> = refs.iter().map(|r| self.preprocess(r)).collect();
        let mut interner = Interner::default();
        let hyp_words = interner.ids(py_split(&hyp_text));
        let ref_words: Vec<Vec<u32>> = ref_texts.iter().map(|r| interner.ids(py_split(r))).collect();
        let mut stats = BleuStats::zero(self.opts.max_ngram_order);
        stats.sys_len = hyp_words.len() as u64;
        stats.ref_len = closest_ref_len(hyp_words.len(), ref_words.iter().map(Vec::len)) as u64;
        let order = self.opts.max_ngram_order;
        let hyp_grams = Ngrams::new(&hyp_words, order, TOKEN_BITS);
        let ref_grams: Vec<_> = ref_words
            .iter()
            .map(|r| Ngrams::new(r, order, TOKEN_BITS))
            .collect();
        for n in 1..=order {
            stats.correct[n - 1] = hyp_grams.clipped(&ref_grams, n);
            stats.total[n - 1] = hyp_grams.total(n);
        }
        stats
    }

    /// Per-segment statistics of a corpus (`refs[stream][segment]`).
    pub fn all_segment_stats<S: AsRef<str> + Sync, R: AsRef<[S]> + Sync>(
        &self,
        hyps: &[S],
        refs: &[R],
    ) -> Result<Vec<BleuStats>, CorpusError> {
        check_streams(hyps, refs)?;
        let stats = |i: usize| self.segment_stats(hyps[i].as_ref(), &segment_refs(refs, i));
        Ok(map_segments(hyps.len(), stats))
    }

    /// Corpus BLEU (`BLEU.corpus_score`).
    pub fn corpus_score<S: AsRef<str> + Sync, R: AsRef<[S]> + Sync>(
        &self,
        hyps: &[S],
        refs: &[R],
    ) -> Result<BleuScore, CorpusError> {
        let mut total = BleuStats::zero(self.opts.max_ngram_order);
        for stats in self.all_segment_stats(hyps, refs)? {
            total.add(&stats);
        }
        Ok(self.score_from_stats(&total))
    }

    /// Sentence BLEU (`BLEU.sentence_score`) with this scorer's options.
    pub fn sentence_score(&self, hyp: &str, refs: &[&str]) -> BleuScore {
        self.score_from_stats(&self.segment_stats(hyp, refs))
    }

    /// `BLEU.compute_bleu` on summed statistics.
    pub fn score_from_stats(&self, stats: &BleuStats) -> BleuScore {
        let bp = brevity_penalty(stats.sys_len, stats.ref_len);
        let order = self.opts.max_ngram_order;
        let mut score = BleuScore {
            score: 0.0,
            counts: stats.correct.clone(),
            totals: stats.total.clone(),
            precisions: vec![0.0; order],
            bp,
            sys_len: stats.sys_len,
            ref_len: stats.ref_len,
        };
        if stats.correct.iter().all(|&c| c == 0) {
            return score;
        }
        let eff_order = self.fill_precisions(stats, &mut score.precisions);
        let log_sum = score.precisions[..eff_order]
            .iter()
            .fold(0.0, |acc, &p| acc + my_log(p));
        score.score = bp * (log_sum / eff_order as f64).exp();
        score
    }

    /// The precision loop of `compute_bleu`; returns the order to average.
    fn fill_precisions(&self, stats: &BleuStats, precisions: &mut [f64]) -> usize {
        let smooth_value = self.opts.smooth_value().unwrap_or(0.0);
        let mut smooth_mteval = 1.0;
        let mut eff_order = precisions.len();
        for n in 1..=precisions.len() {
            let (mut correct, mut total) = (stats.correct[n - 1] as f64, stats.total[n - 1] as f64);
            if self.opts.smooth == Smoothing::AddK && n > 1 {
                correct += smooth_value;
                total += smooth_value;
            }
            if total == 0.0 {
                break;
            }
            if self.opts.effective_order {
                eff_order = n;
            }
            precisions[n - 1] = if correct != 0.0 {
                100.0 * correct / total
            } else {
                match self.opts.smooth {
                    Smoothing::Exp => {
                        smooth_mteval *= 2.0;
                        100.0 / (smooth_mteval * total)
                    }
                    Smoothing::Floor => 100.0 * smooth_value / total,
                    Smoothing::None | Smoothing::AddK => 0.0,
                }
            };
        }
        eff_order
    }
}

/// `BLEU._get_closest_ref_len`: nearest length, the shorter one on ties.
fn closest_ref_len(hyp_len: usize, ref_lens: impl Iterator<Item = usize>) -> usize {
    let key = |r: usize| (hyp_len.abs_diff(r), r);
    ref_lens.min_by_key(|&r| key(r)).unwrap_or(0)
}

fn brevity_penalty(sys_len: u64, ref_len: u64) -> f64 {
    match sys_len {
        _ if sys_len >= ref_len => 1.0,
        0 => 0.0,
        _ => (1.0 - ref_len as f64 / sys_len as f64).exp(),
    }
}

/// `sacrebleu.utils.my_log`.
fn my_log(x: f64) -> f64 {
    if x == 0.0 { LOG_ZERO } else { x.ln() }
}

/// Corpus BLEU of `hyps` against reference streams `refs[stream][segment]`.
pub fn corpus_bleu<S: AsRef<str> + Sync, R: AsRef<[S]> + Sync>(
    hyps: &[S],
    refs: &[R],
    opts: &BleuOptions,
) -> Result<BleuScore, CorpusError> {
    Bleu::new(opts.clone()).corpus_score(hyps, refs)
}

/// Sentence BLEU of one hypothesis against its references.
pub fn sentence_bleu(hyp: &str, refs: &[&str], opts: &BleuOptions) -> BleuScore {
    Bleu::new(opts.clone()).sentence_score(hyp, refs)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::metrics::reference_fixture::{assert_close, cases, corpus, strings};

    fn options(v: &Value) -> BleuOptions {
        serde_json::from_value(v.clone()).expect("fixture options deserialize")
    }

    fn check_list(got: &[f64], want: &Value, what: &str) -> f64 {
        let want = want.as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{what}: length");
        got.iter()
            .zip(want)
            .map(|(g, w)| assert_close(*g, w, &what))
            .fold(0.0, f64::max)
    }

    #[test]
    fn corpus_bleu_matches_sacrebleu() {
        let mut max_diff: f64 = 0.0;
        for case in cases("bleu_corpus") {
            let (hyps, refs) = corpus(case["corpus"].as_str().unwrap());
            let opts = options(&case["options"]);
            let what = format!("{} {:?}", case["corpus"], opts);
            let got = corpus_bleu(&hyps, &refs, &opts).unwrap();
            let want = &case["expected"];
            max_diff = max_diff.max(assert_close(got.score, &want["score"], &what));
            max_diff = max_diff.max(assert_close(got.bp, &want["bp"], &what));
            max_diff = max_diff.max(check_list(&got.precisions, &want["precisions"], &what));
            let as_u64 = |v: &Value| {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .collect::<Vec<_>>()
            };
            assert_eq!(got.counts, as_u64(&want["counts"]), "{what}");
            assert_eq!(got.totals, as_u64(&want["totals"]), "{what}");
            assert_eq!(got.sys_len, want["sys_len"].as_u64().unwrap(), "{what}");
            assert_eq!(got.ref_len, want["ref_len"].as_u64().unwrap(), "{what}");
            assert_eq!(opts.signature(refs.len()), want["signature"].as_str().unwrap());
        }
        eprintln!("corpus BLEU: max abs diff {max_diff:e}");
    }

    #[test]
    fn sentence_bleu_matches_sacrebleu() {
        let mut max_diff: f64 = 0.0;
        for case in cases("bleu_sentence") {
            let opts = options(&case["options"]);
            let hyp = case["hyp"].as_str().unwrap();
            let refs = strings(&case["refs"]);
            let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
            let got = sentence_bleu(hyp, &refs, &opts);
            let what = format!("{hyp:?} {opts:?}");
            max_diff = max_diff.max(assert_close(got.score, &case["score"], &what));
            max_diff = max_diff.max(assert_close(got.bp, &case["bp"], &what));
            max_diff = max_diff.max(check_list(&got.precisions, &case["precisions"], &what));
        }
        eprintln!("sentence BLEU: max abs diff {max_diff:e}");
    }

    #[test]
    fn mismatched_streams_are_an_error() {
        let err = corpus_bleu(&["a", "b"], &[vec!["a"]], &BleuOptions::default()).unwrap_err();
        assert_eq!(
            err,
            CorpusError::LengthMismatch {
                stream: 0,
                hyps: 2,
                refs: 1
            }
        );
        let none: [Vec<&str>; 0] = [];
        assert_eq!(
            corpus_bleu(&["a"], &none, &BleuOptions::default()),
            Err(CorpusError::NoReferences)
        );
    }

    #[test]
    fn default_signature() {
        let sig = BleuOptions::default().signature(1);
        assert_eq!(
            sig,
            format!("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{SACREBLEU_VERSION}")
        );
    }
}
