//! Calls by name: library constructors and functions (`StandardScaler()`, `pd.concat(…)`,
//! `lgb.train(…)`, `len(x)`), classified once into a [`NamedCall`] with one handler per kind.
//!
//! Invariant: [`classify`] tries the kinds in the order of [`NamedCall`]'s variants and the first
//! that matches decides. A name no catalog kind owns ([`Plain`]) is first judged as a selection
//! over scores (`max(...)`, `np.argmax(...)`), then handled as a numeric reduction, a builtin,
//! a method of a receiver the loader dropped, or an unknown function.

use tree_sitter::Node;

use super::super::catalog;
use super::super::interp::{Frame, Interp};
use super::super::value::{EstKinds, Key, Konst, Origins, Val};
use super::Args;

/// What a call by name does, in the order [`classify`] tries the kinds.
enum NamedCall<'t> {
    Pipeline,
    /// `GridSearchCV(estimator, …)` and the other hyper-parameter searches.
    Search,
    /// An estimator constructor, of this kind.
    Estimator(EstKinds),
    /// `lgb.Dataset(X, y)`, `DMatrix`, `DataLoader`…: rows held for a library's own training.
    DataWrapper,
    /// `lgb.train`, `xgb.cv`, `catboost.train`.
    LibraryTrain,
    /// `train_test_split`.
    Split,
    /// `cross_val_score`, `cross_val_predict`…
    CrossValidation,
    /// `pd.concat`, `np.vstack`, `np.append`…
    RowConcat,
    /// `np.hstack`, `np.column_stack`…
    ColumnStack,
    /// `pd.get_dummies`, `pd.factorize`, `pd.Categorical`.
    Encoding,
    /// `scale`, `zscore`, `qcut`, `cut(x, bins=n)`: a transformation fitted on its argument.
    Fitting,
    Metric,
    /// `fmin`, `minimize`…: they call an objective and keep its best result.
    Optimizer,
    Plain(Plain<'t>),
}

/// Names no catalog kind owns.
enum Plain<'t> {
    /// `np.mean(x)`, `max(a, b)`, `statistics.median(x)`.
    Reduction,
    Len,
    /// Builtins whose result carries nothing the analysis follows (`print`, `range`, `seed`…).
    Inert,
    /// `SimpleNamespace(a=…)`, `dict(a=…)`: fields by keyword.
    Namespace,
    Zip,
    Enumerate,
    /// `clone`, `deepcopy`, `copy`.
    Copy,
    /// `list(t)`/`tuple(t)` of a literal: the literal itself.
    Literal,
    /// `scaler.fit_transform(...)` on a name the loader dropped: a method of an unknown receiver.
    Method(Node<'t>),
    Unknown,
}

fn classify<'t>(name: &str, dotted: &str, call: Node<'t>, args: &Args<'t>) -> NamedCall<'t> {
    match catalog::estimator_kind(name) {
        _ if catalog::is_pipeline(name) => NamedCall::Pipeline,
        _ if catalog::is_search(name) => NamedCall::Search,
        Some(kind) => NamedCall::Estimator(kind),
        None if catalog::is_data_wrapper(name) => NamedCall::DataWrapper,
        None if catalog::is_library_train(dotted) => NamedCall::LibraryTrain,
        None if catalog::is_split_function(name) => NamedCall::Split,
        None if catalog::is_cross_validation(name) => NamedCall::CrossValidation,
        None if is_row_concat(name, dotted) => NamedCall::RowConcat,
        None if catalog::is_column_stack(name) => NamedCall::ColumnStack,
        None if catalog::is_encoding_function(name) => NamedCall::Encoding,
        None if catalog::is_fitting_function(name) || cuts_into_bins(name, args) => NamedCall::Fitting,
        None if catalog::is_metric(name) => NamedCall::Metric,
        None if catalog::is_optimizer(name) => NamedCall::Optimizer,
        None => NamedCall::Plain(classify_plain(name, dotted, call, args)),
    }
}

