//! The `template` provider: a fixed MODULAR_PREDICT solution rendered from a template in
//! `assets/generate/` with a competition's manifest, the algorithmic baseline of the paper.
//!
//! One template exists, `autogluon` (`assets/generate/autogluon.py.j2`, embedded):
//! AutoGluon's `TabularPredictor` fitted on `train.csv` with the competition's label,
//! problem type and an eval metric mapped from its metric ([`eval_metric`]; a weighted
//! metric fits and evaluates with the competition's weight column), the preset,
//! time limit and model families of the model's `params` in `manifests/models.toml`
//! ([`AutogluonParams`], defaults sized for a 2-core machine), the sample's seed in every
//! family, and CPU families only (LightGBM, CatBoost, XGBoost, random forests, extra trees,
//! k-nearest neighbours: no torch in the execution environment).
//!
//! Non-tabular competitions use a documented tabular fallback ([`Fallback`]), recorded in
//! the rendered code's docstring and in the context object the generate event names:
//! text columns become character n-gram TF-IDF reduced by a seeded truncated SVD; images
//! (bundled as pixel columns) are fed as their pixels.
//!
//! Invariants: rendering is a pure function of (template, manifest, params, seed), so the
//! code's blake3 (the unit's key) changes exactly when one of them does; every value reaches
//! the Python as a literal made by [`py_literal`], never by string pasting.

use minijinja::value::Value;
use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

use crate::competition::Competition;
use crate::competition::spec::Spec;
use crate::manifest::competition::{Domain, TaskType};
use crate::manifest::models::Model;
use crate::manifest::templates::{AutogluonParams, FAMILY_SEEDS, ParamsError};

/// `assets/generate/autogluon.py.j2`.
const AUTOGLUON: &str = include_str!("../../assets/generate/autogluon.py.j2");

/// Why a template solution cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error(transparent)]
    Params(#[from] ParamsError),
    #[error("competition `{competition}`: metric `{metric}` has no AutoGluon eval metric")]
    Metric { competition: String, metric: String },
    #[error("competition `{competition}`: task `{task}` has no AutoGluon problem type")]
    Task { competition: String, task: String },
    #[error("template `{template}` failed to render for `{competition}`")]
    Render {
        template: String,
        competition: String,
        #[source]
        source: minijinja::Error,
    },
}

/// How a non-tabular competition reaches a tabular predictor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fallback {
    /// Tabular data: none needed.
    None,
    /// Text columns → character 1–3-gram TF-IDF → truncated SVD (seeded).
    Text,
    /// Images, bundled as one column per pixel: the pixels as features.
    Pixels,
}

impl Fallback {
    fn of(domain: Domain) -> Self {
        match domain {
            Domain::Tabular => Self::None,
            Domain::Text => Self::Text,
            Domain::Image => Self::Pixels,
        }
    }

    fn doc(self, p: &AutogluonParams) -> String {
        match self {
            Self::None => "none (tabular data)".into(),
            Self::Text => format!(
                "text columns (mean length >= {} chars) become character 1-3-gram TF-IDF \
                 ({} terms at most) reduced to {} components by a seeded truncated SVD",
                p.text_min_mean_chars, p.text_max_features, p.text_components
            ),
            Self::Pixels => "the image's pixel columns are the features".into(),
        }
    }
}

/// A rendered solution and the context it was rendered from.
#[derive(Clone, Debug)]
pub struct Rendered {
    pub code: String,
    /// JSON of the template's name and every value it was given (stored as an object).
    pub context: Vec<u8>,
    pub fallback: Fallback,
}

