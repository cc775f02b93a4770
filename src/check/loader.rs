//! What ML2B's loader does with the top level, and network imports.
//!
//! The loader (`assets/execute/harness.py`, after ML2B's `python/ast_parser.py`) keeps only
//! imports, `def`/`async def`/`class` (decorated or not), `if` blocks, and "constant-like"
//! assignments: a single `Name` target that is UPPER_CASE (`str.isupper`), starts with `_` or
//! contains `config`/`setting`/`default` (case-insensitive), or any assignment whose value is an
//! `ast.Constant` (`-1` and f-strings are not). Everything else at the top level is dropped.
//!
//! Findings and invariants:
//! - `DroppedTopLevelCode`: one per dropped top-level statement, at its first line. Bare constant
//!   expressions (docstrings, `...`) and `pass` are not reported: dropping them changes nothing.
//! - `GlobalMutableState`: a kept assignment (top level, or anywhere inside a kept top-level `if`
//!   other than `if __name__ == "__main__":`, which never runs under the harness) whose value can
//!   be mutated: a list/dict/set display or comprehension, a generator, or a call other than a
//!   few known immutable constructors; and every `global` statement inside a function.
//! - `NetworkImport`: every `import`/`from … import` anywhere in the file (including inside
//!   functions and `__main__` guards) of a network client module, and `__import__("…")` /
//!   `importlib.import_module("…")` with such a literal name. `urllib.parse` is not a network
//!   module; a bare `import urllib`/`import http`/`import xmlrpc` is, as it is what
//!   `urllib.request.urlopen(...)` code imports.
//! - [`Kept`] lists what the loader keeps (contract functions, other defined names, and the
//!   statements that run at load), for the contract and leakage passes.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::syntax::{descendants, is_constant, line, named, snippet, string_value, text, unparen};
use super::{Finding, FindingKind};

/// Network client modules: a module is one if it equals an entry or is inside it.
const NETWORK_MODULES: &[&str] = &[
    "requests",
    "urllib.request",
    "urllib.error",
    "urllib.robotparser",
    "urllib3",
    "http.client",
    "http.server",
    "http.cookiejar",
    "httpx",
    "aiohttp",
    "httplib2",
    "pycurl",
    "socket",
    "socketserver",
    "ssl",
    "ftplib",
    "smtplib",
    "poplib",
    "imaplib",
    "nntplib",
    "telnetlib",
    "xmlrpc.client",
    "xmlrpc.server",
    "websocket",
    "websockets",
    "paramiko",
    "grpc",
    "tornado",
    "webbrowser",
    "wget",
    "mechanize",
    "kaggle",
    "gdown",
];

/// Parent packages whose bare import is treated as a network import.
const NETWORK_PARENTS: &[&str] = &["urllib", "http", "xmlrpc"];

/// Calls whose result cannot be mutated (last segment of the callee).
const IMMUTABLE_CALLS: &[&str] = &[
    "int",
    "float",
    "str",
    "bool",
    "complex",
    "tuple",
    "frozenset",
    "bytes",
    "range",
    "len",
    "abs",
    "round",
    "min",
    "max",
    "sum",
    "hash",
    "ord",
    "chr",
    "repr",
    "format",
    "object",
    "Path",
    "PurePath",
    "join",
    "getenv",
    "get",
    "compile",
    "namedtuple",
    "NamedTuple",
    "TypeVar",
    "NewType",
    "getLogger",
    "float32",
    "float64",
    "int32",
    "int64",
    "dtype",
    "timedelta",
    "Timedelta",
    "Timestamp",
    "datetime",
    "date",
    "frozendict",
    "MappingProxyType",
    "cpu_count",
    "device",
];

/// What the loader keeps that the other passes need.
#[derive(Default)]
pub(super) struct Kept<'t> {
    /// Top-level functions by name (the last definition wins, as in Python).
    pub functions: HashMap<String, Node<'t>>,
    /// Other names a kept statement defines: classes and imported names.
    pub other_names: HashSet<String>,
    /// Top-level classes by name.
    pub classes: HashMap<String, Node<'t>>,
    /// Kept top-level statements that run at load (constant-like assignments and `if` blocks).
    pub load_statements: Vec<Node<'t>>,
}

/// Runs the loader checks and returns what the loader keeps.
pub(super) fn check<'t>(root: Node<'t>, src: &str, out: &mut Vec<Finding>) -> Kept<'t> {
    let mut kept = Kept::default();
    for stmt in named(root) {
        top_level(stmt, src, &mut kept, out);
    }
    for node in descendants(root) {
        match node.kind() {
            "global_statement" if inside_function(node) => out.push(Finding::new(
                FindingKind::GlobalMutableState,
                line(node),
                format!(
                    "`{}` shares state between calls through a module global",
                    snippet(node, src, 50)
                ),
            )),
            "import_statement" | "import_from_statement" => network_import(node, src, out),
            "call" => dynamic_import(node, src, out),
            _ => {}
        }
    }
    kept
}

