//! A small Python syntax highlighter, server-side, for the viewer's code listings.
//!
//! It colours keywords, a few builtins, the name after `def`/`class`, strings (with their
//! `r`/`b`/`f`/`u` prefixes, triple-quoted ones across lines, an unterminated one up to the
//! end of its line), comments and numbers. It is a lexer, not a parser: whatever it does not
//! know is plain text, and it never fails. The output is one HTML fragment per line of the
//! source (as [`str::lines`] counts them, so line `n` of a finding is fragment `n - 1`),
//! every piece of text escaped, every `<span>` closed on its line.

use super::html::escape;

/// What a piece of source is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Plain,
    Keyword,
    Builtin,
    /// The name a `def` or `class` defines.
    Defined,
    String,
    Comment,
    Number,
}

impl Kind {
    /// The CSS class of the `<span>` around it (plain text has none).
    fn class(self) -> Option<&'static str> {
        match self {
            Self::Plain => None,
            Self::Keyword => Some("kw"),
            Self::Builtin => Some("bi"),
            Self::Defined => Some("fn"),
            Self::String => Some("st"),
            Self::Comment => Some("cm"),
            Self::Number => Some("nu"),
        }
    }
}

const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
    "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

const BUILTINS: [&str; 28] = [
    "abs",
    "all",
    "any",
    "bool",
    "dict",
    "enumerate",
    "Exception",
    "filter",
    "float",
    "getattr",
    "hasattr",
    "int",
    "isinstance",
    "len",
    "list",
    "map",
    "max",
    "min",
    "object",
    "open",
    "print",
    "range",
    "round",
    "self",
    "set",
    "sorted",
    "str",
    "sum",
];

/// The source as one escaped, highlighted HTML fragment per line.
pub(crate) fn highlight(source: &str) -> Vec<String> {
    let source = source.replace("\r\n", "\n");
    let mut lines = vec![String::new()];
    for (kind, text) in tokens(&source) {
        for (i, piece) in text.split('\n').enumerate() {
            if i > 0 {
                lines.push(String::new());
            }
            let line = lines.last_mut().expect("never empty");
            push(line, kind, piece);
        }
    }
    // `str::lines` does not count the empty line after a final newline.
    if source.is_empty() || source.ends_with('\n') {
        lines.pop();
    }
    lines
}

fn push(line: &mut String, kind: Kind, piece: &str) {
    match kind.class() {
        _ if piece.is_empty() => {}
        None => line.push_str(&escape(piece)),
        Some(class) => {
            line.push_str(&format!("<span class=\"{class}\">{}</span>", escape(piece)));
        }
    }
}

/// The source cut into pieces that cover it exactly, in order.
fn tokens(source: &str) -> Vec<(Kind, &str)> {
    let mut out: Vec<(Kind, &str)> = Vec::new();
    let mut pos = 0;
    let mut defining = false;
    while pos < source.len() {
        let rest = &source[pos..];
        let (kind, len) = token(rest, defining);
        let text = &rest[..len];
        if kind != Kind::Plain || !text.trim().is_empty() {
            defining = kind == Kind::Keyword && (text == "def" || text == "class");
        }
        match out.last_mut() {
            Some((Kind::Plain, last)) if kind == Kind::Plain => {
                *last = &source[pos - last.len()..pos + len];
            }
            _ => out.push((kind, text)),
        }
        pos += len;
    }
    out
}

/// The kind and byte length of the token `rest` starts with (never 0).
fn token(rest: &str, defining: bool) -> (Kind, usize) {
    let c = rest.chars().next().expect("not empty");
    if c == '#' {
        return (Kind::Comment, rest.find('\n').unwrap_or(rest.len()));
    }
    if let Some(len) = string_len(rest) {
        return (Kind::String, len);
    }
    let digit_after_dot = || rest[1..].starts_with(|d: char| d.is_ascii_digit());
    if c.is_ascii_digit() || (c == '.' && digit_after_dot()) {
        return (Kind::Number, number_len(rest));
    }
    if c == '_' || c.is_alphabetic() {
        let len = rest
            .find(|c: char| !(c == '_' || c.is_alphanumeric()))
            .unwrap_or(rest.len());
        return (word(&rest[..len], defining), len);
    }
    (Kind::Plain, c.len_utf8())
}

fn word(word: &str, defining: bool) -> Kind {
    if KEYWORDS.contains(&word) {
        Kind::Keyword
    } else if defining {
        Kind::Defined
    } else if BUILTINS.contains(&word) {
        Kind::Builtin
    } else {
        Kind::Plain
    }
}

