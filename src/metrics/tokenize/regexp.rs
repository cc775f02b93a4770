//! The regular-expression tokenizers of sacreBLEU: `TokenizerRegexp` (the
//! mteval-v13a core shared by `13a` and `zh`) and `TokenizerV14International`.
//!
//! Invariant: each rule is applied to the whole line before the next, with
//! leftmost-first, non-overlapping replacement, which is what both Python's
//! `re.sub` and `regex::Regex::replace_all` do, so the rules port verbatim.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;

use super::pystr::join_words;

type Rules = Vec<(Regex, &'static str)>;

/// `TokenizerRegexp` in sacrebleu/tokenizers/tokenizer_re.py.
const RULES_13A: [(&str, &str); 4] = [
    // The ASCII set `{-~ [-` space-& (-+ :-@ /` of the original pattern.
    (r##"([{|}~\[\\\]^_` !"#$%&()*+:;<=>?@/])"##, " ${1} "),
    (r"([^0-9])([.,])", "${1} ${2} "),
    (r"([.,])([^0-9])", " ${1} ${2}"),
    (r"([0-9])(-)", "${1} ${2} "),
];

/// `TokenizerV14International` in sacrebleu/tokenizers/tokenizer_intl.py.
const RULES_INTL: [(&str, &str); 3] = [
    (r"(\P{N})(\p{P})", "${1} ${2} "),
    (r"(\p{P})(\P{N})", " ${1} ${2}"),
    (r"(\p{S})", " ${1} "),
];

fn compile(rules: &[(&str, &'static str)]) -> Rules {
    let build = |(pattern, repl): &(&str, &'static str)| {
        let re = Regex::new(pattern).expect("tokenizer pattern is a valid regex");
        (re, *repl)
    };
    rules.iter().map(build).collect()
}

fn apply(rules: &Rules, line: &str) -> String {
    let mut text = Cow::Borrowed(line);
    for (re, repl) in rules {
        if let Cow::Owned(changed) = re.replace_all(&text, *repl) {
            text = Cow::Owned(changed);
        }
    }
    join_words(&text)
}

/// The v13a post-tokenizer (no padding, no entity handling).
pub fn post_tokenize_13a(line: &str) -> String {
    static RULES: OnceLock<Rules> = OnceLock::new();
    apply(RULES.get_or_init(|| compile(&RULES_13A)), line)
}

/// The international (v14) tokenizer.
pub fn tokenize_intl(line: &str) -> String {
    static RULES: OnceLock<Rules> = OnceLock::new();
    apply(RULES.get_or_init(|| compile(&RULES_INTL)), line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punctuation_runs_split_like_python() {
        let out = post_tokenize_13a(" a.. b,, 3.5. x...y ");
        assert_eq!(out, "a . . b , , 3.5 . x . . . y");
    }
}