fn top_level<'t>(stmt: Node<'t>, src: &str, kept: &mut Kept<'t>, out: &mut Vec<Finding>) {
    match stmt.kind() {
        "import_statement" | "import_from_statement" | "future_import_statement" => {
            for name in imported_names(stmt, src) {
                kept.other_names.insert(name);
            }
        }
        "function_definition" | "class_definition" => define(stmt, src, kept),
        "decorated_definition" => {
            if let Some(def) = stmt.child_by_field_name("definition") {
                define(def, src, kept);
            }
        }
        "if_statement" => {
            if !is_main_guard(stmt, src) {
                kept.load_statements.push(stmt);
                for block in if_blocks(stmt) {
                    kept_block(block, src, kept, out);
                }
            }
        }
        "expression_statement" => {
            let parts = named(stmt);
            match parts.as_slice() {
                [assign] if assign.kind() == "assignment" => {
                    if constant_like(*assign, src) {
                        kept.load_statements.push(stmt);
                        mutable_assignment(*assign, src, out);
                    } else {
                        dropped(stmt, src, "assignment", out);
                    }
                }
                [e] if is_constant(*e, src) => {}
                _ => dropped(stmt, src, "statement", out),
            }
        }
        "pass_statement" => {}
        other => dropped(stmt, src, other.trim_end_matches("_statement"), out),
    }
}

fn define<'t>(def: Node<'t>, src: &str, kept: &mut Kept<'t>) {
    let Some(name) = def.child_by_field_name("name") else {
        return;
    };
    let name = text(name, src).to_string();
    if def.kind() == "function_definition" {
        kept.other_names.remove(&name);
        kept.classes.remove(&name);
        kept.functions.insert(name, def);
    } else {
        kept.functions.remove(&name);
        kept.classes.insert(name.clone(), def);
        kept.other_names.insert(name);
    }
}

