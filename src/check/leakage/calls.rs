//! Call semantics: library functions and methods the analysis knows, inlined user functions, and
//! the three leakage checks that happen at calls (fits, eval sets, selections).
//!
//! Invariants:
//! - A fit-like call (`fit`, `fit_transform`, `fit_resample`, `fit_on_texts`, `adapt`, `lgb.train`,
//!   cross-validation helpers, gensim constructors, fitting functions such as `scale`/`qcut`,
//!   and category encodings on mixed rows) is the only place a fit is judged; its data is the
//!   first positional argument (or `X=`/`train_set=`/… keyword), or for `.fit()` without
//!   arguments the data the estimator was constructed with (statsmodels).
//! - An unknown callee is row-preserving: its result joins its arguments, and it is checked for
//!   validation statistics combined with data like an arithmetic operator.

use tree_sitter::Node;

use super::super::FindingKind;
use super::super::syntax::{descendants, line, named, text};
use super::catalog;
use super::interp::{Frame, Interp, MAX_DEPTH, absorb, key_of};
use super::value::{Base, EstKinds, Key, Konst, Mask, Mode, Origins, Val, has_base, overlap};

/// Evaluated arguments of a call, with their nodes.
pub(super) struct Args<'t> {
    pub pos: Vec<(Node<'t>, Val)>,
    pub kw: Vec<(String, Node<'t>, Val)>,
}

impl<'t> Args<'t> {
    /// Positional argument `i`, or the first keyword argument among `names`.
    fn get(&self, i: usize, names: &[&str]) -> Option<(Node<'t>, Val)> {
        self.pos.get(i).cloned().or_else(|| {
            self.kw
                .iter()
                .find(|(n, _, _)| names.contains(&n.as_str()))
                .map(|(_, n, v)| (*n, v.clone()))
        })
    }

    fn kw(&self, name: &str) -> Option<(Node<'t>, Val)> {
        self.kw
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, n, v)| (*n, v.clone()))
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
}

