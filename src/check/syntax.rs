//! Parsing, syntax errors, and small helpers over tree-sitter nodes shared by the other passes.
//!
//! tree-sitter never fails on bad input: it inserts ERROR and MISSING nodes, and its Python
//! grammar still accepts Python 2's `print x` and `exec code`. [`errors`] reports those, plus the
//! errors CPython raises at compile time that the grammar lets through: assigning to something
//! that is not a name, attribute, subscript or unpacking pattern; `return`/`yield` outside a
//! function; `break`/`continue` outside a loop. Invariant: one finding per offending line at most,
//! and an empty result means the file is expected to compile under CPython 3.

use tree_sitter::{Node, Parser, Tree};

use super::{CheckError, Finding, FindingKind};

pub(super) fn parse(source: &str) -> Result<Tree, CheckError> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_python::LANGUAGE.into())?;
    parser.parse(source, None).ok_or(CheckError::ParseAborted)
}

/// 1-based line where `node` starts.
pub(super) fn line(node: Node) -> usize {
    node.start_position().row + 1
}

/// The source text of `node` ("" if it is not valid UTF-8, which a `&str` source rules out).
pub(super) fn text<'s>(node: Node, src: &'s str) -> &'s str {
    node.utf8_text(src.as_bytes()).unwrap_or("")
}

/// The first line of `node`'s text, cut to `max` characters, for messages.
pub(super) fn snippet(node: Node, src: &str, max: usize) -> String {
    let first = text(node, src).lines().next().unwrap_or("").trim();
    if first.chars().count() > max {
        let cut: String = first.chars().take(max).collect();
        format!("{cut}…")
    } else {
        first.to_string()
    }
}

/// Named children, in order.
pub(super) fn named(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|n| n.kind() != "comment")
        .collect()
}

/// All children (named and anonymous), in order.
pub(super) fn children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// Every node of the subtree rooted at `node`, in pre-order.
pub(super) fn descendants(node: Node) -> Vec<Node> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        out.push(n);
        let mut kids = children(n);
        kids.reverse();
        stack.extend(kids);
    }
    out
}

/// Strips any number of parentheses around an expression.
pub(super) fn unparen(mut node: Node) -> Node {
    while node.kind() == "parenthesized_expression" {
        match named(node).first() {
            Some(inner) => node = *inner,
            None => break,
        }
    }
    node
}

/// The value of a plain string literal (no f-string interpolation), or of an implicit
/// concatenation of such literals. Escapes are kept as written.
pub(super) fn string_value(node: Node, src: &str) -> Option<String> {
    let node = unparen(node);
    match node.kind() {
        "string" => {
            let mut out = String::new();
            for part in named(node) {
                match part.kind() {
                    "string_start" | "string_end" => {}
                    "string_content" | "escape_sequence" => out.push_str(text(part, src)),
                    _ => return None,
                }
            }
            Some(out)
        }
        "concatenated_string" => named(node).into_iter().map(|s| string_value(s, src)).collect(),
        _ => None,
    }
}

/// Whether CPython's `ast` would make `node` an `ast.Constant` (numbers, plain strings, bytes,
/// True/False/None, `...`). `-1` is a UnaryOp and f-strings are JoinedStr: not constants.
pub(super) fn is_constant(node: Node, src: &str) -> bool {
    let node = unparen(node);
    match node.kind() {
        "integer" | "float" | "true" | "false" | "none" | "ellipsis" => true,
        "string" | "concatenated_string" => string_value(node, src).is_some(),
        _ => false,
    }
}

/// Syntax errors as CPython 3 would report them (see the module doc).
pub(super) fn errors(root: Node, src: &str) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let mut push = |node: Node, message: String| {
        let line = line(node);
        if !out.iter().any(|f| f.line == line) {
            out.push(Finding::new(FindingKind::SyntaxError, line, message));
        }
    };
    walk(root, src, Ctx::default(), &mut push);
    out
}

#[derive(Clone, Copy, Default)]
struct Ctx {
    in_function: bool,
    in_loop: bool,
}