fn classify_plain<'t>(name: &str, dotted: &str, call: Node<'t>, args: &Args<'t>) -> Plain<'t> {
    if is_numeric_reduction(name, dotted) {
        return Plain::Reduction;
    }
    match name {
        "len" => Plain::Len,
        "range" | "print" | "isinstance" | "type" | "hasattr" | "getattr" | "setattr" | "id" | "callable"
        | "open" | "repr" | "format" | "str" | "seed" | "filterwarnings" | "simplefilter" | "set_seed"
        | "manual_seed" => Plain::Inert,
        "SimpleNamespace" | "dict" | "Bunch" | "EasyDict" | "AttrDict" if args.pos.is_empty() => {
            Plain::Namespace
        }
        "zip" => Plain::Zip,
        "enumerate" => Plain::Enumerate,
        "clone" | "deepcopy" | "copy" => Plain::Copy,
        "list" | "tuple" if args.pos.first().is_some_and(|(_, v)| v.fields.is_some()) => Plain::Literal,
        _ => match dropped_receiver(name, call) {
            Some(recv) => Plain::Method(recv),
            None => Plain::Unknown,
        },
    }
}

/// `append` is a row concatenation as a module function (`np.append`), not as a bare name.
fn is_row_concat(name: &str, dotted: &str) -> bool {
    catalog::is_row_concat(name) && (name != "append" || dotted.contains('.'))
}

/// `pd.cut(x, n)` with a number of bins learns the bin edges from `x`.
fn cuts_into_bins(name: &str, args: &Args) -> bool {
    name == "cut"
        && args
            .get(1, &["bins"])
            .is_some_and(|(_, v)| matches!(v.konst, Some(Konst::Int(_))))
}

/// Whether `dotted` is a function of a numeric module (`np.max`, `statistics.median`): those
/// reduce and select over values; another library's function of the same name need not.
fn is_numeric_module(dotted: &str) -> bool {
    matches!(
        dotted.split('.').next().unwrap_or(""),
        "np" | "numpy" | "statistics" | "scipy" | "stats" | "pd" | "pandas" | "torch" | "tf"
    )
}

/// A reduction by a numeric module's function (`np.mean`) or by a builtin `max`/`min`/`sum`;
/// nothing under a `random` module summarises rows, whatever its name.
fn is_numeric_reduction(name: &str, dotted: &str) -> bool {
    catalog::is_reduction(name)
        && (is_numeric_module(dotted) || matches!(name, "max" | "min" | "sum"))
        && !dotted.contains("random")
}

/// A selection by a builtin (`max(…)`) or by a numeric module's function (`np.argmax(…)`).
fn is_selection(name: &str, dotted: &str) -> bool {
    catalog::is_selection(name) && (!dotted.contains('.') || is_numeric_module(dotted))
}

/// The receiver of `obj.method(...)` when a fit/predict/transform method is called on a module
/// path, i.e. a name the loader did not keep.
fn dropped_receiver<'t>(name: &str, call: Node<'t>) -> Option<Node<'t>> {
    let method = catalog::is_fit_method(name)
        || catalog::is_predict_method(name)
        || catalog::is_transform_method(name);
    if !method {
        return None;
    }
    call.child_by_field_name("function")
        .and_then(|fun| fun.child_by_field_name("object"))
}