fn keyword_present(args: &Args, name: &str) -> bool {
    args.kw(name)
        .is_some_and(|(_, v)| v.konst != Some(Konst::None) && v.konst != Some(Konst::Bool(false)))
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
        let mut args = Args {
            pos: Vec::new(),
            kw: Vec::new(),
        };
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
            "identifier" => {
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
            "attribute" => {
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
            _ => {
                let callee = self.eval(func, f);
                let args = self.eval_args(call, f, None);
                let mut r = self.generic(call, &args);
                if !callee.est.is_empty() {
                    r = callee;
                }
                r
            }
        }
    }

    /// Analyses a call to the submission's own function with these arguments.
    pub(super) fn inline(
        &mut self,
        def: Node<'t>,
        local: bool,
        name: &str,
        args: Args<'t>,
        call: Node<'t>,
        f: &mut Frame<'t>,
    ) -> Val {
        if self.exhausted() || self.stack.len() >= MAX_DEPTH || self.stack.contains(&def.id()) {
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

    /// An instance of the submission's class `name`, after its `__init__` ran on `args`.
    fn construct(&mut self, name: &str, args: Args<'t>, call: Node<'t>) -> Val {
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
    fn method(&self, class: &str, name: &str) -> Option<Node<'t>> {
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
    fn inline_method(
        &mut self,
        def: Node<'t>,
        name: &str,
        instance: Val,
        args: &Args<'t>,
        call: Node<'t>,
    ) -> (Val, Val) {
        if self.exhausted() || self.stack.len() >= MAX_DEPTH || self.stack.contains(&def.id()) {
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
    pub(super) fn run_function(&mut self, def: Node<'t>, args: &Args<'t>, frame: &mut Frame<'t>) -> Val {
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
                    if let Some(n) = named(inner).first() {
                        let name = self.text(*n).to_string();
                        frame.env.insert(name, Val::tuple(rest));
                    }
                }
                "keyword_separator" => keyword_only = true,
                "dictionary_splat_pattern" => {
                    if let Some(n) = named(inner).first() {
                        let name = self.text(*n).to_string();
                        frame.env.insert(name, Val::default());
                    }
                }
                "identifier" | "default_parameter" | "typed_default_parameter" => {
                    let name_node = if inner.kind() == "identifier" {
                        Some(inner)
                    } else {
                        inner.child_by_field_name("name")
                    };
                    let Some(name_node) = name_node else { continue };
                    let name = self.text(name_node).to_string();
                    let v = if !keyword_only && next < args.pos.len() {
                        next += 1;
                        args.pos[next - 1].1.clone()
                    } else if let Some((_, v)) = args.kw(&name) {
                        v
                    } else if let Some(default) = inner.child_by_field_name("value") {
                        let mut scratch = Frame::new(Default::default());
                        self.eval(default, &mut scratch)
                    } else {
                        Val::default()
                    };
                    frame.env.insert(name, v);
                }
                _ => {}
            }
        }
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

    // ----- calls by name (module functions, constructors) -----

    fn call_named(
        &mut self,
        name: &str,
        dotted: &str,
        call: Node<'t>,
        args: Args<'t>,
        f: &mut Frame<'t>,
    ) -> Val {
        if catalog::is_pipeline(name) {
            let est = last_estimator(&args.values()).unwrap_or(EstKinds::UNKNOWN);
            let early = args.values().iter().any(|v| v.flatten().early_stop);
            return Val {
                est,
                early_stop: early,
                ..Val::default()
            };
        }
        if catalog::is_search(name) {
            let inner = args
                .get(0, &["estimator"])
                .map(|(_, v)| v.flatten())
                .unwrap_or_default();
            self.check_degenerate_cv(call, &args);
            let est = inner.est.or(EstKinds::MODEL);
            return Val {
                est,
                early_stop: inner.early_stop,
                ..Val::default()
            };
        }
        if let Some(kind) = catalog::estimator_kind(name) {
            let data = args.joined();
            if catalog::trains_on_construction(name) && data.is_data() {
                self.fit_event(call, EstKinds::PRE, "fit", &data);
            }
            let early =
                catalog::selects_on_eval_by_default(name) || keyword_present(&args, "early_stopping_rounds");
            return Val {
                est: kind,
                early_stop: early,
                fitted: data.rows,
                ..Val::default()
            };
        }
        if catalog::is_data_wrapper(name) {
            return args
                .get(0, &["data", "X", "x", "tensors"])
                .map(|(_, v)| v.derived())
                .unwrap_or_default();
        }
        if catalog::is_library_train(dotted) {
            let data = args
                .get(1, &["train_set", "dtrain", "pool"])
                .map(|(_, v)| v.flatten())
                .unwrap_or_default();
            self.fit_event(call, EstKinds::MODEL, "fit", &data);
            if dotted.ends_with(".cv") {
                return Val::default();
            }
            let selecting =
                keyword_present(&args, "early_stopping_rounds") || self.selecting_callbacks(&args);
            for k in ["valid_sets", "evals"] {
                if let Some((_, v)) = args.kw(k) {
                    self.check_eval_sets(call, &data, &v, selecting, false);
                }
            }
            return Val {
                est: EstKinds::MODEL,
                fitted: data.rows,
                ..Val::default()
            };
        }
        if catalog::is_split_function(name) {
            let id = call.id() as u64;
            let mut outs = Vec::new();
            for (_, v) in &args.pos {
                outs.push(v.through((id, 0)));
                outs.push(v.through((id, 1)));
            }
            return Val::tuple(outs);
        }
        if catalog::is_cross_validation(name) {
            let est = args
                .get(0, &["estimator"])
                .map(|(_, v)| v.flatten().est)
                .unwrap_or_default();
            let data = args.get(1, &["X"]).map(|(_, v)| v.flatten()).unwrap_or_default();
            self.fit_event(call, est.or(EstKinds::MODEL), "fit", &data);
            if name == "cross_val_predict" {
                let mut r = data.derived();
                r.pred = true;
                return r;
            }
            return Val::default();
        }
        if catalog::is_row_concat(name) && name != "append" || (name == "append" && dotted.contains('.')) {
            let parts: Vec<Val> = match args.pos.first() {
                Some((_, first))
                    if name == "concat"
                        || name == "concatenate"
                        || name == "vstack"
                        || name == "row_stack" =>
                {
                    match &first.fields {
                        Some(fields) => fields.values().cloned().collect(),
                        None => vec![first.flatten()],
                    }
                }
                _ => args.pos.iter().map(|(_, v)| v.clone()).collect(),
            };
            if args.axis_columns() {
                return parts.iter().fold(Val::default(), |acc, p| acc.join(&p.derived()));
            }
            return self.row_concat(&parts);
        }
        if catalog::is_column_stack(name) {
            let parts: Vec<Val> = match args.pos.first() {
                Some((_, first)) if first.fields.is_some() => {
                    first.fields.iter().flat_map(|m| m.values().cloned()).collect()
                }
                _ => args.pos.iter().map(|(_, v)| v.clone()).collect(),
            };
            return parts.iter().fold(Val::default(), |acc, p| acc.join(&p.derived()));
        }
        if catalog::is_encoding_function(name) {
            let data = args
                .get(0, &["data", "values"])
                .map(|(_, v)| v.flatten())
                .unwrap_or_default();
            self.encoding_event(call, &data, name);
            return data.derived();
        }
        if catalog::is_fitting_function(name)
            || (name == "cut"
                && args
                    .get(1, &["bins"])
                    .is_some_and(|(_, v)| matches!(v.konst, Some(Konst::Int(_)))))
        {
            let data = args
                .get(0, &["X", "x", "a"])
                .map(|(_, v)| v.flatten())
                .unwrap_or_default();
            if data.is_feature_data() && has_base(&data.rows, Base::Val) {
                let msg = format!(
                    "`{}` fits a transformation on {}",
                    self.snippet(call),
                    rows_phrase(&data.rows)
                );
                self.report(FindingKind::LeakagePreprocessingOnValidation, call, msg);
            }
            return data.derived();
        }
        if catalog::is_metric(name) {
            let vals = args.values();
            return Val {
                train_score: vals.iter().any(|v| {
                    let v = v.flatten();
                    v.insample || v.train_score
                }),
                ..Val::default()
            };
        }
        if catalog::is_optimizer(name) {
            return self.optimizer(call, &args, f);
        }
        let module = dotted.split('.').next().unwrap_or("");
        let numeric_module = matches!(
            module,
            "np" | "numpy" | "statistics" | "scipy" | "stats" | "pd" | "pandas" | "torch" | "tf"
        );
        if catalog::is_selection(name) && (!dotted.contains('.') || numeric_module) {
            self.selection_sink(call, &args.values());
        }
        if catalog::is_reduction(name)
            && (numeric_module || matches!(name, "max" | "min" | "sum"))
            && !dotted.contains("random")
        {
            if args.axis_columns() {
                return args.joined().derived();
            }
            return args
                .values()
                .iter()
                .fold(Val::default(), |acc, v| acc.join(&v.reduced()));
        }
        match name {
            "len" => {
                let rows = args
                    .pos
                    .first()
                    .map(|(_, v)| v.flatten().rows)
                    .unwrap_or_default();
                return Val {
                    len_of: (!rows.is_empty()).then_some(rows),
                    ..Val::default()
                };
            }
            "range" | "print" | "isinstance" | "type" | "hasattr" | "getattr" | "setattr" | "id"
            | "callable" | "open" | "repr" | "format" | "str" | "seed" | "filterwarnings"
            | "simplefilter" | "set_seed" | "manual_seed" => {
                return Val::default();
            }
            "SimpleNamespace" | "dict" | "Bunch" | "EasyDict" | "AttrDict" if args.pos.is_empty() => {
                let fields = args
                    .kw
                    .iter()
                    .map(|(k, _, v)| (Key::Str(k.clone()), v.clone()))
                    .collect();
                return Val {
                    fields: Some(fields),
                    ..Val::default()
                };
            }
            "zip" => {
                let items: Vec<Val> = args.pos.iter().map(|(_, v)| v.element()).collect();
                return Val {
                    elem: Some(Box::new(Val::tuple(items))),
                    ..Val::default()
                };
            }
            "enumerate" => {
                let item = args.pos.first().map(|(_, v)| v.element()).unwrap_or_default();
                return Val {
                    elem: Some(Box::new(Val::tuple(vec![Val::default(), item]))),
                    ..Val::default()
                };
            }
            "clone" | "deepcopy" | "copy" => {
                let mut v = args.pos.first().map(|(_, v)| v.clone()).unwrap_or_default();
                if name == "clone" {
                    v.fitted = Origins::new();
                }
                return v;
            }
            "list" | "tuple" => {
                if let Some((_, v)) = args.pos.first()
                    && v.fields.is_some()
                {
                    return v.clone();
                }
            }
            _ => {}
        }
        if catalog::is_fit_method(name)
            || catalog::is_predict_method(name)
            || catalog::is_transform_method(name)
        {
            // `scaler.fit_transform(...)` on a name the loader dropped: an unknown receiver.
            let recv_node = call
                .child_by_field_name("function")
                .and_then(|fun| fun.child_by_field_name("object"));
            if let Some(recv_node) = recv_node {
                return self.call_method(Val::default(), recv_node, name, call, args, f);
            }
        }
        self.generic(call, &args)
    }

    // ----- methods -----

    fn call_method(
        &mut self,
        recv: Val,
        recv_node: Node<'t>,
        name: &str,
        call: Node<'t>,
        args: Args<'t>,
        f: &mut Frame<'t>,
    ) -> Val {
        const DATA_KW: &[&str] = &[
            "X",
            "x",
            "data",
            "raw_documents",
            "texts",
            "sentences",
            "corpus",
            "train_set",
            "dtrain",
        ];
        if let Some(method) = recv.class.as_deref().and_then(|c| self.method(c, name)) {
            let data = args.get(0, DATA_KW).map(|(_, v)| v.flatten());
            let (ret, after) = self.inline_method(method, name, recv.clone(), &args, call);
            if let (true, Some(data)) = (catalog::is_fit_method(name), data) {
                self.fit_event(call, recv.est.or(EstKinds::UNKNOWN), name, &data);
            }
            self.rebind(recv_node, after.clone(), f);
            return if ret.konst == Some(Konst::None) {
                after
            } else {
                ret
            };
        }
        let recv_flat = recv.flatten();
        if catalog::is_fit_method(name) && !recv_flat.is_data() {
            let data = match args.get(0, DATA_KW) {
                Some((_, v)) => v.flatten(),
                None => Val {
                    rows: recv_flat.fitted.clone(),
                    ..Val::default()
                },
            };
            let est = recv_flat.est.or(EstKinds::UNKNOWN);
            self.fit_event(call, est, name, &data);
            let selecting = recv_flat.early_stop
                || keyword_present(&args, "early_stopping_rounds")
                || keyword_present(&args, "use_best_model")
                || self.selecting_callbacks(&args);
            for k in catalog::EVAL_SET_KEYWORDS {
                if let Some((_, v)) = args.kw(k) {
                    self.check_eval_sets(call, &data, &v, selecting, *k == "validation_data");
                }
            }
            let mut fitted = recv.clone();
            fitted.est = est;
            fitted.fitted = data.rows.clone();
            self.rebind(recv_node, fitted.clone(), f);
            return match name {
                "fit" | "partial_fit" | "fit_generator" => fitted,
                "fit_transform" => data.derived(),
                "fit_resample" | "fit_sample" => {
                    let y = args.get(1, &["y"]).map(|(_, v)| v.derived()).unwrap_or_default();
                    Val::tuple(vec![data.derived(), y])
                }
                "fit_predict" => Val {
                    pred: true,
                    ..data.derived()
                },
                _ => Val::default(),
            };
        }
        if !recv_flat.is_data() {
            let x = args
                .get(0, &["X", "x", "data", "raw_documents"])
                .map(|(_, v)| v.flatten())
                .unwrap_or_default();
            if catalog::is_predict_method(name) {
                let mut r = x.derived();
                r.pred = true;
                r.insample = !recv_flat.fitted.is_empty() && overlap(&recv_flat.fitted, &x.rows);
                return r;
            }
            if catalog::is_transform_method(name) {
                return x.derived();
            }
            if name == "score" && !recv_flat.est.is_empty() {
                return Val {
                    train_score: overlap(&recv_flat.fitted, &x.rows),
                    ..Val::default()
                };
            }
            if name == "split" && recv_flat.est.contains(EstKinds::SPLITTER) {
                let id = call.id() as u64;
                let sides = Val::tuple(vec![
                    Val {
                        split: Some((id, 0)),
                        ..Val::default()
                    },
                    Val {
                        split: Some((id, 1)),
                        ..Val::default()
                    },
                ]);
                return Val {
                    elem: Some(Box::new(sides)),
                    ..Val::default()
                };
            }
            if catalog::is_optimizer(name) {
                return self.optimizer(call, &args, f);
            }
            if name == "set_params" {
                return recv;
            }
        }
        if recv_flat.is_data() {
            return self.data_method(recv, recv_node, name, call, args, f);
        }
        if catalog::is_selection(name) {
            let mut vals = args.values();
            vals.push(recv_flat.clone());
            self.selection_sink(call, &vals);
        }
        match name {
            "append" | "extend" | "add" | "insert" | "update" | "appendleft" | "setdefault" => {
                let joined = args.joined();
                let updated = if recv.fields.is_some() && name == "update" {
                    recv.join(&joined)
                } else {
                    recv.flatten().join(&joined)
                };
                self.rebind_root(recv_node, updated, f);
                return Val::default();
            }
            "get" | "pop" => {
                let key = args.pos.first().and_then(|(_, k)| key_of(k.konst.as_ref()));
                return recv.field(key.as_ref());
            }
            "items" => {
                let values = recv.element_of_values();
                return Val {
                    elem: Some(Box::new(Val::tuple(vec![Val::default(), values]))),
                    ..Val::default()
                };
            }
            "values" => {
                return Val {
                    elem: Some(Box::new(recv.element_of_values())),
                    ..Val::default()
                };
            }
            "keys" => return Val::default(),
            "copy" => return recv,
            _ => {}
        }
        if catalog::is_reduction(name) && (recv_flat.train_score || recv_flat.insample || !recv_flat.stat.is_empty())
        {
            return recv_flat.reduced();
        }
        if !recv_flat.est.is_empty() && !matches!(name, "compile" | "summary" | "save" | "save_model" | "evaluate") {
            return Val {
                stat: super::value::bases(&recv_flat.fitted),
                ..Val::default()
            };
        }
        if name == "evaluate" && !recv_flat.est.is_empty() {
            let x = args
                .get(0, &["x", "X"])
                .map(|(_, v)| v.flatten())
                .unwrap_or_default();
            return Val {
                train_score: overlap(&recv_flat.fitted, &x.rows),
                ..Val::default()
            };
        }
        let mut r = recv_flat.join(&args.joined());
        r.konst = None;
        r.len_of = None;
        r.col = None;
        r.mask = None;
        r.func = None;
        r.elem = recv_flat.elem.clone();
        r
    }

    fn data_method(
        &mut self,
        recv: Val,
        recv_node: Node<'t>,
        name: &str,
        call: Node<'t>,
        args: Args<'t>,
        f: &mut Frame<'t>,
    ) -> Val {
        let recv = recv.flatten();
        let axis_columns = args.axis_columns();
        if catalog::is_selection(name) && recv.train_score {
            self.selection_sink(call, std::slice::from_ref(&recv));
        }
        if catalog::is_reduction(name) {
            if recv.mode == Mode::Windowed || axis_columns {
                return recv.derived();
            }
            return recv.reduced();
        }
        if recv.mode == Mode::Grouped && matches!(name, "apply" | "filter") {
            return recv.reduced();
        }
        match name {
            "groupby" => {
                let mut r = recv.derived();
                r.mode = Mode::Grouped;
                return r;
            }
            n if catalog::is_window_method(n) => {
                let mut r = recv.derived();
                r.mode = Mode::Windowed;
                return r;
            }
            "transform" if recv.mode == Mode::Grouped => {
                if recv.is_feature_data() && has_base(&recv.rows, Base::Val) {
                    let msg = format!(
                        "`{}` computes group statistics over {}",
                        self.snippet(call),
                        rows_phrase(&recv.rows)
                    );
                    self.report(FindingKind::LeakagePreprocessingOnValidation, call, msg);
                }
                let mut r = recv.derived();
                r.mode = Mode::Plain;
                return r;
            }
            "rank" | "pct_change" if name == "rank" && !axis_columns && recv.mode != Mode::Windowed => {
                if recv.is_feature_data() && has_base(&recv.rows, Base::Val) {
                    let msg = format!(
                        "`{}` ranks values over {}",
                        self.snippet(call),
                        rows_phrase(&recv.rows)
                    );
                    self.report(FindingKind::LeakagePreprocessingOnValidation, call, msg);
                }
                return recv.derived();
            }
            "astype" => {
                if args
                    .get(0, &["dtype"])
                    .is_some_and(|(_, v)| v.konst == Some(Konst::Str("category".into())))
                {
                    self.encoding_event(call, &recv, "astype('category')");
                }
                let mut r = recv.derived();
                r.col = recv.col.clone();
                return r;
            }
            "factorize" => {
                self.encoding_event(call, &recv, name);
                return recv.derived();
            }
            "append" | "_append" | "combine_first" => {
                let mut parts = vec![recv.clone()];
                parts.extend(args.pos.iter().map(|(_, v)| v.clone()));
                return self.row_concat(&parts);
            }
            "isna" | "isnull" | "notna" | "notnull" => {
                let is_na = matches!(name, "isna" | "isnull");
                let mut r = recv.derived();
                let key = format!("na:{}", self.text(recv_node));
                let id = self.intern(key);
                r.mask = Some(Mask {
                    side: Some((id, u8::from(!is_na))),
                    marker: None,
                    na: recv.col.clone().map(|c| (c, is_na)),
                });
                return r;
            }
            "isin" | "between" | "str" => {
                let key = format!(
                    "{name}:{}:{}",
                    self.text(recv_node),
                    args.pos.first().map(|(n, _)| text(*n, self.src)).unwrap_or("")
                );
                let id = self.intern(key);
                let mut r = recv.derived();
                for v in args.values() {
                    r = absorb(&r, &v);
                }
                self.check_combine(call, &[&recv, &args.joined()]);
                r.mask = Some(Mask {
                    side: Some((id, 0)),
                    marker: None,
                    na: None,
                });
                return r;
            }
            "head" | "tail" => {
                let n = args.get(0, &["n"]).map(|(_, v)| v).unwrap_or_default();
                if let (Some(segs), Some(len)) = (&recv.segs, &n.len_of) {
                    let pick = if name == "head" { segs.first() } else { segs.last() };
                    if pick == Some(len) {
                        let mut r = recv.derived();
                        r.rows = len.clone();
                        r.segs = None;
                        r.marks.clear();
                        return r;
                    }
                }
                return recv.derived();
            }
            "copy" => return recv,
            "sample" => return recv.through((call.id() as u64, 0)),
            "drop" => {
                if let Some((_, idx)) = args.get(0, &["index", "labels"])
                    && let Some((id, side)) = idx.split
                {
                    return recv.through((id, 1 - side.min(1)));
                }
            }
            _ => {}
        }
        let vals = args.values();
        let mut refs: Vec<&Val> = vals.iter().collect();
        refs.push(&recv);
        self.check_combine(call, &refs);
        let mut r = recv.derived();
        r.col = recv.col.clone();
        for v in &vals {
            r = absorb(&r, v);
        }
        if keyword_present(&args, "inplace") {
            self.rebind_root(recv_node, r.clone(), f);
        }
        r
    }

    // ----- the leakage checks -----

    /// Judges fitting an estimator of kind `est` with method `method` on `data`.
    pub(super) fn fit_event(&mut self, call: Node<'t>, est: EstKinds, method: &str, data: &Val) {
        if !has_base(&data.rows, Base::Val) {
            return;
        }
        let learns = est.intersects(EstKinds::PRE | EstKinds::MODEL | EstKinds::UNKNOWN);
        if !learns && est.intersects(EstKinds::STATELESS | EstKinds::SPLITTER) {
            return;
        }
        let pre = match (est.contains(EstKinds::PRE), est.contains(EstKinds::MODEL)) {
            (true, false) => true,
            (false, true) => false,
            _ => catalog::is_preprocessing_fit(method),
        };
        let what = rows_phrase(&data.rows);
        if pre {
            let msg = format!("`{}` fits preprocessing on {what}", self.snippet(call));
            self.report(FindingKind::LeakagePreprocessingOnValidation, call, msg);
        } else {
            let msg = format!("`{}` trains a model on {what}", self.snippet(call));
            self.report(FindingKind::LeakageTrainValidationOverlap, call, msg);
        }
    }

    /// Category encodings (`get_dummies`, `factorize`, `astype("category")`) on mixed rows.
    fn encoding_event(&mut self, call: Node<'t>, data: &Val, what: &str) {
        if data.is_feature_data() && has_base(&data.rows, Base::Train) && has_base(&data.rows, Base::Val) {
            let msg = format!("`{what}` learns categories from training and validation rows together");
            self.report(FindingKind::LeakagePreprocessingOnValidation, call, msg);
        }
    }

    /// Early stopping / best-iteration selection whose every eval set overlaps the fit rows.
    fn check_eval_sets(&mut self, call: Node<'t>, fit: &Val, sets: &Val, selecting: bool, single: bool) {
        if !selecting || !fit.is_data() {
            return;
        }
        let first = |v: &Val| {
            if v.fields.is_some() {
                v.field(Some(&Key::Idx(0))).flatten()
            } else {
                v.flatten()
            }
        };
        let entries: Vec<Val> = if single {
            vec![first(sets)]
        } else {
            match &sets.fields {
                Some(fields) => fields.values().map(first).collect(),
                None => vec![sets.flatten()],
            }
        };
        if !entries.is_empty() && entries.iter().all(|e| e.is_data() && overlap(&e.rows, &fit.rows)) {
            let msg = format!(
                "`{}` early-stops on rows the model is trained on",
                self.snippet(call)
            );
            self.report(FindingKind::LeakageNoIndependentTest, call, msg);
        }
    }

    fn selecting_callbacks(&self, args: &Args<'t>) -> bool {
        args.kw("callbacks")
            .is_some_and(|(n, _)| catalog::is_selecting_callback(self.text(n)))
    }

    /// `max`/`min`/`sorted`/`argmax`… over scores computed on training rows.
    fn selection_sink(&mut self, call: Node<'t>, vals: &[Val]) {
        if vals.iter().any(|v| v.flatten().train_score) {
            let msg = format!(
                "`{}` selects by scores computed on the rows the model was trained on",
                self.snippet(call)
            );
            self.report(FindingKind::LeakageNoIndependentTest, call, msg);
        }
    }

    /// `study.optimize(objective)`, `fmin(fn=...)`: the objective's return value is selected on.
    fn optimizer(&mut self, call: Node<'t>, args: &Args<'t>, f: &mut Frame<'t>) -> Val {
        let mut score = false;
        for v in args.values() {
            score |= v.flatten().train_score;
            if let Some(name) = v.func.clone()
                && let Some((def, local)) = self.user_function(&name, f)
            {
                let none = Args {
                    pos: Vec::new(),
                    kw: Vec::new(),
                };
                let r = self.inline(def, local, &name, none, call, f);
                score |= r.flatten().train_score;
            }
        }
        if score {
            let msg = format!(
                "`{}` tunes on scores computed on the rows the model was trained on",
                self.snippet(call)
            );
            self.report(FindingKind::LeakageNoIndependentTest, call, msg);
        }
        Val::default()
    }

    /// `GridSearchCV(..., cv=[(idx, idx)])`: folds whose train and test parts are the same.
    fn check_degenerate_cv(&mut self, call: Node<'t>, args: &Args<'t>) {
        let Some((cv, _)) = args.kw("cv") else { return };
        let same = descendants(cv)
            .into_iter()
            .filter(|n| n.kind() == "tuple")
            .any(|t| {
                let parts = named(t);
                parts.len() == 2 && self.text(parts[0]) == self.text(parts[1])
            });
        if same {
            let msg = format!(
                "`{}` uses folds that test on their own training rows",
                self.snippet(cv)
            );
            self.report(FindingKind::LeakageNoIndependentTest, call, msg);
        }
    }

    /// After `x.fit(...)`: `x` (or `d["k"]`) now holds the fitted estimator.
    fn rebind(&mut self, recv_node: Node<'t>, v: Val, f: &mut Frame<'t>) {
        match recv_node.kind() {
            "identifier" => {
                let name = self.text(recv_node).to_string();
                self.assign(&name, v, f);
            }
            "subscript" => {
                let Some(base) = recv_node
                    .child_by_field_name("value")
                    .filter(|b| b.kind() == "identifier")
                else {
                    return;
                };
                let Some(sub) = recv_node.child_by_field_name("subscript") else {
                    return;
                };
                let key = key_of(self.eval(sub, f).konst.as_ref());
                let name = self.text(base).to_string();
                let mut cur = self.lookup(&name, f);
                match (cur.fields.as_mut(), key) {
                    (Some(fields), Some(k)) => {
                        fields.insert(k, v);
                    }
                    _ => cur = cur.join(&v.info()),
                }
                self.assign(&name, cur, f);
            }
            _ => {}
        }
    }

    fn rebind_root(&mut self, recv_node: Node<'t>, v: Val, f: &mut Frame<'t>) {
        if recv_node.kind() == "identifier" {
            let name = self.text(recv_node).to_string();
            self.assign(&name, v, f);
        } else if let Some(root) = self.root_name(recv_node) {
            let cur = self.lookup(&root, f);
            let updated = if cur.is_data() {
                absorb(&cur, &v)
            } else {
                cur.join(&v.info())
            };
            self.assign(&root, updated, f);
        }
    }
}

/// "validation rows" or "training and validation rows".
fn rows_phrase(rows: &Origins) -> &'static str {
    if has_base(rows, Base::Train) {
        "training and validation rows"
    } else {
        "validation rows"
    }
}

/// The kind of the last estimator among pipeline steps (`make_pipeline(a, b)`, `Pipeline([(n, a), …])`).
fn last_estimator(vals: &[Val]) -> Option<EstKinds> {
    let mut last = None;
    for v in vals {
        match &v.fields {
            Some(fields) => {
                let inner: Vec<Val> = fields.values().cloned().collect();
                if let Some(k) = last_estimator(&inner) {
                    last = Some(k);
                }
            }
            None if !v.est.is_empty() => last = Some(v.est),
            None => {}
        }
    }
    last
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