fn walk(node: Node, src: &str, ctx: Ctx, push: &mut impl FnMut(Node, String)) {
    if node.is_missing() {
        push(node, format!("missing `{}`", node.kind()));
        return;
    }
    if node.is_error() {
        push(node, format!("invalid syntax near `{}`", snippet(node, src, 40)));
        return;
    }
    let mut ctx = ctx;
    match node.kind() {
        "print_statement" => push(node, "Python 2 `print` statement".into()),
        "exec_statement" => push(node, "Python 2 `exec` statement".into()),
        "return_statement" | "yield" if !ctx.in_function => push(
            node,
            format!(
                "`{}` outside a function",
                node.kind().trim_end_matches("_statement")
            ),
        ),
        "break_statement" | "continue_statement" if !ctx.in_loop => push(
            node,
            format!("`{}` outside a loop", node.kind().trim_end_matches("_statement")),
        ),
        "assignment" | "augmented_assignment" => {
            if let Some(left) = node.child_by_field_name("left") {
                let augmented = node.kind() == "augmented_assignment";
                if !valid_target(left, augmented) {
                    push(node, format!("cannot assign to `{}`", snippet(left, src, 40)));
                }
            }
        }
        "function_definition" | "lambda" => {
            ctx = Ctx {
                in_function: true,
                in_loop: false,
            }
        }
        "class_definition" => {
            ctx = Ctx {
                in_function: false,
                in_loop: false,
            }
        }
        _ => {}
    }
    for child in children(node) {
        let mut child_ctx = ctx;
        let loop_body = matches!(node.kind(), "for_statement" | "while_statement")
            && node
                .child_by_field_name("body")
                .is_some_and(|b| b.id() == child.id());
        if loop_body {
            child_ctx.in_loop = true;
        }
        walk(child, src, child_ctx, push);
    }
}

fn valid_target(node: Node, augmented: bool) -> bool {
    match node.kind() {
        "identifier" | "attribute" | "subscript" => true,
        "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" | "expression_list" => {
            !augmented && named(node).into_iter().all(|n| valid_target(n, false))
        }
        "list_splat_pattern" | "list_splat" => {
            !augmented && named(node).into_iter().all(|n| valid_target(n, false))
        }
        "parenthesized_expression" => named(node).into_iter().all(|n| valid_target(n, augmented)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FindingKind, Format, check};

    fn kinds(src: &str) -> Vec<(FindingKind, usize)> {
        check(src, Format::Mono)
            .into_iter()
            .map(|f| (f.kind, f.line))
            .collect()
    }

    #[test]
    fn python2_print_is_a_syntax_error() {
        let src = "def train_and_predict(data, X_val):\n    print 'hi'\n    return 1\n";
        assert_eq!(kinds(src), vec![(FindingKind::SyntaxError, 2)]);
    }

    #[test]
    fn notebook_magic_is_a_syntax_error() {
        let src = "!pip install lightgbm\ndef train_and_predict(data, X_val):\n    return 1\n";
        assert_eq!(kinds(src), vec![(FindingKind::SyntaxError, 1)]);
    }

    #[test]
    fn unclosed_paren_is_a_syntax_error() {
        let src = "def train_and_predict(data, X_val):\n    return f(1\n";
        assert!(kinds(src).iter().all(|(k, _)| *k == FindingKind::SyntaxError));
        assert!(!kinds(src).is_empty());
    }

    #[test]
    fn bad_targets_and_misplaced_return() {
        let src = "def train_and_predict(data, X_val):\n    f() = 1\n    return 1\nreturn 2\nbreak\n";
        assert_eq!(
            kinds(src),
            vec![
                (FindingKind::SyntaxError, 2),
                (FindingKind::SyntaxError, 4),
                (FindingKind::SyntaxError, 5)
            ]
        );
    }

    #[test]
    fn valid_code_has_no_syntax_error() {
        let src = "def train_and_predict(data, X_val):\n    a, *b = [1, 2]\n    for i in b:\n        \
                   if i:\n            continue\n    x = lambda: (yield)\n    return a\n";
        assert!(
            kinds(src).iter().all(|(k, _)| *k != FindingKind::SyntaxError),
            "{:?}",
            kinds(src)
        );
    }
}
