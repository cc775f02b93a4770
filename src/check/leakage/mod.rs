//! Validation leakage, found by abstract interpretation of the contract functions.
//!
//! The harness runs `train(data)`, then `prepare_val(train_output, X_val)`, then
//! `predict(train_output, prepare_val_output)` (MODULAR), or `train_and_predict(data, X_val)`
//! (MONO). This pass runs the same functions in the same order on abstract values: `data` holds the
//! training rows, `X_val` the validation rows, `train_output` is whatever `train` returned, and so
//! on. Helpers of the submission are analysed inline at each call with the values they are given,
//! so a helper that fits a scaler is fine when called on `data` and leaks when called on `X_val`.
//! Constant-like globals the loader keeps are evaluated first and visible to every function.
//! Instances of the submission's own classes carry their attributes: `__init__` and methods
//! called on an instance are analysed inline with `self` bound to it.
//!
//! What is reported (each at the line of the call or statement doing it):
//! - `LeakagePreprocessingOnValidation`: fitting a preprocessing estimator (scaler, encoder,
//!   vectorizer, imputer, PCA/SVD, clustering, feature selector, resampler, keras/gensim
//!   tokenizers and embeddings; an unknown object through `fit_transform`/`fit_on_texts`/…) on
//!   data holding validation rows; fitting functions (`scale`, `zscore`, `qcut`, `cut(bins=n)`)
//!   on them; category encodings (`get_dummies`, `factorize`, `Categorical`, `astype("category")`)
//!   of a mix of training and validation rows; `groupby(...).transform` and `rank` over
//!   validation rows; and any statistic of validation rows (a reduction such as `mean`,
//!   `median`, `mode`, `quantile`, `value_counts`, `unique`, `describe`, or `np.mean(...)`)
//!   that is combined with feature data by arithmetic, passed to a data method or function
//!   (`fillna`, `clip`, `map`, `isin`, `np.where`…) or written into a frame. Post-processing of
//!   predictions with statistics of the predictions is not reported.
//! - `LeakageTrainValidationOverlap`: fitting a model (or an object of unknown kind through
//!   `fit`/`partial_fit`/`fit_predict`, a library `train`, or a cross-validation helper) on data
//!   holding validation rows: `X_val` itself, a concat/append/stack with it, or rows selected
//!   from it such as confident pseudo-labels.
//! - `LeakageNoIndependentTest`, defined as: a decision taken on a score of the rows a model
//!   was fitted on. Concretely: (a) early stopping or best-iteration selection (keyword
//!   `early_stopping_rounds`, an early-stopping/checkpoint callback, `use_best_model`, CatBoost,
//!   or a constructor given `early_stopping_rounds`) whose every eval set (`eval_set`,
//!   `valid_sets`, `evals`, `validation_data`) overlaps the fit rows; (b) a score computed from
//!   in-sample predictions (a metric, `.score`, `.evaluate`, or a reduction of in-sample
//!   predictions) that reaches a comparison `<`/`>`/`<=`/`>=`, a selection (`max`, `min`,
//!   `sorted`, `argmax`, `idxmax`, `sort_values`, …) or an optimiser's objective (`optimize`,
//!   `fmin`, `minimize`); (c) a search whose `cv=` lists folds with identical train and test parts.
//!   Cross-validation helpers and search CV scores are independent and never reported;
//!   printing or returning an in-sample score is not a decision and is not reported.
//!
//! Rows are "overlapping" by [`value::Origin::overlaps`]: the sides of one `train_test_split`,
//! fold split, slice at the same bound or complementary masks are disjoint; anything else
//! derived from the same rows overlaps. Invariant: the pass only reads the tree and the kept
//! top-level names; it adds findings of the three leakage kinds and nothing else.

mod calls;
mod catalog;
mod interp;
mod value;

use std::collections::HashMap;

use tree_sitter::Node;

use super::loader::Kept;
use super::syntax::{named, text};
use super::{Finding, Format};
use interp::{Frame, Interp};
use value::{Base, EstKinds, Val};

pub(super) fn check(_root: Node, src: &str, format: Format, kept: &Kept, out: &mut Vec<Finding>) {
    let classes: HashMap<String, EstKinds> = kept
        .classes
        .iter()
        .filter_map(|(name, def)| class_kind(*def, src).map(|k| (name.clone(), k)))
        .collect();
    let mut it = Interp::new(src, kept.functions.clone(), classes, kept.classes.clone());
    let mut module = Frame::new(Default::default());
    for stmt in &kept.load_statements {
        it.exec_stmt(*stmt, &mut module);
    }
    it.module_env = module.env;

    let data = Val::data(Base::Train);
    let x_val = Val::data(Base::Val);
    match format {
        Format::Modular => {
            let train_output = run_entry(&mut it, kept, "train", vec![data]);
            let prepared = match kept.functions.get("prepare_val") {
                Some(_) => run_entry(&mut it, kept, "prepare_val", vec![train_output.clone(), x_val]),
                None => x_val,
            };
            run_entry(&mut it, kept, "predict", vec![train_output, prepared]);
        }
        Format::Mono => {
            run_entry(&mut it, kept, "train_and_predict", vec![data, x_val]);
        }
    }
    out.extend(it.findings);
}

