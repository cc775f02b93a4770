//! The crate's import graph, read off `src/` itself: which file's code names which other
//! file's items, so that the architecture test can check its rules transitively and find
//! cycles. A small reader of Rust source, not a compiler: it lexes each file (comments,
//! strings and `#[cfg(test)]` code dropped), expands every `use` tree, follows each
//! `crate::`, `super::`, `self::` and child-module path, and every path through a name that
//! a `use` bound, to the file of the longest module prefix; a name a module only
//! re-exports (`pub use x::Y`, `pub use x::*`) leads on to the file that defines it, so a
//! `mod.rs` that merely gathers its children is no hop of its own.
//!
//! Invariants: every edge carries the line and the path that made it, so a broken rule
//! names its import; a file never depends on itself; declaring a child (`mod x;`) is not
//! an import of it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One import: `from` names `path` (spelled as written, expanded) at `line`, which lives
/// in `to`.
#[derive(Debug, Clone)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub line: usize,
    pub path: String,
}

/// The crate's files (relative to `src/`, e.g. `stages/runner.rs`) and their imports.
#[derive(Debug, Default)]
pub struct Graph {
    pub files: Vec<String>,
    pub edges: Vec<Edge>,
}

/// What the lexer keeps of a file.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Colons,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Pound,
    OpenBracket,
    CloseBracket,
    OpenParen,
    CloseParen,
    Other,
}

/// A file as parsed: its module path, children, re-exports, items and paths.
#[derive(Debug, Default)]
struct Module {
    file: String,
    path: Vec<String>,
    children: BTreeSet<String>,
    test_children: BTreeSet<String>,
    /// `pub use` names: the name and the absolute path it stands for.
    reexports: BTreeMap<String, Vec<String>>,
    /// `pub use m::*`: the modules whose items it re-exports.
    globs: Vec<Vec<String>>,
    /// Items the file defines (functions, types, traits, constants, macros).
    items: BTreeSet<String>,
    /// Every path it names, absolute, with its line.
    paths: Vec<(usize, Vec<String>)>,
}

impl Graph {
    /// Reads every `.rs` file under `src`, skipping `main.rs` (the binary) and test-only
    /// files.
    pub fn read(src: &Path) -> Graph {
        let mut modules = BTreeMap::new();
        for file in rust_files(src) {
            let rel = file
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if rel == "main.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            let module = parse(&rel, &text);
            modules.insert(module.path.clone(), module);
        }
        // Drop the files only tests compile.
        let tests: Vec<Vec<String>> = modules
            .values()
            .flat_map(|m| m.test_children.iter().map(|c| child(&m.path, c)))
            .collect();
        let mut dropped: Vec<Vec<String>> = tests;
        while let Some(path) = dropped.pop() {
            if let Some(m) = modules.remove(&path) {
                dropped.extend(m.children.iter().map(|c| child(&m.path, c)));
            }
        }
        let mut graph = Graph {
            files: modules.values().map(|m| m.file.clone()).collect(),
            edges: Vec::new(),
        };
        for m in modules.values() {
            for (line, path) in &m.paths {
                let Some(to) = resolve(&modules, path, 0) else {
                    continue;
                };
                if to != m.file {
                    graph.edges.push(Edge {
                        from: m.file.clone(),
                        to,
                        line: *line,
                        path: path.join("::"),
                    });
                }
            }
        }
        graph
    }

    /// The files `file` reaches, each with the chain of imports that leads there first.
    pub fn reach(&self, file: &str) -> BTreeMap<String, Vec<Edge>> {
        let mut out: BTreeMap<String, Vec<Edge>> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([(file.to_string(), Vec::new())]);
        while let Some((at, chain)) = queue.pop_front() {
            for e in self.edges.iter().filter(|e| e.from == at) {
                if e.to == file || out.contains_key(&e.to) {
                    continue;
                }
                let mut next: Vec<Edge> = chain.clone();
                next.push(e.clone());
                out.insert(e.to.clone(), next.clone());
                queue.push_back((e.to.clone(), next));
            }
        }
        out
    }

