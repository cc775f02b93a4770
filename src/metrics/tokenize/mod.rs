//! The tokenizers of sacreBLEU 2.6.0 that need no external dictionary:
//! `13a` (the default), `intl`, `zh`, `char` and `none`.
//!
//! Invariant: [`Tokenizer::tokenize`] returns exactly the string sacreBLEU's
//! tokenizer returns for the same input (checked against the committed
//! fixture for text in all 14 ML2B languages); callers split it with
//! [`pystr::py_split`], never with `str::split_whitespace`.

pub mod pystr;
mod regexp;
mod zh;

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use zh::is_chinese_char;

/// A sacreBLEU tokenizer, named as on sacreBLEU's command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Tokenizer {
    /// mteval-v13a, the WMT standard and sacreBLEU's default.
    #[default]
    #[serde(rename = "13a")]
    Mteval13a,
    /// mteval-v14 international tokenization (Unicode punctuation/symbols).
    #[serde(rename = "intl")]
    Intl,
    /// Chinese: one token per CJK character, v13a for the rest.
    #[serde(rename = "zh")]
    Zh,
    /// One token per character.
    #[serde(rename = "char")]
    Char,
    /// No tokenization beyond whitespace splitting.
    #[serde(rename = "none")]
    None,
}

/// The tokenizer name was not one sacreBLEU knows (or one needing MeCab).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tokenizer `{0}` (expected one of 13a, intl, zh, char, none)")]
pub struct UnknownTokenizer(pub String);

impl Tokenizer {
    /// Every supported tokenizer, in sacreBLEU's listing order.
    pub const ALL: [Tokenizer; 5] = [Self::None, Self::Zh, Self::Mteval13a, Self::Intl, Self::Char];

    /// The name sacreBLEU puts in the `tok:` field of its signature.
    pub fn signature(self) -> &'static str {
        match self {
            Self::Mteval13a => "13a",
            Self::Intl => "intl",
            Self::Zh => "zh",
            Self::Char => "char",
            Self::None => "none",
        }
    }

    /// Tokenizes one line exactly as sacreBLEU's tokenizer `__call__` does.
    pub fn tokenize(self, line: &str) -> String {
        match self {
            Self::Mteval13a => tokenize_13a(line),
            Self::Intl => regexp::tokenize_intl(line),
            Self::Zh => zh::tokenize_zh(line),
            Self::Char => tokenize_char(line),
            Self::None => line.to_owned(),
        }
    }
}

impl fmt::Display for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.signature())
    }
}

impl FromStr for Tokenizer {
    type Err = UnknownTokenizer;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|t| t.signature() == s)
            .ok_or_else(|| UnknownTokenizer(s.to_owned()))
    }
}

/// `Tokenizer13a.__call__`: mteval's entity and line-break handling, then
/// the v13a rules on the line padded with one space on each side.
fn tokenize_13a(line: &str) -> String {
    let mut line = Cow::Borrowed(line);
    for (from, to) in [("<skipped>", ""), ("-\n", ""), ("\n", " ")] {
        line = replace(line, from, to);
    }
    if line.contains('&') {
        for (from, to) in [("&quot;", "\""), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")] {
            line = replace(line, from, to);
        }
    }
    regexp::post_tokenize_13a(&format!(" {line} "))
}

/// `text.replace(from, to)`, copying only when `from` occurs.
fn replace<'a>(text: Cow<'a, str>, from: &str, to: &str) -> Cow<'a, str> {
    if text.contains(from) {
        Cow::Owned(text.replace(from, to))
    } else {
        text
    }
}

/// `TokenizerChar.__call__`: `' '.join(line)`.
fn tokenize_char(line: &str) -> String {
    let mut out = String::with_capacity(line.len() * 2);
    for c in line.chars() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for tok in Tokenizer::ALL {
            assert_eq!(tok.signature().parse::<Tokenizer>(), Ok(tok));
        }
        assert!("ja-mecab".parse::<Tokenizer>().is_err());
    }
}

#[cfg(test)]
mod reference_tests {
    use super::*;
    use crate::metrics::bleu::{Bleu, BleuOptions};
    use crate::metrics::reference_fixture::cases;

    #[test]
    fn tokenizers_match_sacrebleu() {
        let all = cases("tokenize");
        for case in all {
            let tokenizer: Tokenizer = case["tokenizer"].as_str().unwrap().parse().unwrap();
            let lowercase = case["lowercase"].as_bool().unwrap();
            let bleu = Bleu::new(BleuOptions {
                tokenizer,
                lowercase,
                ..BleuOptions::default()
            });
            let input = case["input"].as_str().unwrap();
            let got = bleu.preprocess(input);
            assert_eq!(
                got,
                case["output"].as_str().unwrap(),
                "{tokenizer} lc={lowercase} {input:?}"
            );
        }
        assert!(all.len() >= 800);
    }

    #[test]
    fn chinese_set_matches_sacrebleu_over_all_code_points() {
        let ranges = cases("zh_ranges");
        let in_ranges = |cp: u32| {
            ranges
                .iter()
                .any(|r| (r[0].as_u64().unwrap()..=r[1].as_u64().unwrap()).contains(&u64::from(cp)))
        };
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            assert_eq!(
                is_chinese_char(c),
                in_ranges(u32::from(c)),
                "U+{:04X}",
                u32::from(c)
            );
        }
    }
}
