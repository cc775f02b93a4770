//! Calls of the submission's own code: functions inlined with their arguments, classes
//! constructed by running `__init__`, and methods run with `self` bound to an instance.
//!
//! Invariant: nothing is inlined past [`MAX_DEPTH`], recursively, or once the step budget is
//! spent; such a call is an unknown function (or leaves the instance as it was).

use tree_sitter::Node;

use super::super::interp::{Frame, Interp, MAX_DEPTH};
use super::super::value::{Konst, Val};
use super::Args;
use crate::check::syntax::{line, named};

impl<'t> Interp<'t> {
    /// Analyses a call to the submission's own function with these arguments.
    pub(in super::super) fn inline(
        &mut self,
        def: Node<'t>,
        local: bool,
        name: &str,
        args: Args<'t>,
        call: Node<'t>,
        f: &mut Frame<'t>,
    ) -> Val {
        if self.cannot_inline(def) {
            return self.generic(call, &args);
        }
        let key = (!local).then(|| {
            let pos: Vec<Val> = args.pos.iter().map(|(_, v)| v.clone()).collect();
            let kw: Vec<(String, Val)> = args.kw.iter().map(|(k, _, v)| (k.clone(), v.clone())).collect();
            (pos, kw)
        });
        if let Some((pos, kw)) = &key
            && let Some(r) = self.memo_get(def.id(), pos, kw)
        {
            return r;
        }
        let mut frame = Frame::new(if local { f.env.clone() } else { Default::default() });
        if local {
            frame.defs = f.defs.clone();
        }
        self.via.push((name.to_string(), line(call)));
        let r = self.run_function(def, &args, &mut frame);
        self.via.pop();
        if let Some((pos, kw)) = key {
            self.memo_put(def.id(), pos, kw, r.clone());
        }
        r
    }

    fn cannot_inline(&self, def: Node<'t>) -> bool {
        self.exhausted() || self.stack.len() >= MAX_DEPTH || self.stack.contains(&def.id())
    }

    /// An instance of the submission's class `name`, after its `__init__` ran on `args`.
    pub(super) fn construct(&mut self, name: &str, args: Args<'t>, call: Node<'t>) -> Val {
        let kind = self.classes.get(name).copied().unwrap_or_default();
        let instance = Val {
            est: kind,
            class: Some(name.to_string()),
            fields: Some(Default::default()),
            ..Val::default()
        };
        match self.method(name, "__init__") {
            Some(init) => self.inline_method(init, "__init__", instance, &args, call).1,
            None => instance,
        }
    }

    /// The plain (undecorated) method `name` of the submission's class `class`.
    pub(super) fn method(&self, class: &str, name: &str) -> Option<Node<'t>> {
        let body = self.class_defs.get(class)?.child_by_field_name("body")?;
        named(body)
            .into_iter()
            .filter(|m| m.kind() == "function_definition")
            .find(|m| {
                m.child_by_field_name("name")
                    .is_some_and(|n| self.text(n) == name)
            })
    }

    /// Runs a method with `self` bound to `instance`; returns its result and `self` afterwards.
    pub(super) fn inline_method(
        &mut self,
        def: Node<'t>,
        name: &str,
        instance: Val,
        args: &Args<'t>,
        call: Node<'t>,
    ) -> (Val, Val) {
        if self.cannot_inline(def) {
            return (Val::default(), instance);
        }
        let self_name = def
            .child_by_field_name("parameters")
            .and_then(|p| named(p).into_iter().next())
            .map(|p| self.text(p).to_string())
            .unwrap_or_else(|| "self".to_string());
        let mut with_self = Args {
            pos: vec![(call, instance.clone())],
            kw: args.kw.clone(),
        };
        with_self.pos.extend(args.pos.iter().cloned());
        let mut frame = Frame::new(Default::default());
        self.via.push((name.to_string(), line(call)));
        let ret = self.run_function(def, &with_self, &mut frame);
        self.via.pop();
        let after = frame.env.get(&self_name).cloned().unwrap_or(instance);
        (ret, after)
    }

    /// Binds parameters and runs the body of `def` in `frame`; returns the joined return values.
    pub(in super::super) fn run_function(
        &mut self,
        def: Node<'t>,
        args: &Args<'t>,
        frame: &mut Frame<'t>,
    ) -> Val {
        self.bind_params(def, args, frame);
        self.stack.push(def.id());
        if let Some(body) = def.child_by_field_name("body") {
            self.exec_block(body, frame);
        }
        self.stack.pop();
        frame.ret.take().unwrap_or(Val::konst(Konst::None))
    }

    fn bind_params(&mut self, def: Node<'t>, args: &Args<'t>, frame: &mut Frame<'t>) {
        let Some(params) = def.child_by_field_name("parameters") else {
            return;
        };
        // The next positional argument to bind; after `*args` or `*`, parameters are keyword-only.
        let mut next = 0;
        let mut keyword_only = false;
        for p in named(params) {
            let inner = if p.kind() == "typed_parameter" {
                named(p).first().copied().unwrap_or(p)
            } else {
                p
            };
            match inner.kind() {
                "list_splat_pattern" => {
                    let rest: Vec<Val> = args.pos.iter().skip(next).map(|(_, v)| v.clone()).collect();
                    next = args.pos.len();
                    keyword_only = true;
                    self.bind_splat(inner, Val::tuple(rest), frame);
                }
                "keyword_separator" => keyword_only = true,
                "dictionary_splat_pattern" => self.bind_splat(inner, Val::default(), frame),
                "identifier" | "default_parameter" | "typed_default_parameter" => {
                    let name_node = if inner.kind() == "identifier" {
                        Some(inner)
                    } else {
                        inner.child_by_field_name("name")
                    };
                    let Some(name_node) = name_node else { continue };
                    let name = self.text(name_node).to_string();
                    let v = match args.pos.get(next).filter(|_| !keyword_only) {
                        Some((_, v)) => {
                            next += 1;
                            v.clone()
                        }
                        None => self.keyword_or_default(inner, &name, args),
                    };
                    frame.env.insert(name, v);
                }
                _ => {}
            }
        }
    }

    /// `*rest` or `**options`: the name, if the pattern has one, holds `v`.
    fn bind_splat(&self, pattern: Node<'t>, v: Val, frame: &mut Frame<'t>) {
        if let Some(n) = named(pattern).first() {
            frame.env.insert(self.text(*n).to_string(), v);
        }
    }

    /// A parameter not bound by position: its keyword argument, else its default, else unknown.
    fn keyword_or_default(&mut self, param: Node<'t>, name: &str, args: &Args<'t>) -> Val {
        if let Some((_, v)) = args.kw(name) {
            v
        } else if let Some(default) = param.child_by_field_name("value") {
            let mut scratch = Frame::new(Default::default());
            self.eval(default, &mut scratch)
        } else {
            Val::default()
        }
    }
}