/// Statements inside a kept `if` all run: definitions count, and assignments are globals.
fn kept_block<'t>(block: Node<'t>, src: &str, kept: &mut Kept<'t>, out: &mut Vec<Finding>) {
    for stmt in named(block) {
        match stmt.kind() {
            "function_definition" | "class_definition" => define(stmt, src, kept),
            "decorated_definition" => {
                if let Some(def) = stmt.child_by_field_name("definition") {
                    define(def, src, kept);
                }
            }
            "import_statement" | "import_from_statement" => {
                kept.other_names.extend(imported_names(stmt, src));
            }
            "if_statement" => {
                for inner in if_blocks(stmt) {
                    kept_block(inner, src, kept, out);
                }
            }
            "expression_statement" => {
                for part in named(stmt) {
                    if part.kind() == "assignment" {
                        mutable_assignment(part, src, out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The blocks of an `if` statement: the consequence, every `elif` and the `else`.
pub(super) fn if_blocks(stmt: Node) -> Vec<Node> {
    let mut blocks = Vec::new();
    if let Some(b) = stmt.child_by_field_name("consequence") {
        blocks.push(b);
    }
    let mut cursor = stmt.walk();
    for alt in stmt.children_by_field_name("alternative", &mut cursor) {
        if let Some(b) = alt
            .child_by_field_name("consequence")
            .or_else(|| alt.child_by_field_name("body"))
        {
            blocks.push(b);
        }
    }
    blocks
}

/// `if __name__ == "__main__":` (either operand order, either quote).
pub(super) fn is_main_guard(stmt: Node, src: &str) -> bool {
    let Some(cond) = stmt.child_by_field_name("condition") else {
        return false;
    };
    let cond = unparen(cond);
    if cond.kind() != "comparison_operator" {
        return false;
    }
    let parts = named(cond);
    parts.len() == 2
        && text(cond, src).contains("==")
        && parts.iter().any(|p| text(*p, src) == "__name__")
        && parts
            .iter()
            .any(|p| string_value(*p, src).as_deref() == Some("__main__"))
}

fn dropped(stmt: Node, src: &str, what: &str, out: &mut Vec<Finding>) {
    out.push(Finding::new(
        FindingKind::DroppedTopLevelCode,
        line(stmt),
        format!(
            "the loader drops this top-level {what}: `{}`",
            snippet(stmt, src, 50)
        ),
    ));
}

/// The loader's `constant_like` on a tree-sitter `assignment` node.
pub(super) fn constant_like(assign: Node, src: &str) -> bool {
    let annotated = assign.child_by_field_name("type").is_some();
    let mut targets = 1;
    let mut value = assign.child_by_field_name("right");
    while let Some(v) = value.filter(|v| v.kind() == "assignment" && !annotated) {
        targets += 1;
        value = v.child_by_field_name("right");
    }
    let value_constant = value.is_some_and(|v| is_constant(v, src));
    let Some(left) = assign.child_by_field_name("left") else {
        return false;
    };
    if targets != 1 || left.kind() != "identifier" {
        return value_constant;
    }
    let name = text(left, src);
    let lowered = name.to_lowercase();
    py_isupper(name)
        || name.starts_with('_')
        || ["config", "setting", "default"]
            .iter()
            .any(|w| lowered.contains(w))
        || value_constant
}

/// Python's `str.isupper`: at least one cased character and no lowercase one.
fn py_isupper(s: &str) -> bool {
    s.chars().any(|c| c.is_uppercase()) && !s.chars().any(|c| c.is_lowercase())
}

fn mutable_assignment(assign: Node, src: &str, out: &mut Vec<Finding>) {
    let mut value = assign.child_by_field_name("right");
    while let Some(v) = value.filter(|v| v.kind() == "assignment") {
        value = v.child_by_field_name("right");
    }
    let Some(value) = value else { return };
    let target = assign.child_by_field_name("left");
    let upper_name = target.is_some_and(|t| t.kind() == "identifier" && py_isupper(text(t, src)));
    if upper_name && constant_collection(value, src) {
        return; // `DROP = ["id", TARGET]`: a configuration constant by the loader's own rule
    }
    if mutable_value(value, src) {
        let target = assign
            .child_by_field_name("left")
            .map(|l| text(l, src))
            .unwrap_or("?");
        out.push(Finding::new(
            FindingKind::GlobalMutableState,
            line(assign),
            format!("module-level `{target}` is a mutable object shared by every call"),
        ));
    }
}

/// A non-empty list, set or tuple of literals and UPPER_CASE names (nested allowed): what
/// an UPPER_CASE constant holds when it is configuration, not state. Empty containers and
/// dictionaries are not exempt (`CACHE = {}` is the classic shared state).
fn constant_collection(value: Node, src: &str) -> bool {
    let value = unparen(value);
    matches!(value.kind(), "list" | "set" | "tuple")
        && !named(value).is_empty()
        && named(value).into_iter().all(|v| constant_element(v, src))
}

fn constant_element(v: Node, src: &str) -> bool {
    match v.kind() {
        "string" | "concatenated_string" | "integer" | "float" | "true" | "false" | "none" => true,
        "unary_operator" => named(v).into_iter().all(|x| constant_element(x, src)),
        "identifier" => py_isupper(text(v, src)),
        _ => constant_collection(v, src),
    }
}

fn mutable_value(value: Node, src: &str) -> bool {
    let value = unparen(value);
    match value.kind() {
        "list"
        | "dictionary"
        | "set"
        | "list_comprehension"
        | "dictionary_comprehension"
        | "set_comprehension"
        | "generator_expression" => true,
        "tuple" | "expression_list" => named(value).into_iter().any(|v| mutable_value(v, src)),
        "binary_operator" | "conditional_expression" | "boolean_operator" => {
            named(value).into_iter().any(|v| mutable_value(v, src))
        }
        "call" => {
            let Some(func) = value.child_by_field_name("function") else {
                return true;
            };
            let last = match func.kind() {
                "attribute" => func
                    .child_by_field_name("attribute")
                    .map(|a| text(a, src))
                    .unwrap_or(""),
                _ => text(func, src),
            };
            let on_string = func.kind() == "attribute"
                && func
                    .child_by_field_name("object")
                    .is_some_and(|o| string_value(o, src).is_some())
                && last != "split";
            !(IMMUTABLE_CALLS.contains(&last) || on_string)
        }
        _ => false,
    }
}

fn inside_function(node: Node) -> bool {
    let mut cur = node.parent();
    while let Some(n) = cur {
        if n.kind() == "function_definition" {
            return true;
        }
        cur = n.parent();
    }
    false
}

/// Names an import statement binds at the top level.
fn imported_names(stmt: Node, src: &str) -> Vec<String> {
    let mut cursor = stmt.walk();
    stmt.children_by_field_name("name", &mut cursor)
        .map(|n| match n.kind() {
            "aliased_import" => n
                .child_by_field_name("alias")
                .map(|a| text(a, src))
                .unwrap_or("")
                .to_string(),
            _ => text(n, src).split('.').next().unwrap_or("").to_string(),
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// Whether importing dotted module `module` is a network import.
pub(super) fn is_network_module(module: &str, bare: bool) -> bool {
    NETWORK_MODULES
        .iter()
        .any(|m| module == *m || module.starts_with(&format!("{m}.")))
        || (bare && NETWORK_PARENTS.contains(&module))
}

fn network_import(stmt: Node, src: &str, out: &mut Vec<Finding>) {
    let dotted = |n: Node| -> String {
        let n = if n.kind() == "aliased_import" {
            n.child_by_field_name("name").unwrap_or(n)
        } else {
            n
        };
        text(n, src).split_whitespace().collect()
    };
    let mut cursor = stmt.walk();
    let names: Vec<String> = stmt
        .children_by_field_name("name", &mut cursor)
        .map(dotted)
        .collect();
    let mut hits = Vec::new();
    if stmt.kind() == "import_statement" {
        hits.extend(names.into_iter().filter(|m| is_network_module(m, true)));
    } else if let Some(module) = stmt.child_by_field_name("module_name") {
        if module.kind() == "relative_import" {
            return;
        }
        let module = dotted(module);
        if is_network_module(&module, false) {
            hits.push(module);
        } else {
            let wildcard = descendants(stmt).iter().any(|n| n.kind() == "wildcard_import");
            if wildcard && NETWORK_PARENTS.contains(&module.as_str()) {
                hits.push(module.clone());
            }
            hits.extend(
                names
                    .into_iter()
                    .map(|n| format!("{module}.{n}"))
                    .filter(|m| is_network_module(m, false)),
            );
        }
    }
    if !hits.is_empty() {
        out.push(Finding::new(
            FindingKind::NetworkImport,
            line(stmt),
            format!(
                "imports network module `{}`; the benchmark runs offline",
                hits.join("`, `")
            ),
        ));
    }
}

fn dynamic_import(call: Node, src: &str, out: &mut Vec<Finding>) {
    let Some(func) = call.child_by_field_name("function") else {
        return;
    };
    let callee = text(func, src);
    if !matches!(callee, "__import__" | "importlib.import_module" | "import_module") {
        return;
    }
    let Some(args) = call.child_by_field_name("arguments") else {
        return;
    };
    let Some(first) = named(args).into_iter().next() else {
        return;
    };
    if let Some(module) = string_value(first, src).filter(|m| is_network_module(m, true)) {
        out.push(Finding::new(
            FindingKind::NetworkImport,
            line(call),
            format!("imports network module `{module}` dynamically; the benchmark runs offline"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FindingKind, Format, check};

    fn kinds(src: &str, kind: FindingKind) -> Vec<usize> {
        check(src, Format::Mono)
            .into_iter()
            .filter(|f| f.kind == kind)
            .map(|f| f.line)
            .collect()
    }

    const FN: &str = "def train_and_predict(data, X_val):\n    return X_val\n";

    #[test]
    fn constant_like_follows_the_loader() {
        let src = format!(
            "\"\"\"doc\"\"\"\nimport numpy as np\nTARGET = 'y'\n_seed = 1\nmy_config = dict(a=1)\n\
             n_folds = 5\nneg = -1\ndf = np.zeros(3)\nA = B = 2\nx, y = 1, 2\nwarnings_off = True\n\
             print('hi')\nfor i in range(3):\n    pass\nx: int\n{FN}"
        );
        // my_config kept (and mutable: dict(...) is a call); neg, df, x/y tuple, print, for, x: int dropped.
        assert_eq!(
            kinds(&src, FindingKind::DroppedTopLevelCode),
            vec![7, 8, 10, 12, 13, 15]
        );
        assert_eq!(kinds(&src, FindingKind::GlobalMutableState), vec![5]);
    }

    #[test]
    fn mutable_globals_and_global_statements() {
        let src = format!(
            "import pandas as pd\nCACHE = {{}}\nPARAMS: dict = {{'a': 1}}\nSEEDS = (1, 2)\nNAME = 'x'.upper()\n\
             _MODEL = pd.DataFrame()\nif True:\n    state = []\nif __name__ == '__main__':\n    box = []\n\
             def helper():\n    global CACHE\n    CACHE = 1\n{FN}"
        );
        assert_eq!(kinds(&src, FindingKind::GlobalMutableState), vec![2, 3, 6, 8, 12]);
        let constants = format!(
            "T = 'y'\nDROP = ['id', T]\nCOLS = ('a', ('b', -1))\nEMPTY = []\nmixed = ['a']\nLOWER = [t]\n{FN}"
        );
        // `mixed` is lowercase: the loader drops it, so it is dropped code, not shared state.
        assert_eq!(kinds(&constants, FindingKind::GlobalMutableState), vec![4, 6]);
    }

    #[test]
    fn network_imports_in_every_form() {
        let src = format!(
            "import requests\nimport os, urllib.request\nfrom urllib.parse import quote\nfrom urllib import request\n\
             from http import HTTPStatus\nfrom http import client as c\nimport urllib\nimport json\n\
             def f():\n    import socket\n    m = __import__('httpx')\n    from aiohttp import ClientSession\n{FN}"
        );
        assert_eq!(
            kinds(&src, FindingKind::NetworkImport),
            vec![1, 2, 4, 6, 7, 10, 11, 12]
        );
    }
}
