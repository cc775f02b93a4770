//! The abstract interpreter: statements and expressions (calls are in `calls`).
//!
//! It runs a function body once, in order, on [`Val`]s instead of Python values. Invariants:
//! - Branches whose condition is not a known constant are all run from the same environment and
//!   joined; loops run their body twice (enough for values to flow around the back edge once),
//!   except a loop over a literal list/tuple of at most [`UNROLL`] items, which runs the body once
//!   per item in order.
//! - Calls to functions of the submission are analysed inline with the argument values (depth at
//!   most [`MAX_DEPTH`], no recursion), so a helper is judged by what it is given at each call;
//!   a top-level function called again with equal arguments returns its remembered result.
//! - After [`STEP_BUDGET`] statements (only pathological inputs get there) calls are no longer
//!   inlined and loops run once: the analysis always ends quickly, at the price of precision.
//! - Nothing here reports a finding except through [`Interp::report`], which records the line of
//!   the node and, inside an inlined helper, which call led there.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::super::syntax::{children, line, named, snippet, string_value, text, unparen};
use super::super::{Finding, FindingKind};
use super::value::{Base, EstKinds, Key, Konst, Mark, Mask, Origins, Val, has_base};

pub(super) type Env = HashMap<String, Val>;

/// Loops over literal sequences up to this length are unrolled.
pub(super) const UNROLL: usize = 8;
/// Inlined call depth.
pub(super) const MAX_DEPTH: usize = 6;
/// Statements executed before the analysis stops inlining calls and runs loops once.
pub(super) const STEP_BUDGET: usize = 200_000;
/// Expression nesting evaluated precisely; deeper subexpressions count as unknown values.
const MAX_EVAL_DEPTH: usize = 150;
/// Remembered results per function of the submission.
const MEMO_PER_FUNCTION: usize = 32;

/// A remembered inlined call: positional and keyword arguments, module version, result.
pub(super) type MemoEntry = (Vec<Val>, Vec<(String, Val)>, u64, Val);

pub(super) struct Interp<'t> {
    pub src: &'t str,
    pub functions: HashMap<String, Node<'t>>,
    pub classes: HashMap<String, EstKinds>,
    pub class_defs: HashMap<String, Node<'t>>,
    pub module_env: Env,
    pub findings: Vec<Finding>,
    interned: HashMap<String, u64>,
    pub stack: Vec<usize>,
    pub via: Vec<(String, usize)>,
    /// Results of inlined calls of top-level functions, by definition node id.
    memo: HashMap<usize, Vec<MemoEntry>>,
    /// Bumped whenever a module global changes, so remembered results are not reused across it.
    pub module_version: u64,
    steps: usize,
    eval_depth: usize,
}

pub(super) struct Frame<'t> {
    pub env: Env,
    pub defs: HashMap<String, Node<'t>>,
    pub globals: HashSet<String>,
    pub ret: Option<Val>,
}

impl<'t> Frame<'t> {
    pub(super) fn new(env: Env) -> Frame<'t> {
        Frame {
            env,
            defs: HashMap::new(),
            globals: HashSet::new(),
            ret: None,
        }
    }
}

pub(super) fn join_env(a: &Env, b: &Env) -> Env {
    let mut out = a.clone();
    for (k, v) in b {
        let joined = match out.get(k) {
            Some(x) => x.join(v),
            None => v.clone(),
        };
        out.insert(k.clone(), joined);
    }
    out
}

impl<'t> Interp<'t> {
    pub(super) fn new(
        src: &'t str,
        functions: HashMap<String, Node<'t>>,
        classes: HashMap<String, EstKinds>,
        class_defs: HashMap<String, Node<'t>>,
    ) -> Self {
        Interp {
            src,
            functions,
            classes,
            class_defs,
            module_env: Env::new(),
            findings: Vec::new(),
            interned: HashMap::new(),
            stack: Vec::new(),
            via: Vec::new(),
            memo: HashMap::new(),
            module_version: 0,
            steps: 0,
            eval_depth: 0,
        }
    }