fn run_entry<'t>(it: &mut Interp<'t>, kept: &Kept<'t>, name: &str, args: Vec<Val>) -> Val {
    let Some(def) = kept.functions.get(name) else {
        return Val::default();
    };
    let args = calls::Args {
        pos: args.into_iter().map(|v| (*def, v)).collect(),
        kw: Vec::new(),
    };
    let mut frame = Frame::new(Default::default());
    it.run_function(*def, &args, &mut frame)
}

/// A user class's estimator kind from the methods it defines.
fn class_kind(def: Node, src: &str) -> Option<EstKinds> {
    let body = def.child_by_field_name("body")?;
    let methods: Vec<&str> = named(body)
        .into_iter()
        .map(|m| {
            if m.kind() == "decorated_definition" {
                m.child_by_field_name("definition").unwrap_or(m)
            } else {
                m
            }
        })
        .filter(|m| m.kind() == "function_definition")
        .filter_map(|m| m.child_by_field_name("name").map(|n| text(n, src)))
        .collect();
    if methods.iter().any(|m| m.starts_with("predict")) {
        Some(EstKinds::MODEL)
    } else if methods.contains(&"transform") {
        Some(EstKinds::PRE)
    } else if methods.contains(&"fit") {
        Some(EstKinds::UNKNOWN)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FindingKind, Format, check};

    const PRE: FindingKind = FindingKind::LeakagePreprocessingOnValidation;
    const OVERLAP: FindingKind = FindingKind::LeakageTrainValidationOverlap;
    const NIT: FindingKind = FindingKind::LeakageNoIndependentTest;

    /// Leakage findings as (kind, line).
    fn leaks(src: &str, format: Format) -> Vec<(FindingKind, usize)> {
        check(src, format)
            .into_iter()
            .filter(|f| f.kind.is_leakage())
            .map(|f| (f.kind, f.line))
            .collect()
    }

    fn modular(prepare_val: &str) -> String {
        format!(
            "from sklearn.preprocessing import StandardScaler\nfrom sklearn.linear_model import Ridge\n\
             def train(data):\n    scaler = StandardScaler().fit(data)\n    \
             model = Ridge().fit(scaler.transform(data), data['y'])\n    return {{'scaler': scaler, 'model': model}}\n\
             def prepare_val(train_output, X_val):\n{prepare_val}\n\
             def predict(train_output, prepare_val_output):\n    \
             return train_output['model'].predict(prepare_val_output)\n"
        )
    }

    #[test]
    fn transform_with_train_output_is_fine_refit_is_not() {
        let ok = modular("    return train_output['scaler'].transform(X_val)");
        assert_eq!(leaks(&ok, Format::Modular), vec![]);
        let bad = modular("    s = train_output['scaler']\n    s.fit(X_val)\n    return s.transform(X_val)");
        assert_eq!(leaks(&bad, Format::Modular), vec![(PRE, 9)]);
    }

    #[test]
    fn aliases_of_x_val_are_followed() {
        let bad = modular(
            "    X_test = X_val.drop(columns=['id'])\n    df = X_test.copy()\n    df = df[df.columns[:5]]\n    \
             return StandardScaler().fit_transform(df)",
        );
        assert_eq!(leaks(&bad, Format::Modular), vec![(PRE, 11)]);
    }

    #[test]
    fn mono_concat_fit_is_preprocessing_or_overlap_by_estimator() {
        let src = "import pandas as pd\nfrom sklearn.preprocessing import MinMaxScaler\n\
                   from sklearn.ensemble import RandomForestClassifier as RF\n\
                   def train_and_predict(data, X_val):\n    full = pd.concat([data, X_val])\n    \
                   MinMaxScaler().fit(full)\n    m = RandomForestClassifier().fit(full, None)\n    \
                   RF().fit(data, data['y'])\n    return m.predict(X_val)\n";
        assert_eq!(leaks(src, Format::Mono), vec![(PRE, 6), (OVERLAP, 7)]);
    }

    #[test]
    fn split_back_by_length_or_marker_is_not_overlap() {
        let src = "import pandas as pd\nfrom lightgbm import LGBMClassifier\n\
                   def train_and_predict(data, X_val):\n    n = len(data)\n    data['src'] = 'tr'\n    \
                   X_val['src'] = 'te'\n    full = pd.concat([data, X_val], ignore_index=True)\n    \
                   full['r'] = full['a'] / (full['b'] + 1)\n    a = full.iloc[:n]\n    \
                   b = full[full['src'] == 'tr']\n    c = full[full['src'] != 'te']\n    \
                   LGBMClassifier().fit(a, a['y'])\n    LGBMClassifier().fit(b, b['y'])\n    \
                   LGBMClassifier().fit(c, c['y'])\n    LGBMClassifier().fit(full.iloc[n:], None)\n    return 0\n";
        assert_eq!(leaks(src, Format::Mono), vec![(OVERLAP, 15)]);
    }

    #[test]
    fn helpers_are_judged_per_call_and_constant_flags_prune_branches() {
        let src = "from sklearn.preprocessing import StandardScaler\n\
                   def prep(df, scaler=None, fit=False):\n    if fit:\n        scaler = StandardScaler().fit(df)\n    \
                   return scaler.transform(df), scaler\n\
                   def train(data):\n    X, s = prep(data, fit=True)\n    return s\n\
                   def prepare_val(train_output, X_val):\n    X, _ = prep(X_val, train_output)\n    return X\n\
                   def predict(train_output, prepare_val_output):\n    return prepare_val_output\n";
        assert_eq!(leaks(src, Format::Modular), vec![]);
        let leaky = src.replace("prep(X_val, train_output)", "prep(X_val, fit=True)");
        assert_eq!(leaks(&leaky, Format::Modular), vec![(PRE, 4)]);
        assert!(
            check(&leaky, Format::Modular)[0]
                .message
                .contains("in `prep`, called on line 10")
        );
    }

    #[test]
    fn statistics_of_validation_rows_applied_to_data() {
        let src = "import numpy as np\ndef train_and_predict(data, X_val):\n    \
                   X_val['a'] = X_val['a'].fillna(X_val['a'].median())\n    \
                   X_val['b'] = X_val['b'].fillna(data['b'].median())\n    \
                   X_val['s'] = X_val[['a', 'b']].sum(axis=1)\n    \
                   X_val['r'] = X_val['a'].rolling(3).mean()\n    \
                   X_val['c'] = np.where(X_val['c'] > 0, X_val['c'], np.mean(X_val['c']))\n    \
                   X_val.loc[X_val['d'].isna(), 'd'] = X_val['d'].mean()\n    \
                   print(X_val.isnull().sum())\n    return X_val\n";
        assert_eq!(leaks(src, Format::Mono), vec![(PRE, 3), (PRE, 7), (PRE, 8)]);
    }

    #[test]
    fn postprocessing_predictions_is_not_leakage() {
        let src = "def train_and_predict(data, X_val):\n    m = Ridge().fit(data, data['y'])\n    \
                   p = m.predict(X_val)\n    p = (p - p.mean()) / p.std()\n    return p.rank(pct=True)\n";
        assert_eq!(leaks(src, Format::Mono), vec![]);
    }

    #[test]
    fn encodings_of_mixed_rows_and_group_statistics() {
        let src = "import pandas as pd\ndef train_and_predict(data, X_val):\n    \
                   full = pd.concat([data, X_val])\n    d = pd.get_dummies(full)\n    \
                   e = pd.get_dummies(X_val)\n    full['c'] = full['c'].astype('category')\n    \
                   full['g'] = full.groupby('k')['x'].transform('mean')\n    \
                   t = data.groupby('k')['x'].transform('mean')\n    return d\n";
        assert_eq!(leaks(src, Format::Mono), vec![(PRE, 4), (PRE, 6), (PRE, 7)]);
    }

    #[test]
    fn pseudo_labels_are_overlap() {
        let src = "import numpy as np\nimport pandas as pd\nfrom xgboost import XGBClassifier\n\
                   def train_and_predict(data, X_val):\n    m = XGBClassifier().fit(data, data['y'])\n    \
                   p = m.predict_proba(X_val)[:, 1]\n    sel = X_val[p > 0.9]\n    \
                   aug = pd.concat([data, sel.assign(y=1)])\n    m2 = XGBClassifier().fit(aug, aug['y'])\n    \
                   return m2.predict(X_val)\n";
        assert_eq!(leaks(src, Format::Mono), vec![(OVERLAP, 9)]);
    }

    #[test]
    fn early_stopping_needs_an_independent_eval_set() {
        let src = "from sklearn.model_selection import train_test_split\nimport lightgbm as lgb\n\
                   def train_and_predict(data, X_val):\n    X, y = data.drop(columns=['y']), data['y']\n    \
                   a, b, ya, yb = train_test_split(X, y)\n    m = lgb.LGBMRegressor()\n    \
                   m.fit(a, ya, eval_set=[(b, yb)], callbacks=[lgb.early_stopping(10)])\n    \
                   m.fit(a, ya, eval_set=[(a, ya), (b, yb)], callbacks=[lgb.early_stopping(10)])\n    \
                   m.fit(a, ya, eval_set=[(a, ya)], callbacks=[lgb.early_stopping(10)])\n    \
                   m.fit(X, y, eval_set=[(b, yb)], early_stopping_rounds=10)\n    \
                   m.fit(X, y, eval_set=[(X, y)])\n    return m.predict(X_val)\n";
        assert_eq!(leaks(src, Format::Mono), vec![(NIT, 9), (NIT, 10)]);
    }

    #[test]
    fn in_sample_scores_only_matter_when_they_drive_a_choice() {
        let src = "from sklearn.metrics import accuracy_score\nfrom sklearn.model_selection import train_test_split\n\
                   def train_and_predict(data, X_val):\n    X, y = data, data['y']\n    \
                   m = LogisticRegression().fit(X, y)\n    print(accuracy_score(y, m.predict(X)))\n    \
                   a, b, ya, yb = train_test_split(X, y)\n    m2 = LogisticRegression().fit(a, ya)\n    \
                   if accuracy_score(yb, m2.predict(b)) > 0.5:\n        pass\n    \
                   if accuracy_score(y, m.predict(X)) > 0.5:\n        pass\n    \
                   best = max([m, m2], key=lambda k: k.score(a, ya))\n    return m.predict(X_val)\n";
        assert_eq!(leaks(src, Format::Mono), vec![(NIT, 11), (NIT, 13)]);
    }

    #[test]
    fn folds_and_slices_are_independent_sides() {
        let src = "import numpy as np\nfrom sklearn.model_selection import KFold\n\
                   def train_and_predict(data, X_val):\n    X, y = data, data['y']\n    oof = np.zeros(len(X))\n    \
                   for tr, va in KFold(5).split(X):\n        m = Ridge().fit(X.iloc[tr], y.iloc[tr])\n        \
                   oof[va] = m.predict(X.iloc[va])\n        \
                   if mean_squared_error(y.iloc[va], m.predict(X.iloc[va])) < 1:\n            pass\n    \
                   cut = 100\n    m = Ridge().fit(X[:cut], y[:cut])\n    \
                   if r2_score(y[cut:], m.predict(X[cut:])) > 0:\n        pass\n    return oof\n";
        assert_eq!(leaks(src, Format::Mono), vec![]);
    }

    #[test]
    fn degenerate_search_folds_and_optuna_objectives() {
        let src = "import numpy as np\nimport optuna\n\
                   def train_and_predict(data, X_val):\n    idx = np.arange(len(data))\n    \
                   g = GridSearchCV(SVC(), {'C': [1, 10]}, cv=[(idx, idx)]).fit(data, data['y'])\n    \
                   def objective(trial):\n        m = SVC(C=trial.suggest_float('C', 0.1, 10)).fit(data, data['y'])\n        \
                   return m.score(data, data['y'])\n    \
                   optuna.create_study().optimize(objective, n_trials=5)\n    return g.predict(X_val)\n";
        assert_eq!(leaks(src, Format::Mono), vec![(NIT, 5), (NIT, 9)]);
    }

    #[test]
    fn kept_globals_and_user_classes_are_followed() {
        let src = "from sklearn.preprocessing import StandardScaler\n_SCALER = StandardScaler()\n\
                   class Prep:\n    def __init__(self):\n        self.s = StandardScaler()\n    \
                   def fit(self, df):\n        self.s.fit(df)\n        return self\n    \
                   def transform(self, df):\n        return self.s.transform(df)\n\
                   def train_and_predict(data, X_val):\n    _SCALER.fit_transform(X_val)\n    \
                   p = Prep().fit(data)\n    out = p.transform(X_val)\n    return out\n";
        assert_eq!(leaks(src, Format::Mono), vec![(PRE, 12)]);
    }

    #[test]
    fn literal_loops_run_once_per_frame() {
        let src = "import pandas as pd\ndef train_and_predict(data, X_val):\n    med = data['a'].median()\n    \
                   for df in [data, X_val]:\n        df['a'] = df['a'].fillna(med)\n        \
                   df = pd.get_dummies(df)\n    for df in [data, X_val]:\n        \
                   df['b'] = df['b'].fillna(df['b'].mean())\n    return X_val\n";
        assert_eq!(leaks(src, Format::Mono), vec![(PRE, 8)]);
    }
}