/// The length of the string literal `rest` starts with, prefix included, if it starts one.
/// A backslash escapes the next byte (in raw strings too: `r"\""` is one string).
fn string_len(rest: &str) -> Option<usize> {
    let prefix = rest.bytes().take_while(|b| b"rRbBuUfF".contains(b)).count();
    if prefix > 2 {
        return None;
    }
    let body = &rest.as_bytes()[prefix..];
    let quote = *body.first().filter(|q| **q == b'\'' || **q == b'"')?;
    let quotes = [quote; 3];
    let triple = body.starts_with(&quotes);
    let delimiter = if triple { &quotes[..] } else { &quotes[..1] };
    let mut i = delimiter.len();
    while i < body.len() {
        match body[i] {
            b'\\' => i += 2,
            b'\n' if !triple => return Some(prefix + i),
            _ if body[i..].starts_with(delimiter) => return Some(prefix + i + delimiter.len()),
            _ => i += 1,
        }
    }
    Some(rest.len())
}

/// The length of the number `rest` starts with: digits, letters (`0x1F`, `1e5`, `2j`),
/// `_`, `.` and the sign of an exponent.
fn number_len(rest: &str) -> usize {
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let exponent_sign = (b == b'+' || b == b'-') && i > 0 && matches!(bytes[i - 1], b'e' | b'E');
        if !(b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || exponent_sign) {
            break;
        }
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(line: &str, class: &str) -> Vec<String> {
        let open = format!("<span class=\"{class}\">");
        line.split(&open)
            .skip(1)
            .map(|s| s.split("</span>").next().unwrap().to_string())
            .collect()
    }

    #[test]
    fn keywords_builtins_and_defined_names() {
        let lines = highlight("def train(x):\n    return len(x) if x else None\nclass Model: pass\n");
        assert_eq!(lines.len(), 3);
        assert_eq!(spans(&lines[0], "kw"), ["def"]);
        assert_eq!(spans(&lines[0], "fn"), ["train"]);
        assert_eq!(spans(&lines[1], "kw"), ["return", "if", "else", "None"]);
        assert_eq!(spans(&lines[1], "bi"), ["len"]);
        assert_eq!(spans(&lines[2], "fn"), ["Model"]);
        assert!(spans(&lines[1], "fn").is_empty(), "x is no definition");
    }

    #[test]
    fn strings_comments_and_numbers() {
        let lines = highlight("s = f'a # b' + \"c\\\"d\"  # note\nn = 1e-5 + 0x1F + .5 + 3_000j\n");
        assert_eq!(
            spans(&lines[0], "st"),
            ["f&#39;a # b&#39;", "&quot;c\\&quot;d&quot;"]
        );
        assert_eq!(spans(&lines[0], "cm"), ["# note"]);
        assert_eq!(spans(&lines[1], "nu"), ["1e-5", "0x1F", ".5", "3_000j"]);
        assert!(spans(&lines[1], "st").is_empty());
    }

    #[test]
    fn a_triple_quoted_string_spans_its_lines() {
        let lines = highlight("x = \"\"\"one\n'two' # not a comment\nthree\"\"\" # c\ny = 1");
        assert_eq!(lines.len(), 4);
        assert_eq!(spans(&lines[0], "st"), ["&quot;&quot;&quot;one"]);
        assert_eq!(spans(&lines[1], "st"), ["&#39;two&#39; # not a comment"]);
        assert!(spans(&lines[1], "cm").is_empty());
        assert_eq!(spans(&lines[2], "st"), ["three&quot;&quot;&quot;"]);
        assert_eq!(spans(&lines[2], "cm"), ["# c"]);
        assert_eq!(spans(&lines[3], "nu"), ["1"]);
    }

    #[test]
    fn an_unterminated_string_ends_with_its_line() {
        let lines = highlight("a = 'open\nb = 2\nc = '''never closed\nd");
        assert_eq!(spans(&lines[0], "st"), ["&#39;open"]);
        assert_eq!(spans(&lines[1], "nu"), ["2"]);
        assert_eq!(spans(&lines[3], "st"), ["d"], "the triple quote runs to the end");
    }

    #[test]
    fn every_line_is_escaped_and_counted_as_str_lines_counts() {
        let tags = regex::Regex::new(r#"<span class="[a-z]+">|</span>"#).unwrap();
        for source in [
            "",
            "\n",
            "a\n\nb",
            "a\r\nb\r\n",
            "if a<b and c>d: s = '<&>'\n",
            "é = 'ü' # ☃\nπ = 3.14",
            "x = r'\\' \\\n",
        ] {
            let lines = highlight(source);
            assert_eq!(lines.len(), source.lines().count(), "{source:?}");
            for line in &lines {
                let text = tags.replace_all(line, "");
                assert!(!text.contains(['<', '>', '"', '\'']), "{line}");
            }
        }
        assert_eq!(
            highlight("if a<b: s = '<&>'")[0],
            "<span class=\"kw\">if</span> a&lt;b: s = <span class=\"st\">&#39;&lt;&amp;&gt;&#39;</span>"
        );
    }
}