    pub(super) fn text(&self, node: Node) -> &'t str {
        text(node, self.src)
    }

    /// A split id for a text key (slices, masks), distinct from node ids.
    pub(super) fn intern(&mut self, key: String) -> u64 {
        let next = (1u64 << 40) + self.interned.len() as u64;
        *self.interned.entry(key).or_insert(next)
    }

    pub(super) fn report(&mut self, kind: FindingKind, node: Node, what: String) {
        let mut message = what;
        if let Some((name, call_line)) = self.via.first() {
            message.push_str(&format!(" (in `{name}`, called on line {call_line})"));
        }
        let line = line(node);
        if !self.findings.iter().any(|f| f.kind == kind && f.line == line) {
            self.findings.push(Finding::new(kind, line, message));
        }
    }

    pub(super) fn snippet(&self, node: Node) -> String {
        snippet(node, self.src, 60)
    }

    // ----- names -----

    pub(super) fn is_unbound(&self, name: &str, f: &Frame<'t>) -> bool {
        !f.env.contains_key(name)
            && !f.defs.contains_key(name)
            && !self.module_env.contains_key(name)
            && !self.functions.contains_key(name)
            && !self.classes.contains_key(name)
    }

    pub(super) fn lookup(&self, name: &str, f: &Frame<'t>) -> Val {
        if f.globals.contains(name) {
            return self.module_env.get(name).cloned().unwrap_or_default();
        }
        if let Some(v) = f.env.get(name) {
            return v.clone();
        }
        if f.defs.contains_key(name)
            || (self.functions.contains_key(name) && !self.module_env.contains_key(name))
        {
            return Val {
                func: Some(name.to_string()),
                ..Val::default()
            };
        }
        self.module_env.get(name).cloned().unwrap_or_default()
    }

    pub(super) fn assign(&mut self, name: &str, v: Val, f: &mut Frame<'t>) {
        if f.globals.contains(name) {
            self.module_env.insert(name.to_string(), v);
            self.module_version += 1;
        } else {
            f.env.insert(name.to_string(), v);
        }
    }

    /// The function definition a callee name refers to, if the submission defines it.
    pub(super) fn user_function(&self, name: &str, f: &Frame<'t>) -> Option<(Node<'t>, bool)> {
        if let Some(v) = f.env.get(name) {
            let target = v.func.as_deref()?;
            return f
                .defs
                .get(target)
                .map(|d| (*d, true))
                .or_else(|| self.functions.get(target).map(|d| (*d, false)));
        }
        f.defs
            .get(name)
            .map(|d| (*d, true))
            .or_else(|| self.functions.get(name).map(|d| (*d, false)))
    }

    // ----- statements -----

    pub(super) fn exec_block(&mut self, block: Node<'t>, f: &mut Frame<'t>) {
        for stmt in named(block) {
            self.exec_stmt(stmt, f);
        }
    }

    /// Whether the step budget is spent (pathological inputs): from then on calls are not
    /// inlined and loops run once, so the analysis stays fast but may miss facts.
    pub(super) fn exhausted(&self) -> bool {
        self.steps > STEP_BUDGET
    }

    pub(super) fn memo_get(&self, def: usize, pos: &[Val], kw: &[(String, Val)]) -> Option<Val> {
        let entries = self.memo.get(&def)?;
        entries
            .iter()
            .find(|(p, k, v, _)| p == pos && k == kw && *v == self.module_version)
            .map(|(_, _, _, r)| r.clone())
    }

    pub(super) fn memo_put(&mut self, def: usize, pos: Vec<Val>, kw: Vec<(String, Val)>, result: Val) {
        let version = self.module_version;
        let entries = self.memo.entry(def).or_default();
        if entries.len() < MEMO_PER_FUNCTION {
            entries.push((pos, kw, version, result));
        }
    }

    pub(super) fn exec_stmt(&mut self, s: Node<'t>, f: &mut Frame<'t>) {
        self.steps += 1;
        match s.kind() {
            "expression_statement" => {
                for e in named(s) {
                    match e.kind() {
                        "assignment" => self.exec_assign(e, f),
                        "augmented_assignment" => self.exec_aug_assign(e, f),
                        _ => {
                            self.eval(e, f);
                        }
                    }
                }
            }
            "return_statement" => {
                let v = named(s)
                    .first()
                    .map(|e| self.eval(*e, f))
                    .unwrap_or(Val::konst(Konst::None));
                f.ret = Some(match f.ret.take() {
                    Some(r) => r.join(&v),
                    None => v,
                });
            }
            "if_statement" => self.exec_if(s, f),
            "for_statement" => self.exec_for(s, f),
            "while_statement" => {
                if let Some(c) = s.child_by_field_name("condition") {
                    self.eval(c, f);
                }
                if let Some(body) = s.child_by_field_name("body") {
                    self.loop_twice(body, f, None);
                }
                if let Some(alt) = s.child_by_field_name("alternative") {
                    self.exec_clause_body(alt, f);
                }
            }
            "try_statement" => {
                if let Some(body) = s.child_by_field_name("body") {
                    self.exec_block(body, f);
                }
                let after_body = f.env.clone();
                let mut joined = after_body.clone();
                for clause in named(s) {
                    match clause.kind() {
                        "except_clause" | "except_group_clause" => {
                            f.env = after_body.clone();
                            self.exec_clause_body(clause, f);
                            joined = join_env(&joined, &f.env);
                        }
                        "else_clause" => {
                            f.env = joined.clone();
                            self.exec_clause_body(clause, f);
                            joined = join_env(&joined, &f.env);
                        }
                        _ => {}
                    }
                }
                f.env = joined;
                if let Some(fin) = named(s).into_iter().find(|c| c.kind() == "finally_clause") {
                    self.exec_clause_body(fin, f);
                }
            }
            "with_statement" => {
                for clause in named(s).into_iter().filter(|c| c.kind() == "with_clause") {
                    for item in named(clause) {
                        let Some(value) = item.child_by_field_name("value") else {
                            continue;
                        };
                        if value.kind() == "as_pattern" {
                            let v = named(value).first().map(|e| self.eval(*e, f)).unwrap_or_default();
                            if let Some(alias) = value.child_by_field_name("alias") {
                                for target in named(alias) {
                                    self.bind(target, v.clone(), f);
                                }
                            }
                        } else {
                            self.eval(value, f);
                        }
                    }
                }
                if let Some(body) = s.child_by_field_name("body") {
                    self.exec_block(body, f);
                }
            }
            "function_definition" => {
                if let Some(name) = s.child_by_field_name("name") {
                    let name = self.text(name).to_string();
                    f.env.remove(&name);
                    f.defs.insert(name, s);
                }
            }
            "decorated_definition" => {
                if let Some(def) = s.child_by_field_name("definition") {
                    self.exec_stmt(def, f);
                }
            }
            "global_statement" => {
                for n in named(s) {
                    f.globals.insert(self.text(n).to_string());
                }
            }
            "match_statement" => {
                if let Some(subject) = s.child_by_field_name("subject") {
                    self.eval(subject, f);
                }
                let blocks: Vec<Node<'t>> = s
                    .child_by_field_name("body")
                    .map(named)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|c| c.child_by_field_name("consequence"))
                    .collect();
                self.branches(f, blocks, true);
            }
            "raise_statement" | "assert_statement" | "delete_statement" => {
                for e in named(s) {
                    self.eval(e, f);
                }
            }
            _ => {}
        }
    }

    /// The block of an except/else/finally clause (its last named child).
    fn exec_clause_body(&mut self, clause: Node<'t>, f: &mut Frame<'t>) {
        if let Some(body) = clause.child_by_field_name("body") {
            self.exec_block(body, f);
        } else if let Some(block) = named(clause).into_iter().rev().find(|c| c.kind() == "block") {
            self.exec_block(block, f);
        }
    }

    fn branches(&mut self, f: &mut Frame<'t>, bodies: Vec<Node<'t>>, fallthrough: bool) {
        let start = f.env.clone();
        let mut result: Option<Env> = fallthrough.then(|| start.clone());
        for body in bodies {
            f.env = start.clone();
            self.exec_block(body, f);
            result = Some(match result {
                Some(r) => join_env(&r, &f.env),
                None => f.env.clone(),
            });
        }
        f.env = result.unwrap_or(start);
    }

    fn exec_if(&mut self, s: Node<'t>, f: &mut Frame<'t>) {
        let mut clauses: Vec<(Option<Node<'t>>, Node<'t>)> = Vec::new();
        if let (Some(c), Some(b)) = (
            s.child_by_field_name("condition"),
            s.child_by_field_name("consequence"),
        ) {
            clauses.push((Some(c), b));
        }
        let mut cursor = s.walk();
        for alt in s.children_by_field_name("alternative", &mut cursor) {
            match alt.kind() {
                "elif_clause" => {
                    if let (Some(c), Some(b)) = (
                        alt.child_by_field_name("condition"),
                        alt.child_by_field_name("consequence"),
                    ) {
                        clauses.push((Some(c), b));
                    }
                }
                _ => {
                    if let Some(b) = alt.child_by_field_name("body") {
                        clauses.push((None, b));
                    }
                }
            }
        }
        let mut bodies = Vec::new();
        let mut fallthrough = true;
        for (cond, body) in clauses {
            let truth = match cond {
                Some(c) => self.eval(c, f).truthy(),
                None => Some(true),
            };
            match truth {
                Some(true) => {
                    bodies.push(body);
                    fallthrough = false;
                    break;
                }
                Some(false) => {}
                None => bodies.push(body),
            }
        }
        self.branches(f, bodies, fallthrough);
    }

    fn exec_for(&mut self, s: Node<'t>, f: &mut Frame<'t>) {
        let (Some(left), Some(right), Some(body)) = (
            s.child_by_field_name("left"),
            s.child_by_field_name("right"),
            s.child_by_field_name("body"),
        ) else {
            return;
        };
        let iter = self.eval(right, f);
        let literal: Option<Vec<Val>> = match (&iter.fields, &iter.elem) {
            (Some(fields), None)
                if !fields.is_empty()
                    && fields.len() <= UNROLL
                    && fields.keys().all(|k| matches!(k, Key::Idx(_))) =>
            {
                Some(fields.values().cloned().collect())
            }
            _ => None,
        };
        match literal {
            Some(items) => {
                for item in items {
                    self.bind(left, item, f);
                    self.exec_block(body, f);
                }
            }
            None => {
                let elem = iter.element();
                self.loop_twice(body, f, Some((left, elem)));
            }
        }
        if let Some(alt) = s.child_by_field_name("alternative") {
            self.exec_clause_body(alt, f);
        }
    }

    fn loop_twice(&mut self, body: Node<'t>, f: &mut Frame<'t>, target: Option<(Node<'t>, Val)>) {
        let passes = if self.exhausted() { 1 } else { 2 };
        for _ in 0..passes {
            let start = f.env.clone();
            if let Some((t, v)) = &target {
                self.bind(*t, v.clone(), f);
            }
            self.exec_block(body, f);
            f.env = join_env(&start, &f.env);
        }
    }

    fn exec_assign(&mut self, a: Node<'t>, f: &mut Frame<'t>) {
        let Some(right) = a.child_by_field_name("right") else {
            return;
        };
        let mut targets = vec![];
        if let Some(l) = a.child_by_field_name("left") {
            targets.push(l);
        }
        let mut value_node = right;
        while value_node.kind() == "assignment" {
            if let Some(l) = value_node.child_by_field_name("left") {
                targets.push(l);
            }
            match value_node.child_by_field_name("right") {
                Some(r) => value_node = r,
                None => return,
            }
        }
        let v = self.eval(value_node, f);
        for t in targets {
            self.bind(t, v.clone(), f);
        }
    }

    fn exec_aug_assign(&mut self, a: Node<'t>, f: &mut Frame<'t>) {
        let (Some(left), Some(right)) = (a.child_by_field_name("left"), a.child_by_field_name("right"))
        else {
            return;
        };
        let op = a
            .child_by_field_name("operator")
            .map(|o| self.text(o))
            .unwrap_or("+=");
        let l = self.eval(left, f);
        let r = self.eval(right, f);
        let v = self.binop(a, &l, &r, op.trim_end_matches('='));
        self.bind(left, v, f);
    }

    /// Binds an assignment target (name, unpacking pattern, subscript or attribute) to `v`.
    pub(super) fn bind(&mut self, target: Node<'t>, v: Val, f: &mut Frame<'t>) {
        match target.kind() {
            "identifier" => {
                let name = self.text(target).to_string();
                self.assign(&name, v, f);
            }
            "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" | "expression_list" => {
                let items = named(target);
                let star = items
                    .iter()
                    .position(|n| matches!(n.kind(), "list_splat_pattern" | "list_splat"));
                let n = items.len() as i64;
                for (i, item) in items.iter().enumerate() {
                    let key = match star {
                        Some(s) if i == s => None,
                        Some(s) if i > s => Some(Key::Idx(i as i64 - n)),
                        _ => Some(Key::Idx(i as i64)),
                    };
                    let part = match key {
                        Some(k) => v.field(Some(&k)),
                        None => v.flatten(),
                    };
                    self.bind(*item, part, f);
                }
            }
            "parenthesized_expression" | "list_splat_pattern" | "list_splat" => {
                if let Some(inner) = named(target).first() {
                    self.bind(*inner, v, f);
                }
            }
            "subscript" => self.store_subscript(target, v, f),
            "attribute" => {
                let Some(obj) = target.child_by_field_name("object") else {
                    return;
                };
                let attr = target
                    .child_by_field_name("attribute")
                    .map(|a| self.text(a).to_string());
                if let (true, Some(attr)) = (obj.kind() == "identifier", attr) {
                    let name = self.text(obj).to_string();
                    let mut cur = self.lookup(&name, f);
                    if let Some(fields) = cur.fields.as_mut() {
                        fields.insert(Key::Str(attr), v);
                        self.assign(&name, cur, f);
                        return;
                    }
                }
                if let Some(root) = self.root_name(obj).filter(|r| r != "self") {
                    let cur = self.lookup(&root, f);
                    let updated = if cur.is_data() {
                        absorb(&cur, &v)
                    } else {
                        cur.join(&v.info())
                    };
                    self.assign(&root, updated, f);
                }
            }
            _ => {}
        }
    }

    /// The identifier at the root of `a.b[c].d`, if any.
    pub(super) fn root_name(&self, mut node: Node<'t>) -> Option<String> {
        loop {
            match node.kind() {
                "identifier" => return Some(self.text(node).to_string()),
                "attribute" => node = node.child_by_field_name("object")?,
                "subscript" => node = node.child_by_field_name("value")?,
                "parenthesized_expression" => node = unparen(node),
                _ => return None,
            }
        }
    }

    fn store_subscript(&mut self, target: Node<'t>, v: Val, f: &mut Frame<'t>) {
        let Some(base) = target.child_by_field_name("value") else {
            return;
        };
        let mut cursor = target.walk();
        let subs: Vec<Node<'t>> = target.children_by_field_name("subscript", &mut cursor).collect();
        let keys: Vec<Val> = subs
            .iter()
            .map(|s| {
                if s.kind() == "slice" {
                    Val::default()
                } else {
                    self.eval(*s, f)
                }
            })
            .collect();
        let Some(root) = self.root_name(base) else { return };
        if root == "self" {
            return;
        }
        let cur = self.lookup(&root, f);
        let direct = base.kind() == "identifier";
        let key = keys.first().and_then(|k| key_of(k.konst.as_ref()));
        let updated = if direct && cur.fields.is_some() && key.is_some() && subs.len() == 1 {
            let mut c = cur.clone();
            if let (Some(fields), Some(k)) = (c.fields.as_mut(), key) {
                fields.insert(k, v.clone());
            }
            c
        } else if cur.is_data() {
            if v.is_val_stat() && cur.is_feature_data() {
                let msg = format!(
                    "`{}` writes a statistic of validation rows into the data",
                    self.snippet(target)
                );
                self.report(FindingKind::LeakagePreprocessingOnValidation, target, msg);
            }
            let mut c = absorb(&cur, &v);
            if direct
                && subs.len() == 1
                && let (Some(Konst::Str(col)), Some(k)) = (&keys[0].konst, &v.konst)
            {
                c.marks.retain(|m| m.col != *col);
                c.marks.push(Mark {
                    col: col.clone(),
                    konst: k.clone(),
                    origins: cur.rows.clone(),
                });
            }
            c
        } else {
            cur.join(&v)
        };
        self.assign(&root, updated, f);
    }

    // ----- expressions -----

    pub(super) fn eval(&mut self, e: Node<'t>, f: &mut Frame<'t>) -> Val {
        if self.eval_depth >= MAX_EVAL_DEPTH {
            return Val::default();
        }
        self.eval_depth += 1;
        let v = self.eval_node(e, f);
        self.eval_depth -= 1;
        v
    }

    fn eval_node(&mut self, e: Node<'t>, f: &mut Frame<'t>) -> Val {
        match e.kind() {
            "identifier" => self.lookup(self.text(e), f),
            "true" => Val::konst(Konst::Bool(true)),
            "false" => Val::konst(Konst::Bool(false)),
            "none" => Val::konst(Konst::None),
            "integer" => {
                let t: String = self.text(e).chars().filter(|c| *c != '_').collect();
                t.parse::<i64>()
                    .map(|i| Val::konst(Konst::Int(i)))
                    .unwrap_or_default()
            }
            "string" | "concatenated_string" => match string_value(e, self.src) {
                Some(s) => Val::konst(Konst::Str(s)),
                None => {
                    for part in named(e) {
                        if part.kind() == "interpolation" {
                            for inner in named(part) {
                                self.eval(inner, f);
                            }
                        }
                    }
                    Val::default()
                }
            },
            "parenthesized_expression" | "await" => {
                named(e).first().map(|i| self.eval(*i, f)).unwrap_or_default()
            }
            "tuple" | "expression_list" | "list" | "set" => self.eval_sequence(e, f),
            "dictionary" => self.eval_dict(e, f),
            "list_comprehension"
            | "set_comprehension"
            | "generator_expression"
            | "dictionary_comprehension" => self.eval_comprehension(e, f),
            "subscript" => self.eval_subscript(e, f),
            "attribute" => self.eval_attribute(e, f),
            "call" => self.eval_call(e, f),
            "binary_operator" => {
                let (Some(l), Some(r)) = (e.child_by_field_name("left"), e.child_by_field_name("right"))
                else {
                    return Val::default();
                };
                let op = e
                    .child_by_field_name("operator")
                    .map(|o| self.text(o))
                    .unwrap_or("+");
                let (lv, rv) = (self.eval(l, f), self.eval(r, f));
                self.binop(e, &lv, &rv, op)
            }
            "unary_operator" => {
                let v = e
                    .child_by_field_name("argument")
                    .map(|a| self.eval(a, f))
                    .unwrap_or_default();
                let op = e
                    .child_by_field_name("operator")
                    .map(|o| self.text(o))
                    .unwrap_or("-");
                let mut r = v.derived();
                r.konst = match (&v.konst, op) {
                    (Some(Konst::Int(i)), "-") => Some(Konst::Int(-i)),
                    (k, "+") => k.clone(),
                    _ => None,
                };
                r.mask = if op == "~" {
                    v.mask.as_ref().map(Mask::invert)
                } else {
                    None
                };
                r.len_of = v.len_of.clone();
                r
            }
            "not_operator" => {
                let v = e
                    .child_by_field_name("argument")
                    .map(|a| self.eval(a, f))
                    .unwrap_or_default();
                let mut r = v.derived();
                r.konst = v.truthy().map(|t| Konst::Bool(!t));
                r.mask = v.mask.as_ref().map(Mask::invert);
                r
            }
            "boolean_operator" => {
                let (Some(l), Some(r)) = (e.child_by_field_name("left"), e.child_by_field_name("right"))
                else {
                    return Val::default();
                };
                let is_and = e.child_by_field_name("operator").map(|o| self.text(o)) == Some("and");
                let lv = self.eval(l, f);
                match (lv.truthy(), is_and) {
                    (Some(false), true) | (Some(true), false) => lv,
                    (Some(true), true) | (Some(false), false) => self.eval(r, f),
                    _ => {
                        let rv = self.eval(r, f);
                        let mut j = lv.join(&rv);
                        j.konst = match (rv.truthy(), is_and) {
                            (Some(false), true) => Some(Konst::Bool(false)),
                            (Some(true), false) => Some(Konst::Bool(true)),
                            _ => None,
                        };
                        j
                    }
                }
            }
            "comparison_operator" => self.eval_comparison(e, f),
            "conditional_expression" => {
                let parts = named(e);
                if parts.len() != 3 {
                    return Val::default();
                }
                let cond = self.eval(parts[1], f);
                match cond.truthy() {
                    Some(true) => self.eval(parts[0], f),
                    Some(false) => self.eval(parts[2], f),
                    None => {
                        let a = self.eval(parts[0], f);
                        let b = self.eval(parts[2], f);
                        a.join(&b)
                    }
                }
            }
            "lambda" => self.eval_lambda(e, f, None),
            "named_expression" => {
                let v = e
                    .child_by_field_name("value")
                    .map(|x| self.eval(x, f))
                    .unwrap_or_default();
                if let Some(n) = e.child_by_field_name("name") {
                    self.bind(n, v.clone(), f);
                }
                v
            }
            "list_splat" | "dictionary_splat" | "keyword_argument" | "yield" => {
                let inner = e
                    .child_by_field_name("value")
                    .or_else(|| named(e).last().copied());
                inner.map(|i| self.eval(i, f).flatten()).unwrap_or_default()
            }
            "float" | "ellipsis" | "slice" | "comment" => Val::default(),
            _ => {
                let mut acc = Val::default();
                for c in named(e) {
                    let v = self.eval(c, f);
                    acc = acc.join(&v.derived());
                }
                acc
            }
        }
    }

    /// Evaluates a lambda's body, binding its first parameter to `bind` (others unknown).
    pub(super) fn eval_lambda(&mut self, e: Node<'t>, f: &mut Frame<'t>, bind: Option<&Val>) -> Val {
        let saved = f.env.clone();
        if let Some(params) = e.child_by_field_name("parameters") {
            for (i, p) in named(params).into_iter().enumerate() {
                let name_node = p.child_by_field_name("name").unwrap_or(p);
                let name_node = if name_node.kind() == "identifier" {
                    name_node
                } else {
                    named(name_node).first().copied().unwrap_or(name_node)
                };
                let v = if i == 0 {
                    bind.cloned().unwrap_or_default()
                } else {
                    Val::default()
                };
                let name = self.text(name_node).to_string();
                f.env.insert(name, v);
            }
        }
        let v = e
            .child_by_field_name("body")
            .map(|b| self.eval(b, f))
            .unwrap_or_default();
        f.env = saved;
        v
    }

    fn eval_sequence(&mut self, e: Node<'t>, f: &mut Frame<'t>) -> Val {
        let items = named(e);
        if items.iter().any(|i| i.kind() == "list_splat") {
            let parts: Vec<Val> = items.iter().map(|i| self.eval(*i, f)).collect();
            return self.row_concat(&parts);
        }
        let vals: Vec<Val> = items.iter().map(|i| self.eval(*i, f)).collect();
        Val::tuple(vals)
    }

    fn eval_dict(&mut self, e: Node<'t>, f: &mut Frame<'t>) -> Val {
        let mut fields = std::collections::BTreeMap::new();
        let mut opaque: Option<Val> = None;
        for item in named(e) {
            if item.kind() == "pair" {
                let key = item
                    .child_by_field_name("key")
                    .map(|k| self.eval(k, f))
                    .unwrap_or_default();
                let value = item
                    .child_by_field_name("value")
                    .map(|v| self.eval(v, f))
                    .unwrap_or_default();
                match key_of(key.konst.as_ref()) {
                    Some(k) => {
                        fields.insert(k, value);
                    }
                    None => opaque = Some(opaque.map(|o| o.join(&value)).unwrap_or(value)),
                }
            } else {
                let v = self.eval(item, f);
                opaque = Some(opaque.map(|o| o.join(&v)).unwrap_or(v));
            }
        }
        let v = Val {
            fields: Some(fields),
            ..Val::default()
        };
        match opaque {
            Some(o) => v.join(&o),
            None => v,
        }
    }

    fn eval_comprehension(&mut self, e: Node<'t>, f: &mut Frame<'t>) -> Val {
        let saved = f.env.clone();
        for clause in named(e) {
            match clause.kind() {
                "for_in_clause" => {
                    let iter = clause
                        .child_by_field_name("right")
                        .map(|r| self.eval(r, f))
                        .unwrap_or_default();
                    if let Some(left) = clause.child_by_field_name("left") {
                        self.bind(left, iter.element(), f);
                    }
                }
                "if_clause" => {
                    for c in named(clause) {
                        self.eval(c, f);
                    }
                }
                _ => {}
            }
        }
        let body = e.child_by_field_name("body");
        let v = match body {
            Some(b) if b.kind() == "pair" => {
                let k = b
                    .child_by_field_name("key")
                    .map(|k| self.eval(k, f))
                    .unwrap_or_default();
                let v = b
                    .child_by_field_name("value")
                    .map(|v| self.eval(v, f))
                    .unwrap_or_default();
                k.info().join(&v.flatten())
            }
            Some(b) => self.eval(b, f).flatten(),
            None => Val::default(),
        };
        f.env = saved;
        let mut out = v.clone();
        out.konst = None;
        out.len_of = None;
        out.col = None;
        out.mask = None;
        out.func = None;
        out.elem = Some(Box::new(v));
        out
    }

    fn eval_attribute(&mut self, e: Node<'t>, f: &mut Frame<'t>) -> Val {
        let (Some(obj), Some(attr)) = (
            e.child_by_field_name("object"),
            e.child_by_field_name("attribute"),
        ) else {
            return Val::default();
        };
        if self.is_module_path(obj, f) {
            return Val::default();
        }
        let name = self.text(attr);
        let v = self.eval(obj, f);
        if let Some(field) = v.fields.as_ref().and_then(|m| m.get(&Key::Str(name.to_string()))) {
            return field.clone();
        }
        if v.is_data() {
            return match name {
                "shape" => Val::tuple(vec![
                    Val {
                        len_of: Some(v.rows.clone()),
                        ..Val::default()
                    },
                    Val::default(),
                ]),
                "index" => {
                    // The index of rows taken from one side of a split identifies that side.
                    let last: Vec<_> = v.rows.iter().map(|o| o.path.last().copied()).collect();
                    match last.first() {
                        Some(Some(step)) if last.iter().all(|l| *l == Some(*step)) => Val {
                            split: Some(*step),
                            ..Val::default()
                        },
                        _ => Val::default(),
                    }
                }
                "columns" | "dtypes" | "dtype" | "ndim" | "size" | "empty" | "name" | "nbytes"
                | "feature_names_in_" => Val::default(),
                "values" | "loc" | "iloc" | "at" | "iat" | "str" | "dt" | "cat" | "T" | "array" | "codes"
                | "sparse" | "plot" => {
                    let mut r = v.clone();
                    r.konst = None;
                    r
                }
                _ => {
                    let mut r = v.derived();
                    r.col = Some(name.to_string());
                    r
                }
            };
        }
        if !v.est.is_empty() {
            return match name {
                "best_estimator_"
                | "estimator_"
                | "estimator"
                | "named_steps"
                | "steps"
                | "booster_"
                | "model"
                | "calibrated_classifiers_"
                | "estimators_" => Val {
                    fields: None,
                    ..v.clone()
                },
                "best_score_" | "best_params_" | "cv_results_" | "best_index_" | "best_iteration"
                | "best_iteration_" | "best_ntree_limit" | "history" | "n_features_in_" => Val::default(),
                _ => Val {
                    stat: super::value::bases(&v.fitted),
                    ..Val::default()
                },
            };
        }
        if v.fields.is_some() {
            return v.field(Some(&Key::Str(name.to_string())));
        }
        let mut r = v.flatten();
        r.konst = None;
        r.len_of = None;
        r.col = None;
        r.mask = None;
        r.func = None;
        r
    }

    /// Whether `node` names a module path (`pd`, `np.random`, `sklearn.metrics`): its root name is
    /// bound nowhere in the submission.
    pub(super) fn is_module_path(&self, node: Node<'t>, f: &Frame<'t>) -> bool {
        match node.kind() {
            "identifier" => self.is_unbound(self.text(node), f),
            "attribute" => node
                .child_by_field_name("object")
                .is_some_and(|o| self.is_module_path(o, f)),
            _ => false,
        }
    }

    fn eval_subscript(&mut self, e: Node<'t>, f: &mut Frame<'t>) -> Val {
        let Some(obj) = e.child_by_field_name("value") else {
            return Val::default();
        };
        let mut cursor = e.walk();
        let subs: Vec<Node<'t>> = e.children_by_field_name("subscript", &mut cursor).collect();
        if obj.kind() == "attribute" && self.is_module_path(obj, f) {
            let last = obj
                .child_by_field_name("attribute")
                .map(|a| self.text(a))
                .unwrap_or("");
            let parts: Vec<Val> = subs
                .iter()
                .filter(|s| s.kind() != "slice")
                .map(|s| self.eval(*s, f).flatten())
                .collect();
            return match last {
                "r_" => self.row_concat(&parts),
                _ => parts.iter().fold(Val::default(), |acc, p| acc.join(&p.derived())),
            };
        }
        let v = self.eval(obj, f);
        let Some(first) = subs.first().copied() else {
            return v.flatten();
        };
        let mut result = if first.kind() == "slice" {
            self.eval_slice(&v, first, f)
        } else {
            let k = self.eval(first, f);
            if v.fields.is_some() {
                v.field(key_of(k.konst.as_ref()).as_ref())
            } else if v.is_data() {
                if let Some(m) = &k.mask {
                    self.apply_mask(&v, m)
                } else if let Some(step) = k.split {
                    v.through(step)
                } else if let Some(Konst::Str(c)) = &k.konst {
                    let mut r = v.derived();
                    r.col = Some(c.clone());
                    r
                } else {
                    v.derived()
                }
            } else {
                let mut r = v.flatten();
                r.konst = None;
                r.len_of = None;
                r.col = None;
                r.mask = None;
                r.func = None;
                r.fields = None;
                r
            }
        };
        for extra in subs.iter().skip(1) {
            if extra.kind() != "slice" {
                let k = self.eval(*extra, f);
                if let (true, Some(Konst::Str(c))) = (result.is_data(), &k.konst) {
                    result.col = Some(c.clone());
                }
            }
        }
        result
    }

    fn eval_slice(&mut self, v: &Val, slice: Node<'t>, f: &mut Frame<'t>) -> Val {
        let parts = children(slice);
        let mut lower = None;
        let mut upper = None;
        let mut colons = 0;
        for p in &parts {
            if p.kind() == ":" {
                colons += 1;
            } else if p.is_named() && p.kind() != "comment" {
                match colons {
                    0 => lower = Some(*p),
                    1 => upper = Some(*p),
                    _ => {}
                }
            }
        }
        if !v.is_data() {
            return v.flatten();
        }
        let (bound_node, upper_side) = match (lower, upper) {
            (None, Some(u)) => (u, true),
            (Some(l), None) => (l, false),
            _ => return v.derived(),
        };
        let bound = self.eval(bound_node, f);
        if let (Some(segs), Some(len)) = (&v.segs, &bound.len_of)
            && segs.len() >= 2
            && segs[0] == *len
        {
            let rows: Origins = if upper_side {
                segs[0].clone()
            } else {
                segs[1..].iter().flatten().cloned().collect()
            };
            let mut r = v.derived();
            r.rows = rows;
            r.segs = None;
            r.marks.clear();
            return r;
        }
        let key = format!("slice:{}", self.text(bound_node));
        let id = self.intern(key);
        v.through((id, if upper_side { 0 } else { 1 }))
    }

    pub(super) fn apply_mask(&mut self, v: &Val, m: &Mask) -> Val {
        if let Some((col, k, eq)) = &m.marker {
            let relevant: Vec<&Mark> = v.marks.iter().filter(|mk| mk.col == *col).collect();
            if !relevant.is_empty() {
                let rows: Origins = relevant
                    .iter()
                    .filter(|mk| (mk.konst == *k) == *eq)
                    .flat_map(|mk| mk.origins.iter().cloned())
                    .collect();
                let mut r = v.derived();
                r.rows = rows;
                r.segs = None;
                r.marks.clear();
                return r;
            }
        }
        if let Some((_, is_na)) = &m.na
            && has_base(&v.rows, Base::Train)
            && has_base(&v.rows, Base::Val)
        {
            let keep = if *is_na { Base::Val } else { Base::Train };
            let mut r = v.derived();
            r.rows = v.rows.iter().filter(|o| o.base == keep).cloned().collect();
            r.segs = None;
            r.marks.clear();
            return r;
        }
        match m.side {
            Some(step) => v.through(step),
            None => v.derived(),
        }
    }

    fn eval_comparison(&mut self, e: Node<'t>, f: &mut Frame<'t>) -> Val {
        let operands = named(e);
        let ops: Vec<String> = children(e)
            .into_iter()
            .filter(|c| !c.is_named())
            .map(|c| self.text(c).to_string())
            .fold(Vec::new(), |mut acc, t| {
                // `is not` / `not in` arrive as two tokens.
                match (acc.last_mut(), t.as_str()) {
                    (Some(last), "not") if last == "is" => last.push_str(" not"),
                    (Some(last), "in") if last == "not" => last.push_str(" in"),
                    _ => acc.push(t),
                }
                acc
            });
        let vals: Vec<Val> = operands.iter().map(|o| self.eval(*o, f)).collect();
        if ops.iter().any(|o| matches!(o.as_str(), "<" | ">" | "<=" | ">="))
            && vals.iter().any(|v| v.train_score)
        {
            let msg = format!(
                "`{}` compares scores computed on the rows the model was trained on",
                self.snippet(e)
            );
            self.report(FindingKind::LeakageNoIndependentTest, e, msg);
        }
        let mut r = vals.iter().fold(Val::default(), |acc, v| acc.join(&v.derived()));
        if vals.len() == 2 && ops.len() == 1 {
            let (l, rv, op) = (&vals[0], &vals[1], ops[0].as_str());
            r.konst = match op {
                "is" | "is not" => {
                    let none_side = if rv.konst == Some(Konst::None) {
                        l.is_none()
                    } else if l.konst == Some(Konst::None) {
                        rv.is_none()
                    } else {
                        None
                    };
                    none_side.map(|is| Konst::Bool(if op == "is" { is } else { !is }))
                }
                "==" | "!=" => match (&l.konst, &rv.konst) {
                    (Some(a), Some(b)) => Some(Konst::Bool((a == b) == (op == "=="))),
                    _ => None,
                },
                _ => None,
            };
            if l.is_data() {
                let (class, side) = match op {
                    "<" | "<=" => ("ord", 0),
                    ">" | ">=" => ("ord", 1),
                    "==" => ("eq", 0),
                    "!=" => ("eq", 1),
                    _ => ("", 0),
                };
                if !class.is_empty() {
                    let key = format!(
                        "mask:{}|{class}|{}",
                        self.text(operands[0]),
                        self.text(operands[1])
                    );
                    let id = self.intern(key);
                    let marker = match (&l.col, &rv.konst) {
                        (Some(c), Some(k)) if class == "eq" => Some((c.clone(), k.clone(), op == "==")),
                        _ => None,
                    };
                    r.mask = Some(Mask {
                        side: Some((id, side)),
                        marker,
                        na: None,
                    });
                }
            }
        }
        r
    }

    pub(super) fn binop(&mut self, node: Node<'t>, l: &Val, r: &Val, op: &str) -> Val {
        if matches!(op, "+" | "-" | "*" | "/" | "//" | "%" | "**" | "@") {
            self.check_combine(node, &[l, r]);
        }
        let mut out = l.derived().join(&r.derived());
        out.stat |= l.flatten().stat | r.flatten().stat;
        if op == "+" && l.is_data() && r.is_data() && l.rows != r.rows {
            out = self.row_concat(&[l.clone(), r.clone()]);
        }
        out.konst = match (&l.konst, &r.konst, op) {
            (Some(Konst::Int(a)), Some(Konst::Int(b)), "+") => a.checked_add(*b).map(Konst::Int),
            (Some(Konst::Int(a)), Some(Konst::Int(b)), "-") => a.checked_sub(*b).map(Konst::Int),
            (Some(Konst::Int(a)), Some(Konst::Int(b)), "*") => a.checked_mul(*b).map(Konst::Int),
            (Some(Konst::Str(a)), Some(Konst::Str(b)), "+") => Some(Konst::Str(format!("{a}{b}"))),
            _ => None,
        };
        out.len_of = match (&l.len_of, &r.len_of, &r.konst) {
            (Some(len), None, Some(Konst::Int(_))) if matches!(op, "+" | "-") => Some(len.clone()),
            _ => None,
        };
        out
    }

    /// Reports a statistic of validation rows combined with feature data.
    pub(super) fn check_combine(&mut self, node: Node<'t>, vals: &[&Val]) {
        let data = vals.iter().any(|v| v.is_feature_data());
        let stat = vals.iter().any(|v| v.flatten().is_val_stat());
        if data && stat {
            let msg = format!(
                "`{}` transforms data with a statistic computed on validation rows",
                self.snippet(node)
            );
            self.report(FindingKind::LeakagePreprocessingOnValidation, node, msg);
        }
    }

    /// Rows of `parts` stacked in order.
    pub(super) fn row_concat(&self, parts: &[Val]) -> Val {
        let mut out = Val::default();
        let mut segs: Option<Vec<Origins>> = Some(Vec::new());
        for p in parts {
            let p = p.flatten();
            if p.is_data() {
                if let Some(s) = segs.as_mut() {
                    match &p.segs {
                        Some(ps) => s.extend(ps.iter().cloned()),
                        None => s.push(p.rows.clone()),
                    }
                }
            } else if !p.stat.is_empty() || !p.est.is_empty() {
                segs = None;
            }
            out = out.join(&p.derived());
            out.stat |= p.stat;
        }
        out.segs = segs.filter(|s| s.len() >= 2);
        out
    }
}

/// A dict/tuple key from a constant.
pub(super) fn key_of(k: Option<&Konst>) -> Option<Key> {
    match k? {
        Konst::Str(s) => Some(Key::Str(s.clone())),
        Konst::Int(i) => Some(Key::Idx(*i)),
        _ => None,
    }
}

/// Data `cur` after a value is written into it: its rows stay, facts of the value are added.
pub(super) fn absorb(cur: &Val, v: &Val) -> Val {
    let flat = v.flatten();
    let mut c = cur.clone();
    c.stat |= flat.stat;
    c.insample |= flat.insample;
    c.train_score |= flat.train_score;
    c
}
