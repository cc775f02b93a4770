//! The viewer's Python syntax highlighter, server-side, for its code listings: the
//! tree-sitter grammar the static checks parse with (`crate::check`), read for colours.
//!
//! It colours keywords, a few builtins, the name a `def` or `class` defines, strings (whole,
//! prefix and interpolations included), comments and numbers. Code that does not parse
//! still shows: tree-sitter recovers around the error, and whatever it does not name is
//! plain text, and a string that never ends runs to the end of its line (of the source,
//! for a triple quote); it never fails. The output is one HTML fragment per line of the source (as
//! [`str::lines`] counts them, so line `n` of a finding is fragment `n - 1`), every piece
//! of text escaped, every `<span>` closed on its line.

use tree_sitter::{Node, Parser};

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

/// The source cut into pieces that cover it exactly, in order: the coloured nodes of its
/// syntax tree, and plain text between them.
fn tokens(source: &str) -> Vec<(Kind, &str)> {
    let mut coloured = Vec::new();
    let mut parser = Parser::new();
    let parsed = parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .ok()
        .and_then(|()| parser.parse(source, None));
    if let Some(tree) = parsed {
        collect(tree.root_node(), source, &mut coloured);
    }
    let mut out = Vec::new();
    let mut pos = 0;
    for (kind, start, end) in coloured {
        if start < pos {
            continue;
        }
        if start > pos {
            out.push((Kind::Plain, &source[pos..start]));
        }
        out.push((kind, &source[start..end]));
        pos = end;
    }
    if pos < source.len() {
        out.push((Kind::Plain, &source[pos..]));
    }
    out
}

/// The coloured nodes under `node`, in source order, as (kind, start byte, end byte).
fn collect(node: Node, source: &str, out: &mut Vec<(Kind, usize, usize)>) {
    if node.kind() == "string_start" {
        // A string's start outside a string: it never ends (tree-sitter put it in an
        // ERROR), so it runs to the end of its line, or of the source for a triple quote.
        let start = node.start_byte();
        let opening = &source[start..node.end_byte()];
        let triple = opening.ends_with("'''") || opening.ends_with("\"\"\"");
        let rest = &source[start..];
        let end = if triple {
            source.len()
        } else {
            start + rest.find('\n').unwrap_or(rest.len())
        };
        out.push((Kind::String, start, end));
        return;
    }
    match kind_of(node, source) {
        Some(kind) => out.push((kind, node.start_byte(), node.end_byte())),
        None => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                collect(child, source, out);
            }
        }
    }
}

/// The colour of a node that is one piece (a string, a comment, a word), or None to look
/// at its children.
fn kind_of(node: Node, source: &str) -> Option<Kind> {
    let text = || node.utf8_text(source.as_bytes()).unwrap_or("");
    match node.kind() {
        "comment" => Some(Kind::Comment),
        "string" => Some(Kind::String),
        "integer" | "float" => Some(Kind::Number),
        "true" | "false" | "none" => Some(Kind::Keyword),
        "identifier" if defines(node) => Some(Kind::Defined),
        "identifier" if BUILTINS.contains(&text()) => Some(Kind::Builtin),
        "identifier" => Some(Kind::Plain),
        kind if !node.is_named() && KEYWORDS.contains(&kind) => Some(Kind::Keyword),
        _ if node.child_count() == 0 => Some(Kind::Plain),
        _ => None,
    }
}

/// Whether `node` is the name of a `def` or `class`.
fn defines(node: Node) -> bool {
    node.parent().is_some_and(|p| {
        matches!(p.kind(), "function_definition" | "class_definition")
            && p.child_by_field_name("name") == Some(node)
    })
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
