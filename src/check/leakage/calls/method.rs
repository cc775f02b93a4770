//! Method calls on values that are not data: the submission's own methods, estimator methods
//! (`fit`, `predict`, `score`, `split`…), containers (`append`, `get`, `items`…) and unknown
//! objects; methods of data go on to `data`. Classified once into a [`MethodCall`].
//!
//! Invariant: a method the submission's class defines wins over every catalog kind; then
//! [`classify`] tries the kinds in the order of [`MethodCall`]'s variants. A method no estimator
//! kind owns ([`Other`]) is first judged as a selection over the receiver and its arguments.

use tree_sitter::Node;

use super::super::catalog;
use super::super::interp::{Frame, Interp, key_of};
use super::super::value::{EstKinds, Konst, Val, bases, overlap};
use super::Args;

/// Keywords that give a fit method its rows when they are not the first positional argument.
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

/// What a method call on a (flattened) receiver does, in the order [`classify`] tries the kinds.
enum MethodCall {
    /// Any method of data (frames, series, arrays): see `data`.
    Data,
    /// `fit`, `fit_transform`, `fit_resample`… on a non-data receiver.
    Fit,
    Predict,
    /// `transform`, `texts_to_sequences`, `kneighbors`…: rows mapped with what was learned.
    Transform,
    /// `model.score(X, y)`.
    Score,
    /// `KFold(...).split(X)`: (train, test) index pairs, one side of one split each.
    Split,
    /// `study.optimize(objective)`.
    Optimizer,
    /// `set_params(...)`: the receiver itself.
    SetParams,
    Other(Other),
}

/// Methods no estimator kind owns: containers, statistics, and unknown objects.
enum Other {
    /// `append`, `extend`, `update`…: the receiver now also holds the arguments.
    Store,
    /// `get`, `pop`.
    Get,
    Items,
    Values,
    Keys,
    Copy,
    /// A reduction of scores, in-sample predictions or statistics: still a statistic.
    Reduce,
    /// Any other method of an estimator (`get_feature_names_out()`…): something computed from
    /// the rows it was fitted on.
    FittedStat,
    /// Keras `model.evaluate(x, y)`.
    Evaluate,
    /// An unknown object's method: its result joins the receiver and the arguments.
    Opaque,
}

fn classify(recv: &Val, name: &str) -> MethodCall {
    match name {
        _ if recv.is_data() => MethodCall::Data,
        n if catalog::is_fit_method(n) => MethodCall::Fit,
        n if catalog::is_predict_method(n) => MethodCall::Predict,
        n if catalog::is_transform_method(n) => MethodCall::Transform,
        "score" if !recv.est.is_empty() => MethodCall::Score,
        "split" if recv.est.contains(EstKinds::SPLITTER) => MethodCall::Split,
        n if catalog::is_optimizer(n) => MethodCall::Optimizer,
        "set_params" => MethodCall::SetParams,
        _ => MethodCall::Other(classify_other(recv, name)),
    }
}

fn classify_other(recv: &Val, name: &str) -> Other {
    let estimator = !recv.est.is_empty();
    match name {
        "append" | "extend" | "add" | "insert" | "update" | "appendleft" | "setdefault" => Other::Store,
        "get" | "pop" => Other::Get,
        "items" => Other::Items,
        "values" => Other::Values,
        "keys" => Other::Keys,
        "copy" => Other::Copy,
        n if catalog::is_reduction(n) && (recv.train_score || recv.insample || !recv.stat.is_empty()) => {
            Other::Reduce
        }
        n if estimator && !matches!(n, "compile" | "summary" | "save" | "save_model" | "evaluate") => {
            Other::FittedStat
        }
        "evaluate" if estimator => Other::Evaluate,
        _ => Other::Opaque,
    }
}

/// The receiver of a method call: its value, that value flattened, and its expression.
struct Recv<'t> {
    val: Val,
    flat: Val,
    node: Node<'t>,
}

impl<'t> Interp<'t> {
    /// `recv.name(args)`, with `recv_node` the receiver's expression.
    pub(super) fn call_method(
        &mut self,
        recv: Val,
        recv_node: Node<'t>,
        name: &str,
        call: Node<'t>,
        args: Args<'t>,
        f: &mut Frame<'t>,
    ) -> Val {
        let recv = Recv {
            flat: recv.flatten(),
            val: recv,
            node: recv_node,
        };
        if let Some(method) = recv.val.class.as_deref().and_then(|c| self.method(c, name)) {
            return self.user_method(method, recv, name, call, &args, f);
        }
        match classify(&recv.flat, name) {
            MethodCall::Data => self.data_method(recv.flat, recv.node, name, call, args, f),
            MethodCall::Fit => self.fit(recv, name, call, &args, f),
            MethodCall::Predict => predict(&recv.flat, &args),
            MethodCall::Transform => model_input(&args).derived(),
            MethodCall::Score => score(&recv.flat, &model_input(&args)),
            MethodCall::Split => split_indices(call),
            MethodCall::Optimizer => self.optimizer(call, &args, f),
            MethodCall::SetParams => recv.val,
            MethodCall::Other(kind) => self.call_other(kind, recv, name, call, &args, f),
        }
    }

