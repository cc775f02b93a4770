//! The regular-expression tokenizers of sacreBLEU: `TokenizerRegexp` (the
//! mteval-v13a core shared by `13a` and `zh`) and `TokenizerV14International`.
//!
//! Invariant: each rule is applied to the whole line before the next, with
//! leftmost-first, non-overlapping replacement, which is what Python's
//! `re.sub` does. The v14 rules port verbatim to `regex::Regex::replace_all`;
//! the v13a rules match one character or a pair of characters, so each is
//! one left-to-right scan of the line.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;

use super::pystr::join_words;

type Rules = Vec<(Regex, &'static str)>;

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

/// The international (v14) tokenizer.
pub(super) fn tokenize_intl(line: &str) -> String {
    static RULES: OnceLock<Rules> = OnceLock::new();
    apply(RULES.get_or_init(|| compile(&RULES_INTL)), line)
}

/// `TokenizerRegexp` in sacrebleu/tokenizers/tokenizer_re.py: its four
/// rules each replace one character or one pair of characters.
pub(super) fn post_tokenize_13a(line: &str) -> String {
    let not_digit = |c: char| !c.is_ascii_digit();
    let text = space_symbols(line);
    let text = sub_pairs(&text, not_digit, is_period_or_comma, ["", " ", " "]);
    let text = sub_pairs(&text, is_period_or_comma, not_digit, [" ", " ", ""]);
    let text = sub_pairs(&text, |c| c.is_ascii_digit(), |c| c == '-', ["", " ", " "]);
    join_words(&text)
}

/// Rule 1 of v13a: every character of the symbol set gets a space on each side.
fn space_symbols(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if is_13a_symbol(c) {
            out.extend([' ', c, ' ']);
        } else {
            out.push(c);
        }
    }
    out
}

/// The character class of rule 1: the ASCII ranges `{`–`~`, `[`–backtick,
/// space–`&`, `(`–`+`, `:`–`@`, and `/`.
fn is_13a_symbol(c: char) -> bool {
    matches!(c, '{'..='~' | '['..='`' | ' '..='&' | '('..='+' | ':'..='@' | '/')
}

/// `re.sub(r"(a)(b)", pre + r"\1" + mid + r"\2" + post, text)` for single
/// characters: leftmost-first, non-overlapping, i.e. one left-to-right scan.
fn sub_pairs(text: &str, a: fn(char) -> bool, b: fn(char) -> bool, [pre, mid, post]: [&str; 3]) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match chars.next_if(|&d| a(c) && b(d)) {
            Some(d) => {
                out.extend([
                    pre,
                    c.encode_utf8(&mut [0; 4]),
                    mid,
                    d.encode_utf8(&mut [0; 4]),
                    post,
                ]);
            }
            None => out.push(c),
        }
    }
    out
}

fn is_period_or_comma(c: char) -> bool {
    matches!(c, '.' | ',')
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