/// AutoGluon's eval metric for a competition metric, and whether the target is fitted as
/// log1p (RMSLE is RMSE on log1p, which AutoGluon lacks).
pub fn eval_metric(metric: &str, task: TaskType) -> Option<(&'static str, bool)> {
    let multiclass = task == TaskType::Multiclass;
    Some(match metric {
        "r2" => ("r2", false),
        "rmse" | "rmse_multi" => ("root_mean_squared_error", false),
        "rmsle" | "rmsle_multi" => ("root_mean_squared_error", true),
        "mse" => ("mean_squared_error", false),
        // Weighted MAE: MAE, fitted and evaluated with the competition's weight column.
        "mae" | "wmae" => ("mean_absolute_error", false),
        "log_loss" => ("log_loss", false),
        "roc_auc" if multiclass => ("roc_auc_ovr_macro", false),
        "roc_auc" => ("roc_auc", false),
        "roc_auc_ovr" => ("roc_auc_ovr_macro", false),
        "roc_auc_ovo" => ("roc_auc_ovo_macro", false),
        "accuracy" => ("accuracy", false),
        "balanced_accuracy" => ("balanced_accuracy", false),
        "f1" => ("f1", false),
        "f1_macro" => ("f1_macro", false),
        "f1_micro" | "fbeta_micro" => ("f1_micro", false),
        "f1_weighted" => ("f1_weighted", false),
        "precision_macro" => ("precision_macro", false),
        "recall_macro" => ("recall_macro", false),
        "mcc" => ("mcc", false),
        "qwk" => ("quadratic_kappa", false),
        // map@k ranks classes by probability: the probabilities are fitted by log loss.
        m if m.starts_with("map@") => ("log_loss", false),
        _ => return None,
    })
}

fn problem_type(task: TaskType) -> Option<&'static str> {
    Some(match task {
        TaskType::Binary => "binary",
        TaskType::Multiclass => "multiclass",
        TaskType::Regression | TaskType::MultiTargetRegression => "regression",
        TaskType::Multilabel => return None,
    })
}

/// Renders `model`'s template for competition `c` and sample `seed`.
pub fn render(model: &Model, c: &Competition, seed: u32) -> Result<Rendered, TemplateError> {
    let p = model.template_params()?;
    let m = &c.manifest;
    let (metric, log_target) = eval_metric(&m.metric.name, m.task).ok_or_else(|| TemplateError::Metric {
        competition: m.id.clone(),
        metric: m.metric.name.clone(),
    })?;
    let problem = problem_type(m.task).ok_or_else(|| TemplateError::Task {
        competition: m.id.clone(),
        task: crate::events::serde_name(&m.task),
    })?;
    let spec = Spec::of(m);
    let fallback = Fallback::of(m.domain);
    let hyperparameters: serde_json::Map<String, serde_json::Value> = p
        .families
        .iter()
        .map(|f| {
            let key = FAMILY_SEEDS.iter().find(|(k, _)| k == f).map_or("", |(_, s)| *s);
            let mut args = serde_json::Map::new();
            if !key.is_empty() {
                args.insert(key.into(), seed.into());
            }
            (f.clone(), serde_json::Value::Object(args))
        })
        .collect();
    let context = serde_json::json!({
        "template": model.template,
        "competition": m.id,
        "metric": m.metric.name,
        "id": spec.id,
        "targets": spec.targets,
        "weight": m.columns.weight,
        "problem_type": problem,
        "eval_metric": metric,
        "log_target": log_target,
        "kind": spec.kind,
        "k": spec.k,
        "seed": seed,
        "presets": p.presets,
        "time_limit": p.time_limit,
        "num_cpus": p.num_cpus,
        "memory_limit_gb": p.memory_limit_gb,
        "families": p.families.join(", "),
        "hyperparameters": hyperparameters,
        "fallback": fallback,
        "fallback_doc": fallback.doc(&p),
        "text_min_mean_chars": p.text_min_mean_chars,
        "text_max_features": p.text_max_features,
        "text_components": p.text_components,
    });
    let code = environment()
        .render_str(AUTOGLUON, Value::from_serialize(&context))
        .map_err(|source| TemplateError::Render {
            template: model.template.clone(),
            competition: m.id.clone(),
            source,
        })?;
    let context = serde_json::to_vec(&context).expect("a JSON value serializes");
    Ok(Rendered {
        code,
        context,
        fallback,
    })
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_keep_trailing_newline(true);
    env.add_filter("py", |v: Value| -> Result<String, minijinja::Error> {
        let json = serde_json::to_value(&v)
            .map_err(|e| minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string()))?;
        Ok(py_literal(&json))
    });
    env
}