impl<'t> Interp<'t> {
    /// `name(...)` or `module.name(...)` (`dotted`) for a name that is not the submission's.
    pub(super) fn call_named(
        &mut self,
        name: &str,
        dotted: &str,
        call: Node<'t>,
        args: Args<'t>,
        f: &mut Frame<'t>,
    ) -> Val {
        match classify(name, dotted, call, &args) {
            NamedCall::Pipeline => pipeline(&args),
            NamedCall::Search => self.search(call, &args),
            NamedCall::Estimator(kind) => self.new_estimator(kind, name, call, &args),
            NamedCall::DataWrapper => data_wrapper(&args),
            NamedCall::LibraryTrain => self.library_train(dotted, call, &args),
            NamedCall::Split => split(call, &args),
            NamedCall::CrossValidation => self.cross_validation(name, call, &args),
            NamedCall::RowConcat => self.concat(name, &args),
            NamedCall::ColumnStack => column_stack(&args),
            NamedCall::Encoding => self.encoding(name, call, &args),
            NamedCall::Fitting => self.fitting(call, &args),
            NamedCall::Metric => metric(&args),
            NamedCall::Optimizer => self.optimizer(call, &args, f),
            NamedCall::Plain(kind) => {
                if is_selection(name, dotted) {
                    self.selection_sink(call, &args.values());
                }
                self.call_plain(kind, name, call, args, f)
            }
        }
    }

    fn call_plain(
        &mut self,
        kind: Plain<'t>,
        name: &str,
        call: Node<'t>,
        args: Args<'t>,
        f: &mut Frame<'t>,
    ) -> Val {
        match kind {
            Plain::Reduction => reduction(&args),
            Plain::Len => len(&args),
            Plain::Inert => Val::default(),
            Plain::Namespace => namespace(&args),
            Plain::Zip => zip(&args),
            Plain::Enumerate => enumerate(&args),
            Plain::Copy => copy(name, &args),
            Plain::Literal => first(&args),
            Plain::Method(recv) => self.call_method(Val::default(), recv, name, call, args, f),
            Plain::Unknown => self.generic(call, &args),
        }
    }

    fn search(&mut self, call: Node<'t>, args: &Args<'t>) -> Val {
        let inner = args.flat(0, &["estimator"]);
        self.check_degenerate_cv(call, args);
        Val {
            est: inner.est.or(EstKinds::MODEL),
            early_stop: inner.early_stop,
            ..Val::default()
        }
    }

    /// An estimator constructed as `name(args)`; gensim models train on what they are given.
    fn new_estimator(&mut self, kind: EstKinds, name: &str, call: Node<'t>, args: &Args<'t>) -> Val {
        let data = args.joined();
        if catalog::trains_on_construction(name) && data.is_data() {
            self.fit_event(call, EstKinds::PRE, "fit", &data);
        }
        Val {
            est: kind,
            early_stop: catalog::selects_on_eval_by_default(name) || args.is_set("early_stopping_rounds"),
            fitted: data.rows,
            ..Val::default()
        }
    }

    fn library_train(&mut self, dotted: &str, call: Node<'t>, args: &Args<'t>) -> Val {
        let data = args.flat(1, &["train_set", "dtrain", "pool"]);
        self.fit_event(call, EstKinds::MODEL, "fit", &data);
        if dotted.ends_with(".cv") {
            return Val::default();
        }
        let selecting = args.is_set("early_stopping_rounds") || self.selecting_callbacks(args);
        for k in ["valid_sets", "evals"] {
            if let Some((_, v)) = args.kw(k) {
                self.check_eval_sets(call, &data, &v, selecting, false);
            }
        }
        Val {
            est: EstKinds::MODEL,
            fitted: data.rows,
            ..Val::default()
        }
    }

    fn cross_validation(&mut self, name: &str, call: Node<'t>, args: &Args<'t>) -> Val {
        let est = args.flat(0, &["estimator"]).est;
        let data = args.flat(1, &["X"]);
        self.fit_event(call, est.or(EstKinds::MODEL), "fit", &data);
        if name != "cross_val_predict" {
            return Val::default();
        }
        Val {
            pred: true,
            ..data.derived()
        }
    }

    /// `pd.concat([a, b])` takes its parts from one list; `np.append(a, b)` from its arguments.
    fn concat(&self, name: &str, args: &Args<'t>) -> Val {
        let parts = match args.pos.first() {
            Some((_, first)) if matches!(name, "concat" | "concatenate" | "vstack" | "row_stack") => {
                match &first.fields {
                    Some(fields) => fields.values().cloned().collect(),
                    None => vec![first.flatten()],
                }
            }
            _ => args.positional(),
        };
        if args.axis_columns() {
            return side_by_side(&parts);
        }
        self.row_concat(&parts)
    }

