//! Python `str` semantics that sacreBLEU relies on: `split()`, `strip()`,
//! `rstrip()` and `lower()`.
//!
//! Invariant: "whitespace" here is exactly Python's `str.isspace`, which
//! includes the information separators U+001C–U+001F that Rust's
//! `char::is_whitespace` lacks (and excludes nothing Rust has).

/// Python's `str.isspace` for one character.
pub fn is_py_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `s.split()`: the non-empty runs between whitespace.
pub fn py_split(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_py_whitespace).filter(|w| !w.is_empty())
}

/// Python's `' '.join(s.split())`.
pub fn join_words(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in py_split(s) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Python's `s.rstrip()`.
pub fn py_rstrip(s: &str) -> &str {
    s.trim_end_matches(is_py_whitespace)
}

/// Python's `s.strip()`.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_whitespace)
}

/// Python's `s.lower()` (full case mapping, final sigma included).
pub fn py_lower(s: &str) -> String {
    s.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_are_whitespace() {
        let words: Vec<_> = py_split("a\u{1c}b\u{1f}c\u{a0}d\u{3000}e").collect();
        assert_eq!(words, ["a", "b", "c", "d", "e"]);
        assert_eq!(py_rstrip("x \u{1d}\n"), "x");
        assert_eq!(py_strip("\u{85} x \u{2028}"), "x");
    }

    #[test]
    fn join_words_normalises_runs() {
        assert_eq!(join_words("  a \t b\n\nc  "), "a b c");
        assert_eq!(join_words("   "), "");
    }
}
