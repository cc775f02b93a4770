//! Call semantics: library functions and methods the analysis knows, inlined user functions, and
//! the three leakage checks that happen at calls (fits, eval sets, selections).
//!
//! [`Interp::eval_call`] first tells a call apart by its callee: the submission's own function
//! or class (`user`), a library name or module function (`named`), or a method of a value
//! (`method`, and `data` for methods of frames and arrays). A name or method is classified once
//! into a kind, and each kind has one small handler; the order in which a classifier tries the
//! catalog's predicates is the precedence between kinds. The checks themselves are in `checks`.
//!
//! Invariants:
//! - A fit-like call (`fit`, `fit_transform`, `fit_resample`, `fit_on_texts`, `adapt`, `lgb.train`,
//!   cross-validation helpers, gensim constructors, fitting functions such as `scale`/`qcut`,
//!   and category encodings on mixed rows) is the only place a fit is judged; its data is the
//!   first positional argument (or `X=`/`train_set=`/… keyword), or for `.fit()` without
//!   arguments the data the estimator was constructed with (statsmodels).
//! - An unknown callee is row-preserving: its result joins its arguments, and it is checked for
//!   validation statistics combined with data like an arithmetic operator.

mod checks;
mod data;
mod method;
mod named;
mod user;

use tree_sitter::Node;

use super::interp::{Frame, Interp};
use super::value::{Konst, Mode, Val};
use crate::check::syntax::{named, text};

/// Evaluated arguments of a call, with their nodes.
pub(super) struct Args<'t> {
    pub pos: Vec<(Node<'t>, Val)>,
    pub kw: Vec<(String, Node<'t>, Val)>,
}

impl<'t> Args<'t> {
    fn none() -> Args<'t> {
        Args {
            pos: Vec::new(),
            kw: Vec::new(),
        }
    }

    /// Positional argument `i`, or the first keyword argument among `names`.
    fn get(&self, i: usize, names: &[&str]) -> Option<(Node<'t>, Val)> {
        self.pos.get(i).cloned().or_else(|| {
            self.kw
                .iter()
                .find(|(n, _, _)| names.contains(&n.as_str()))
                .map(|(_, n, v)| (*n, v.clone()))
        })
    }

    /// [`Self::get`], flattened; unknown when absent.
    fn flat(&self, i: usize, names: &[&str]) -> Val {
        self.get(i, names).map(|(_, v)| v.flatten()).unwrap_or_default()
    }

    fn kw(&self, name: &str) -> Option<(Node<'t>, Val)> {
        self.kw
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, n, v)| (*n, v.clone()))
    }

    fn positional(&self) -> Vec<Val> {
        self.pos.iter().map(|(_, v)| v.clone()).collect()
    }

    fn values(&self) -> Vec<Val> {
        self.pos
            .iter()
            .map(|(_, v)| v.clone())
            .chain(self.kw.iter().map(|(_, _, v)| v.clone()))
            .collect()
    }

    fn joined(&self) -> Val {
        self.values()
            .iter()
            .fold(Val::default(), |acc, v| acc.join(&v.flatten()))
    }

    fn axis_columns(&self) -> bool {
        self.kw("axis").is_some_and(|(_, v)| {
            matches!(v.konst, Some(Konst::Int(1))) || v.konst == Some(Konst::Str("columns".into()))
        })
    }

    /// Whether keyword `name` is given a value other than `None`/`False`.
    fn is_set(&self, name: &str) -> bool {
        self.kw(name)
            .is_some_and(|(_, v)| v.konst != Some(Konst::None) && v.konst != Some(Konst::Bool(false)))
    }
}

