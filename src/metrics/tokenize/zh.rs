//! sacreBLEU's `zh` tokenizer: every "Chinese" character becomes its own
//! token, the rest goes through the v13a regular expressions.
//!
//! Invariant: "Chinese" is the set sacreBLEU 2.6.0 *effectively* tests, not
//! the one its comments describe. Two table rows are written `u'\u20000'`,
//! `u'\u2a6d6'` (a BMP character followed by a digit), which turns the
//! intended CJK Ext-B row into U+2001..=U+2A6D (general punctuation, currency,
//! arrows, maths ...) and makes Ext-B itself (U+20000+) not Chinese. The
//! reference script enumerates Python's predicate over every code point and
//! the tests compare it with [`is_chinese_char`].

use super::pystr::py_strip;
use super::regexp::post_tokenize_13a;

/// Inclusive code-point ranges, merged and sorted.
const CHINESE_RANGES: [(u32, u32); 13] = [
    (0x2001, 0x2A6D),
    (0x2E80, 0x2FDF),
    (0x2FF0, 0x303F),
    (0x3100, 0x312F),
    (0x31A0, 0x31EF),
    (0x3200, 0x4DB5),
    (0x4E00, 0x9FBB),
    (0xF900, 0xFA2D),
    (0xFA30, 0xFA6A),
    (0xFA70, 0xFAD9),
    (0xFE10, 0xFE1F),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFFEF),
];

/// `TokenizerZh._is_chinese_char` as it actually behaves.
pub fn is_chinese_char(c: char) -> bool {
    let cp = u32::from(c);
    CHINESE_RANGES.iter().any(|&(lo, hi)| (lo..=hi).contains(&cp))
}

/// `TokenizerZh.__call__`.
pub(super) fn tokenize_zh(line: &str) -> String {
    let line = py_strip(line);
    let mut spaced = String::with_capacity(line.len() * 2);
    for c in line.chars() {
        if is_chinese_char(c) {
            spaced.push(' ');
            spaced.push(c);
            spaced.push(' ');
        } else {
            spaced.push(c);
        }
    }
    post_tokenize_13a(&spaced)
}