    fn call_other(
        &mut self,
        kind: Other,
        recv: Recv<'t>,
        name: &str,
        call: Node<'t>,
        args: &Args<'t>,
        f: &mut Frame<'t>,
    ) -> Val {
        if catalog::is_selection(name) {
            let mut vals = args.values();
            vals.push(recv.flat.clone());
            self.selection_sink(call, &vals);
        }
        match kind {
            Other::Store => self.store(recv, name, args, f),
            Other::Get => {
                let key = args.pos.first().and_then(|(_, k)| key_of(k.konst.as_ref()));
                recv.val.field(key.as_ref())
            }
            Other::Items => Val::iterable(Val::tuple(vec![Val::default(), recv.val.element_of_values()])),
            Other::Values => Val::iterable(recv.val.element_of_values()),
            Other::Keys => Val::default(),
            Other::Copy => recv.val,
            Other::Reduce => recv.flat.reduced(),
            Other::FittedStat => Val {
                stat: bases(&recv.flat.fitted),
                ..Val::default()
            },
            Other::Evaluate => score(&recv.flat, &args.flat(0, &["x", "X"])),
            Other::Opaque => opaque(recv.flat, args),
        }
    }

    /// A method of the submission's class, run inline; a fit method is judged on its data too.
    fn user_method(
        &mut self,
        method: Node<'t>,
        recv: Recv<'t>,
        name: &str,
        call: Node<'t>,
        args: &Args<'t>,
        f: &mut Frame<'t>,
    ) -> Val {
        let data = args.get(0, DATA_KW).map(|(_, v)| v.flatten());
        let est = recv.val.est;
        let (ret, after) = self.inline_method(method, name, recv.val, args, call);
        if let (true, Some(data)) = (catalog::is_fit_method(name), data) {
            self.fit_event(call, est.or(EstKinds::UNKNOWN), name, &data);
        }
        self.rebind(recv.node, after.clone(), f);
        if ret.konst == Some(Konst::None) {
            after
        } else {
            ret
        }
    }

    /// `est.fit(X, …)`: judged, checked for early stopping, and `est` is now fitted on `X`.
    fn fit(&mut self, recv: Recv<'t>, name: &str, call: Node<'t>, args: &Args<'t>, f: &mut Frame<'t>) -> Val {
        let data = match args.get(0, DATA_KW) {
            Some((_, v)) => v.flatten(),
            // statsmodels: `OLS(y, X).fit()` fits on what the model was constructed with.
            None => Val {
                rows: recv.flat.fitted.clone(),
                ..Val::default()
            },
        };
        let est = recv.flat.est.or(EstKinds::UNKNOWN);
        self.fit_event(call, est, name, &data);
        self.check_fit_eval_sets(call, &recv.flat, &data, args);
        let fitted = Val {
            est,
            fitted: data.rows.clone(),
            ..recv.val
        };
        self.rebind(recv.node, fitted.clone(), f);
        fit_result(name, fitted, &data, args)
    }

    fn check_fit_eval_sets(&mut self, call: Node<'t>, recv: &Val, data: &Val, args: &Args<'t>) {
        let selecting = recv.early_stop
            || args.is_set("early_stopping_rounds")
            || args.is_set("use_best_model")
            || self.selecting_callbacks(args);
        for k in catalog::EVAL_SET_KEYWORDS {
            if let Some((_, v)) = args.kw(k) {
                self.check_eval_sets(call, data, &v, selecting, *k == "validation_data");
            }
        }
    }

    /// `list.append(x)`, `d.update(e)`…: the receiver's variable now also holds the arguments.
    fn store(&mut self, recv: Recv<'t>, name: &str, args: &Args<'t>, f: &mut Frame<'t>) -> Val {
        let joined = args.joined();
        let updated = if recv.val.fields.is_some() && name == "update" {
            recv.val.join(&joined)
        } else {
            recv.flat.join(&joined)
        };
        self.rebind_root(recv.node, updated, f);
        Val::default()
    }
}

/// What a fit method returns: the fitted estimator, or what it computed from the rows.
fn fit_result(name: &str, fitted: Val, data: &Val, args: &Args) -> Val {
    match name {
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
    }
}

/// The rows a predict/transform/score method is applied to.
fn model_input(args: &Args) -> Val {
    args.flat(0, &["X", "x", "data", "raw_documents"])
}

/// Predictions, in-sample when the rows overlap those the estimator was fitted on.
fn predict(recv: &Val, args: &Args) -> Val {
    let x = model_input(args);
    Val {
        pred: true,
        insample: !recv.fitted.is_empty() && overlap(&recv.fitted, &x.rows),
        ..x.derived()
    }
}

/// A score of the estimator `recv` on `x`: in-sample when `x` overlaps its fit rows.
fn score(recv: &Val, x: &Val) -> Val {
    Val {
        train_score: overlap(&recv.fitted, &x.rows),
        ..Val::default()
    }
}

/// Iterating `splitter.split(X)` gives (train, test) pairs: the two sides of one split.
fn split_indices(call: Node) -> Val {
    let id = call.id() as u64;
    let side = |s| Val {
        split: Some((id, s)),
        ..Val::default()
    };
    Val::iterable(Val::tuple(vec![side(0), side(1)]))
}

fn opaque(recv: Val, args: &Args) -> Val {
    Val {
        konst: None,
        len_of: None,
        col: None,
        mask: None,
        func: None,
        elem: recv.elem.clone(),
        ..recv.join(&args.joined())
    }
}