impl<'t> Interp<'t> {
    pub(super) fn eval_args(&mut self, call: Node<'t>, f: &mut Frame<'t>, bind: Option<&Val>) -> Args<'t> {
        self.eval_args_with(call, f, bind, false)
    }

    /// Like [`Self::eval_args`]; with `key_of_first`, a lambda argument (`key=lambda m: ...`) gets
    /// an element of the first positional argument, as `max`/`min`/`sorted` call it.
    fn eval_args_with(
        &mut self,
        call: Node<'t>,
        f: &mut Frame<'t>,
        bind: Option<&Val>,
        key_of_first: bool,
    ) -> Args<'t> {
        let mut element: Option<Val> = None;
        let mut args = Args::none();
        let Some(list) = call.child_by_field_name("arguments") else {
            return args;
        };
        if list.kind() == "generator_expression" {
            let v = self.eval(list, f);
            args.pos.push((list, v));
            return args;
        }
        for a in named(list) {
            match a.kind() {
                "keyword_argument" => {
                    let (Some(n), Some(v)) = (a.child_by_field_name("name"), a.child_by_field_name("value"))
                    else {
                        continue;
                    };
                    let val = self.eval_arg(v, f, element.as_ref().or(bind));
                    args.kw.push((self.text(n).to_string(), v, val));
                }
                "list_splat" => {
                    let v = self.eval(a, f);
                    args.pos.push((a, v));
                }
                "dictionary_splat" => {
                    self.eval(a, f);
                }
                _ => {
                    let v = self.eval_arg(a, f, element.as_ref().or(bind));
                    if key_of_first && args.pos.is_empty() {
                        element = Some(v.element());
                    }
                    args.pos.push((a, v));
                }
            }
        }
        args
    }

    fn eval_arg(&mut self, a: Node<'t>, f: &mut Frame<'t>, bind: Option<&Val>) -> Val {
        if a.kind() == "lambda" {
            self.eval_lambda(a, f, bind)
        } else {
            self.eval(a, f)
        }
    }

    pub(super) fn eval_call(&mut self, call: Node<'t>, f: &mut Frame<'t>) -> Val {
        let Some(func) = call.child_by_field_name("function") else {
            return Val::default();
        };
        match func.kind() {
            "identifier" => self.call_identifier(func, call, f),
            "attribute" => self.call_attribute(func, call, f),
            _ => self.call_value(func, call, f),
        }
    }

    /// `name(...)`: the submission's function or class, a bound value, or a library name.
    fn call_identifier(&mut self, func: Node<'t>, call: Node<'t>, f: &mut Frame<'t>) -> Val {
        let name = self.text(func);
        if let Some((def, local)) = self.user_function(name, f) {
            let args = self.eval_args(call, f, None);
            return self.inline(def, local, name, args, call, f);
        }
        if self.class_defs.contains_key(name) {
            let args = self.eval_args(call, f, None);
            return self.construct(name, args, call);
        }
        if !self.is_unbound(name, f) {
            let args = self.eval_args(call, f, None);
            return self.generic(call, &args);
        }
        let args = self.eval_args_with(call, f, None, matches!(name, "max" | "min" | "sorted"));
        self.call_named(name, name, call, args, f)
    }

    /// `a.b(...)`: a function of a module (`pd.concat`) or a method of the value `a`.
    fn call_attribute(&mut self, func: Node<'t>, call: Node<'t>, f: &mut Frame<'t>) -> Val {
        let (Some(obj), Some(attr)) = (
            func.child_by_field_name("object"),
            func.child_by_field_name("attribute"),
        ) else {
            return Val::default();
        };
        let name = self.text(attr);
        if self.is_module_path(obj, f) {
            let args = self.eval_args(call, f, None);
            let dotted = self.text(func);
            return self.call_named(name, dotted, call, args, f);
        }
        let recv = self.eval(obj, f);
        let bind = lambda_binding(&recv, name, call, self.src);
        let args = self.eval_args(call, f, bind.as_ref());
        self.call_method(recv, obj, name, call, args, f)
    }

    /// `expr(...)` for any other callee (`models[k](x)`, `Dense(8)(x)`): calling an estimator
    /// object gives that estimator; anything else is an unknown function.
    fn call_value(&mut self, func: Node<'t>, call: Node<'t>, f: &mut Frame<'t>) -> Val {
        let callee = self.eval(func, f);
        let args = self.eval_args(call, f, None);
        let r = self.generic(call, &args);
        if callee.est.is_empty() { r } else { callee }
    }

    /// An unknown function: row-preserving join of the arguments.
    pub(super) fn generic(&mut self, call: Node<'t>, args: &Args<'t>) -> Val {
        let vals = args.values();
        let refs: Vec<&Val> = vals.iter().collect();
        self.check_combine(call, &refs);
        let mut out = Val::default();
        for v in &vals {
            let flat = v.flatten();
            out = out.join(&Val {
                konst: None,
                len_of: None,
                col: None,
                mask: None,
                func: None,
                elem: None,
                ..flat
            });
        }
        out
    }
}

/// What the first parameter of a lambda passed to a data method stands for.
fn lambda_binding(recv: &Val, name: &str, call: Node, src: &str) -> Option<Val> {
    let recv = recv.flatten();
    if !recv.is_data() {
        return None;
    }
    if !matches!(
        name,
        "apply" | "transform" | "agg" | "aggregate" | "pipe" | "map" | "applymap" | "filter"
    ) {
        return None;
    }
    let row_wise = matches!(name, "map" | "applymap")
        || call.child_by_field_name("arguments").is_some_and(|a| {
            named(a).into_iter().any(|k| {
                k.kind() == "keyword_argument"
                    && k.child_by_field_name("name")
                        .is_some_and(|n| text(n, src) == "axis")
                    && k.child_by_field_name("value")
                        .is_some_and(|v| matches!(text(v, src), "1" | "'columns'" | "\"columns\""))
            })
        });
    let mut v = recv.derived();
    v.mode = if row_wise { Mode::Windowed } else { Mode::Plain };
    Some(v)
}