    fn encoding(&mut self, name: &str, call: Node<'t>, args: &Args<'t>) -> Val {
        let data = args.flat(0, &["data", "values"]);
        self.encoding_event(call, &data, name);
        data.derived()
    }

    fn fitting(&mut self, call: Node<'t>, args: &Args<'t>) -> Val {
        let data = args.flat(0, &["X", "x", "a"]);
        self.fitted_in_place(call, &data, "fits a transformation on");
        data.derived()
    }
}

/// `Pipeline([(n, a), …])`, `make_pipeline(a, b)`: an estimator of its last step's kind.
fn pipeline(args: &Args) -> Val {
    let steps = args.values();
    Val {
        est: last_estimator(&steps).unwrap_or(EstKinds::UNKNOWN),
        early_stop: steps.iter().any(|v| v.flatten().early_stop),
        ..Val::default()
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

fn data_wrapper(args: &Args) -> Val {
    args.get(0, &["data", "X", "x", "tensors"])
        .map(|(_, v)| v.derived())
        .unwrap_or_default()
}

/// `train_test_split(a, b, …)`: both sides of each argument, in order.
fn split(call: Node, args: &Args) -> Val {
    let id = call.id() as u64;
    let sides = args
        .pos
        .iter()
        .flat_map(|(_, v)| [v.through((id, 0)), v.through((id, 1))])
        .collect();
    Val::tuple(sides)
}

fn column_stack(args: &Args) -> Val {
    let parts: Vec<Val> = match args.pos.first() {
        Some((_, first)) if first.fields.is_some() => {
            first.fields.iter().flat_map(|m| m.values().cloned()).collect()
        }
        _ => args.positional(),
    };
    side_by_side(&parts)
}

/// Parts joined column-wise: the same rows, side by side.
fn side_by_side(parts: &[Val]) -> Val {
    parts.iter().fold(Val::default(), |acc, p| acc.join(&p.derived()))
}

/// A score, in-sample when any of its inputs are in-sample predictions or scores.
fn metric(args: &Args) -> Val {
    let in_sample = args.values().iter().any(|v| {
        let v = v.flatten();
        v.insample || v.train_score
    });
    Val {
        train_score: in_sample,
        ..Val::default()
    }
}

fn reduction(args: &Args) -> Val {
    if args.axis_columns() {
        return args.joined().derived();
    }
    args.values()
        .iter()
        .fold(Val::default(), |acc, v| acc.join(&v.reduced()))
}

fn len(args: &Args) -> Val {
    let rows = args
        .pos
        .first()
        .map(|(_, v)| v.flatten().rows)
        .unwrap_or_default();
    Val {
        len_of: (!rows.is_empty()).then_some(rows),
        ..Val::default()
    }
}

fn namespace(args: &Args) -> Val {
    let fields = args
        .kw
        .iter()
        .map(|(k, _, v)| (Key::Str(k.clone()), v.clone()))
        .collect();
    Val {
        fields: Some(fields),
        ..Val::default()
    }
}

fn zip(args: &Args) -> Val {
    let items: Vec<Val> = args.pos.iter().map(|(_, v)| v.element()).collect();
    Val::iterable(Val::tuple(items))
}

fn enumerate(args: &Args) -> Val {
    let item = args.pos.first().map(|(_, v)| v.element()).unwrap_or_default();
    Val::iterable(Val::tuple(vec![Val::default(), item]))
}

/// A copy; `clone(estimator)` is a fresh, unfitted one.
fn copy(name: &str, args: &Args) -> Val {
    let mut v = first(args);
    if name == "clone" {
        v.fitted = Origins::new();
    }
    v
}

fn first(args: &Args) -> Val {
    args.pos.first().map(|(_, v)| v.clone()).unwrap_or_default()
}
