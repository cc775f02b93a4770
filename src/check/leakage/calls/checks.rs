//! The leakage checks that happen at calls (fits, encodings, eval sets, selections, searches),
//! and rebinding a receiver a call changed.
//!
//! Invariant: these are the only functions of `calls` that report, apart from the combination
//! check every unknown or row-wise call runs ([`Interp::check_combine`]).

use tree_sitter::Node;

use super::super::catalog;
use super::super::interp::{Frame, Interp, absorb, key_of};
use super::super::value::{Base, EstKinds, Key, Origins, Val, has_base, overlap};
use super::Args;
use crate::check::FindingKind;
use crate::check::syntax::{descendants, named};

impl<'t> Interp<'t> {
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

    /// A transformation fitted and applied in one call (`scale(x)`, `x.rank()`): preprocessing
    /// when it sees validation feature rows; `doing` says what it does ("ranks values over").
    pub(super) fn fitted_in_place(&mut self, call: Node<'t>, data: &Val, doing: &str) {
        if data.is_feature_data() && has_base(&data.rows, Base::Val) {
            let msg = format!("`{}` {doing} {}", self.snippet(call), rows_phrase(&data.rows));
            self.report(FindingKind::LeakagePreprocessingOnValidation, call, msg);
        }
    }

    /// Category encodings (`get_dummies`, `factorize`, `astype("category")`) on mixed rows.
    pub(super) fn encoding_event(&mut self, call: Node<'t>, data: &Val, what: &str) {
        if data.is_feature_data() && has_base(&data.rows, Base::Train) && has_base(&data.rows, Base::Val) {
            let msg = format!("`{what}` learns categories from training and validation rows together");
            self.report(FindingKind::LeakagePreprocessingOnValidation, call, msg);
        }
    }

    /// Early stopping / best-iteration selection whose every eval set overlaps the fit rows.
    pub(super) fn check_eval_sets(
        &mut self,
        call: Node<'t>,
        fit: &Val,
        sets: &Val,
        selecting: bool,
        single: bool,
    ) {
        if !selecting || !fit.is_data() {
            return;
        }
        let entries = eval_entries(sets, single);
        if !entries.is_empty() && entries.iter().all(|e| e.is_data() && overlap(&e.rows, &fit.rows)) {
            let msg = format!(
                "`{}` early-stops on rows the model is trained on",
                self.snippet(call)
            );
            self.report(FindingKind::LeakageNoIndependentTest, call, msg);
        }
    }

    pub(super) fn selecting_callbacks(&self, args: &Args<'t>) -> bool {
        args.kw("callbacks")
            .is_some_and(|(n, _)| catalog::is_selecting_callback(self.text(n)))
    }

    /// `max`/`min`/`sorted`/`argmax`… over scores computed on training rows.
    pub(super) fn selection_sink(&mut self, call: Node<'t>, vals: &[Val]) {
        if vals.iter().any(|v| v.flatten().train_score) {
            let msg = format!(
                "`{}` selects by scores computed on the rows the model was trained on",
                self.snippet(call)
            );
            self.report(FindingKind::LeakageNoIndependentTest, call, msg);
        }
    }

    /// `study.optimize(objective)`, `fmin(fn=...)`: the objective's return value is selected on.
    pub(super) fn optimizer(&mut self, call: Node<'t>, args: &Args<'t>, f: &mut Frame<'t>) -> Val {
        let mut score = false;
        for v in args.values() {
            score |= v.flatten().train_score;
            if let Some(name) = v.func.clone()
                && let Some((def, local)) = self.user_function(&name, f)
            {
                let r = self.inline(def, local, &name, Args::none(), call, f);
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
    pub(super) fn check_degenerate_cv(&mut self, call: Node<'t>, args: &Args<'t>) {
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
    pub(super) fn rebind(&mut self, recv_node: Node<'t>, v: Val, f: &mut Frame<'t>) {
        match recv_node.kind() {
            "identifier" => {
                let name = self.text(recv_node).to_string();
                self.assign(&name, v, f);
            }
            "subscript" => self.rebind_entry(recv_node, v, f),
            _ => {}
        }
    }

    /// `d["k"].fit(...)` on a name `d`: its entry `k` (or, for an unknown key, all of `d`).
    fn rebind_entry(&mut self, recv_node: Node<'t>, v: Val, f: &mut Frame<'t>) {
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

    /// After an in-place change of `x` or of a part of it (`df[c].fillna(…, inplace=True)`).
    pub(super) fn rebind_root(&mut self, recv_node: Node<'t>, v: Val, f: &mut Frame<'t>) {
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

/// The eval sets of an `eval_set=`/`valid_sets=` argument, each as the data of its first part
/// (`(X, y)` pairs); with `single`, the argument is one set (`validation_data=(X, y)`).
fn eval_entries(sets: &Val, single: bool) -> Vec<Val> {
    let first = |v: &Val| {
        if v.fields.is_some() {
            v.field(Some(&Key::Idx(0))).flatten()
        } else {
            v.flatten()
        }
    };
    if single {
        return vec![first(sets)];
    }
    match &sets.fields {
        Some(fields) => fields.values().map(first).collect(),
        None => vec![sets.flatten()],
    }
}

/// "validation rows" or "training and validation rows".
pub(super) fn rows_phrase(rows: &Origins) -> &'static str {
    if has_base(rows, Base::Train) {
        "training and validation rows"
    } else {
        "validation rows"
    }
}