/// A JSON value as a Python literal: JSON's strings, numbers, lists and objects are
/// Python's too, and `true`/`false`/`null` become `True`/`False`/`None`.
pub fn py_literal(v: &serde_json::Value) -> String {
    use serde_json::Value as J;
    match v {
        J::Null => "None".into(),
        J::Bool(b) => if *b { "True" } else { "False" }.into(),
        J::Number(_) | J::String(_) => v.to_string(),
        J::Array(items) => {
            let inner: Vec<String> = items.iter().map(py_literal).collect();
            format!("[{}]", inner.join(", "))
        }
        J::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", J::String(k.clone()), py_literal(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::competition::Benchmark;
    use crate::events::Provider;
    use crate::manifest::models::Models;

    fn bench() -> Benchmark {
        Benchmark::load(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    fn autogluon() -> Model {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/models.toml");
        let m = Models::load(&path).unwrap().get("autogluon").unwrap().clone();
        assert_eq!(m.provider, Provider::Template);
        m
    }

    #[test]
    fn python_literals_keep_strings_exact() {
        let v = serde_json::json!({"a\"b": [true, false, null, 1.5, "x\ny\u{e9}'"]});
        assert_eq!(
            py_literal(&v),
            r#"{"a\"b": [True, False, None, 1.5, "x\ny\u00e9'"]}"#.replace("\\u00e9", "é")
        );
    }

    #[test]
    fn every_bundled_competition_renders_valid_modular_code() {
        let bench = bench();
        let model = autogluon();
        for c in &bench.competitions {
            let r = render(&model, c, 3).unwrap();
            let findings = crate::check::check(&r.code, crate::events::Format::Modular);
            assert!(findings.is_empty(), "{}: {findings:?}", c.id());
            assert!(r.code.contains("SEED = 3\n"), "{}", c.id());
            assert!(
                r.code.contains(
                    "return {\"CAT\": {\"random_seed\": 3}, \"GBM\": {\"seed\": 3}, \"XGB\": {\"seed\": 3}}"
                ),
                "{}",
                c.id()
            );
            let again = render(&model, c, 3).unwrap();
            assert_eq!(again.code, r.code, "rendering is deterministic");
            let expected = match c.manifest.domain {
                Domain::Tabular => Fallback::None,
                Domain::Text => Fallback::Text,
                Domain::Image => Fallback::Pixels,
            };
            assert_eq!(r.fallback, expected);
        }
    }

    #[test]
    fn rmsle_is_fitted_on_log1p_and_unknown_metrics_are_named() {
        assert_eq!(
            eval_metric("rmsle", TaskType::Regression),
            Some(("root_mean_squared_error", true))
        );
        assert_eq!(
            eval_metric("map@3", TaskType::Multiclass),
            Some(("log_loss", false))
        );
        assert_eq!(eval_metric("f1_samples", TaskType::Multilabel), None);
    }

    #[test]
    fn bad_params_name_the_model_and_the_field() {
        let mut model = autogluon();
        model.params = Some(toml::from_str("familes = [\"GBM\"]").unwrap());
        let e = model.template_params().unwrap_err().to_string();
        assert!(
            e.starts_with("model `autogluon`: params: unknown field `familes`"),
            "{e}"
        );
        model.params = Some(toml::from_str("families = [\"NN_TORCH\"]").unwrap());
        let e = model.template_params().unwrap_err().to_string();
        assert!(e.contains("family `NN_TORCH` is not a CPU family"), "{e}");
        model.template = "h2o".into();
        let e = model.template_params().unwrap_err().to_string();
        assert_eq!(e, "model `autogluon`: unknown template `h2o` (known: autogluon)");
    }
}