    /// The strongly connected groups of more than one file (Tarjan), each sorted. Every
    /// edge counts, a child's use of its own `mod.rs` too: what a module's parts share (its
    /// error, its types) lives in a leaf file beside them, so a `mod.rs` that drives its
    /// children is never also their vocabulary.
    pub fn cycles(&self) -> Vec<Vec<String>> {
        let index: BTreeMap<&str, usize> = self
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.as_str(), i))
            .collect();
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); self.files.len()];
        for e in &self.edges {
            if let (Some(&a), Some(&b)) = (index.get(e.from.as_str()), index.get(e.to.as_str())) {
                next[a].push(b);
            }
        }
        let mut t = Tarjan {
            next: &next,
            index: vec![None; self.files.len()],
            low: vec![0; self.files.len()],
            on_stack: vec![false; self.files.len()],
            stack: Vec::new(),
            counter: 0,
            groups: Vec::new(),
        };
        for v in 0..self.files.len() {
            if t.index[v].is_none() {
                t.visit(v);
            }
        }
        let mut groups: Vec<Vec<String>> = t
            .groups
            .into_iter()
            .filter(|g| g.len() > 1)
            .map(|g| {
                let mut names: Vec<String> = g.iter().map(|&i| self.files[i].clone()).collect();
                names.sort();
                names
            })
            .collect();
        groups.sort();
        groups
    }
}

struct Tarjan<'a> {
    next: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    counter: usize,
    groups: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.counter);
        self.low[v] = self.counter;
        self.counter += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.next[v] {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(i) if self.on_stack[w] => self.low[v] = self.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut group = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                group.push(w);
                if w == v {
                    break;
                }
            }
            self.groups.push(group);
        }
    }
}

fn child(path: &[String], name: &str) -> Vec<String> {
    let mut p = path.to_vec();
    p.push(name.to_string());
    p
}

/// The file that defines what `path` names: the longest prefix that is a module, then on
/// through re-exports of the name after it.
fn resolve(modules: &BTreeMap<Vec<String>, Module>, path: &[String], depth: usize) -> Option<String> {
    let n = (0..=path.len())
        .rev()
        .find(|&n| modules.contains_key(&path[..n]))?;
    let m = &modules[&path[..n]];
    if n == 0 && path.is_empty() {
        return Some(m.file.clone());
    }
    let Some(item) = path.get(n) else {
        return Some(m.file.clone());
    };
    if depth < 16 {
        if let Some(target) = m.reexports.get(item) {
            let mut full = target.clone();
            full.extend(path[n + 1..].iter().cloned());
            return resolve(modules, &full, depth + 1).or_else(|| Some(m.file.clone()));
        }
        if !m.items.contains(item) {
            for glob in &m.globs {
                let mut full = glob.clone();
                full.extend(path[n..].iter().cloned());
                if let Some(to) = resolve(modules, &full, depth + 1)
                    && modules.values().any(|g| g.file == to && g.items.contains(item))
                {
                    return Some(to);
                }
            }
        }
    }
    Some(m.file.clone())
}

/// Every `.rs` file under `dir`.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// A file's module path from its name under `src/`.
fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(String::from).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

fn parse(rel: &str, text: &str) -> Module {
    let here = module_path(rel);
    let toks = without_tests(lex(text));
    let mut m = Module {
        file: rel.to_string(),
        path: here.clone(),
        ..Module::default()
    };
    // Children and items first: paths may start with a child's name.
    let mut i = 0;
    while i < toks.len() {
        let (_, t) = &toks[i];
        if let Tok::Ident(word) = t {
            let name = match toks.get(i + 1) {
                Some((_, Tok::Ident(n))) => Some(n.clone()),
                _ => None,
            };
            match word.as_str() {
                "mod" => {
                    if let (Some(n), Some((_, Tok::Semi))) = (&name, toks.get(i + 2)) {
                        if cfg_test_before(&toks, i) {
                            m.test_children.insert(n.clone());
                        } else {
                            m.children.insert(n.clone());
                        }
                    }
                }
                "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" | "union" => {
                    if let Some(n) = name {
                        m.items.insert(n);
                    }
                }
                "macro_rules" => {
                    if let Some((_, Tok::Ident(n))) = toks.get(i + 2) {
                        m.items.insert(n.clone());
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    let ctx = Ctx {
        here: &here,
        children: &m.children,
    };
    // `use` trees.
    let mut aliases: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut i = 0;
    let mut in_use = vec![false; toks.len()];
    while i < toks.len() {
        if toks[i].1 == Tok::Ident("use".into()) {
            let public = i > 0 && matches!(&toks[i - 1].1, Tok::Ident(w) if w == "pub")
                || i > 3
                    && matches!(&toks[i - 1].1, Tok::CloseParen)
                    && toks[i - 4].1 == Tok::Ident("pub".into());
            let line = toks[i].0;
            let start = i + 1;
            let mut end = start;
            while end < toks.len() && toks[end].1 != Tok::Semi {
                end += 1;
            }
            for slot in in_use.iter_mut().take(end).skip(i) {
                *slot = true;
            }
            let mut leaves = Vec::new();
            use_tree(&toks[start..end], &[], &mut leaves);
            for (segments, bound) in leaves {
                let Some(abs) = ctx.absolute(&segments) else {
                    continue;
                };
                if bound == "*" {
                    if public {
                        m.globs.push(abs.clone());
                    }
                } else {
                    aliases.insert(bound.clone(), abs.clone());
                    if public {
                        m.reexports.insert(bound, abs.clone());
                    }
                }
                m.paths.push((line, abs));
            }
            i = end;
        }
        i += 1;
    }
    // Paths in code: `a::b::c` chains whose head resolves.
    let mut i = 0;
    while i < toks.len() {
        let starts = !in_use[i]
            && matches!(&toks[i].1, Tok::Ident(_))
            && matches!(toks.get(i + 1), Some((_, Tok::Colons)))
            && !(i > 0 && toks[i - 1].1 == Tok::Colons);
        if !starts {
            i += 1;
            continue;
        }
        let line = toks[i].0;
        let mut segments = Vec::new();
        let mut j = i;
        while let Some((_, Tok::Ident(s))) = toks.get(j) {
            segments.push(s.clone());
            if matches!(toks.get(j + 1), Some((_, Tok::Colons))) {
                j += 2;
            } else {
                j += 1;
                break;
            }
        }
        let abs = match aliases.get(&segments[0]) {
            Some(target) if !matches!(segments[0].as_str(), "crate" | "super" | "self") => {
                let mut full = target.clone();
                full.extend(segments[1..].iter().cloned());
                Some(full)
            }
            _ => ctx.absolute(&segments),
        };
        if let Some(abs) = abs {
            m.paths.push((line, abs));
        }
        i = j.max(i + 1);
    }
    m
}

fn parent_of(path: &[String]) -> Vec<String> {
    path[..path.len().saturating_sub(1)].to_vec()
}

/// Where a file's relative paths start: its module, and the children it declares.
struct Ctx<'a> {
    here: &'a [String],
    children: &'a BTreeSet<String>,
}

impl Ctx<'_> {
    /// `segments` as a path from the crate root, or None when it starts outside the crate.
    fn absolute(&self, segments: &[String]) -> Option<Vec<String>> {
        let head = segments.first()?;
        let mut base: Vec<String>;
        let mut rest = segments;
        match head.as_str() {
            "crate" => {
                base = Vec::new();
                rest = &segments[1..];
            }
            "self" => {
                base = self.here.to_vec();
                rest = &segments[1..];
            }
            "super" => {
                base = parent_of(self.here);
                rest = &segments[1..];
                while rest.first().is_some_and(|s| s == "super") {
                    base = parent_of(&base);
                    rest = &rest[1..];
                }
            }
            name if self.children.contains(name) => base = self.here.to_vec(),
            _ => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }
}

/// Expands a `use` tree into (segments, bound name) leaves; the name is `*` for a glob.
fn use_tree(toks: &[(usize, Tok)], prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
    let mut i = 0;
    let mut path = prefix.to_vec();
    while i < toks.len() {
        match &toks[i].1 {
            Tok::Ident(s) if s == "as" => {
                if let (Some((_, Tok::Ident(alias))), Some(last)) = (toks.get(i + 1), out.last_mut()) {
                    last.1 = alias.clone();
                }
                i += 2;
                continue;
            }
            Tok::Ident(s) => {
                path.push(s.clone());
                let leaf = !matches!(toks.get(i + 1), Some((_, Tok::Colons)));
                if leaf {
                    let bound = if s == "self" {
                        path.pop();
                        path.last().cloned().unwrap_or_default()
                    } else {
                        s.clone()
                    };
                    out.push((path.clone(), bound));
                }
            }
            Tok::Star => out.push((path.clone(), "*".into())),
            Tok::Open => {
                let mut depth = 0;
                let mut j = i;
                let mut start = i + 1;
                while j < toks.len() {
                    match toks[j].1 {
                        Tok::Open => depth += 1,
                        Tok::Close => {
                            depth -= 1;
                            if depth == 0 {
                                use_tree(&toks[start..j], &path, out);
                                break;
                            }
                        }
                        Tok::Comma if depth == 1 => {
                            use_tree(&toks[start..j], &path, out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                    j += 1;
                }
                i = j;
            }
            Tok::Comma => path = prefix.to_vec(),
            _ => {}
        }
        i += 1;
    }
}

/// Whether the attribute just before token `i` (skipping `pub`) is `#[cfg(test)]`.
fn cfg_test_before(toks: &[(usize, Tok)], i: usize) -> bool {
    let mut j = i;
    while j > 0 && matches!(&toks[j - 1].1, Tok::Ident(w) if w == "pub") {
        j -= 1;
    }
    if j < 7 {
        return false;
    }
    let want = [
        Tok::Pound,
        Tok::OpenBracket,
        Tok::Ident("cfg".into()),
        Tok::OpenParen,
        Tok::Ident("test".into()),
        Tok::CloseParen,
        Tok::CloseBracket,
    ];
    toks[j - 7..j].iter().map(|(_, t)| t).eq(want.iter())
}

/// The tokens with every `#[cfg(test)]` item's body cut out.
fn without_tests(toks: Vec<(usize, Tok)>) -> Vec<(usize, Tok)> {
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        let attr = i + 7 <= toks.len() && cfg_test_before(&toks[..i + 7], i + 7);
        if !attr {
            out.push(toks[i].clone());
            i += 1;
            continue;
        }
        // Keep `#[cfg(test)] mod x;` (a test-only child) visible to the parser.
        let mut j = i + 7;
        let mut depth = 0;
        let keep_declaration = matches!(toks.get(j).map(|t| &t.1), Some(Tok::Ident(w)) if w == "mod")
            && matches!(toks.get(j + 2).map(|t| &t.1), Some(Tok::Semi));
        if keep_declaration {
            out.extend(toks[i..j + 3].iter().cloned());
            i = j + 3;
            continue;
        }
        while j < toks.len() {
            match toks[j].1 {
                Tok::Open => depth += 1,
                Tok::Close => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Tok::Semi if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        i = j + 1;
    }
    out
}

/// Identifiers and punctuation with their lines; comments, strings and chars dropped.
fn lex(text: &str) -> Vec<(usize, Tok)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if chars[i] == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            '"' => i = skip_string(&chars, i + 1, &mut line),
            'r' | 'b' if is_raw_string(&chars, i) => {
                let mut j = i;
                while chars[j] != '#' && chars[j] != '"' {
                    j += 1;
                }
                let mut hashes = 0;
                while chars[j] == '#' {
                    hashes += 1;
                    j += 1;
                }
                j += 1;
                loop {
                    if j >= chars.len() {
                        break;
                    }
                    if chars[j] == '\n' {
                        line += 1;
                    }
                    if chars[j] == '"' && (0..hashes).all(|k| chars.get(j + 1 + k) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                i = j;
            }
            'b' if next == Some('"') => i = skip_string(&chars, i + 2, &mut line),
            'b' if next == Some('\'') => i = skip_char(&chars, i + 1).unwrap_or(i + 2),
            '\'' => i = skip_char(&chars, i).unwrap_or(i + 1),
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let word = word.strip_prefix("r#").map(String::from).unwrap_or(word);
                out.push((line, Tok::Ident(word)));
            }
            ':' if next == Some(':') => {
                out.push((line, Tok::Colons));
                i += 2;
            }
            _ => {
                let tok = match c {
                    '{' => Tok::Open,
                    '}' => Tok::Close,
                    ',' => Tok::Comma,
                    ';' => Tok::Semi,
                    '*' => Tok::Star,
                    '#' => Tok::Pound,
                    '[' => Tok::OpenBracket,
                    ']' => Tok::CloseBracket,
                    '(' => Tok::OpenParen,
                    ')' => Tok::CloseParen,
                    c if c.is_whitespace() => {
                        i += 1;
                        continue;
                    }
                    _ => Tok::Other,
                };
                out.push((line, tok));
                i += 1;
            }
        }
    }
    out
}

fn is_raw_string(chars: &[char], i: usize) -> bool {
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return false;
    }
    let mut j = i;
    if chars[j] == 'b' {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return false;
    }
    j += 1;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    chars.get(j) == Some(&'"')
}

/// Past the closing quote of a string whose body starts at `i`.
fn skip_string(chars: &[char], mut i: usize, line: &mut usize) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            '\n' => {
                *line += 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    i
}

/// Past a char literal at `i` (a quote), or None for a lifetime.
fn skip_char(chars: &[char], i: usize) -> Option<usize> {
    match chars.get(i + 1)? {
        '\\' => {
            let mut j = i + 2;
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            Some(j + 1)
        }
        _ if chars.get(i + 2) == Some(&'\'') => Some(i + 3),
        _ => None,
    }
}
