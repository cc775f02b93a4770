//! The settings of `template` models (`[model.params]` in `manifests/models.toml`), checked
//! when the manifest loads, so that a bad parameter is a manifest error naming the model and
//! the field, and the renderer (`providers::template`) receives only valid ones.

use serde::{Deserialize, Serialize};

/// The templates a `template` model may name.
pub const TEMPLATES: [&str; 1] = ["autogluon"];

/// Why a template model's settings are not valid.
#[derive(Debug, thiserror::Error)]
pub enum ParamsError {
    #[error("model `{model}`: unknown template `{template}` (known: {known})")]
    Unknown {
        model: String,
        template: String,
        known: String,
    },
    #[error("model `{model}`: params: {message}")]
    Params { model: String, message: String },
}

/// The `params` of an `autogluon` model (all optional; unknown keys are rejected).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AutogluonParams {
    /// AutoGluon's `presets` (`medium_quality`: no bagging, no stacking).
    pub presets: String,
    /// Seconds for `fit` (none: every model trains to completion). A time limit makes the
    /// fit depend on the machine's speed, so two runs may differ.
    pub time_limit: Option<f64>,
    /// Model families (AutoGluon's keys), each given the sample's seed.
    pub families: Vec<String>,
    /// Threads AutoGluon uses, fixed so that results do not depend on the core count.
    pub num_cpus: u32,
    /// The memory AutoGluon plans with, fixed so that no family is skipped depending on
    /// how much the machine has free.
    pub memory_limit_gb: f64,
    /// Text fallback: a column is text when its mean length is at least this many chars.
    pub text_min_mean_chars: u32,
    /// Text fallback: TF-IDF vocabulary size and SVD components per text column.
    pub text_max_features: u32,
    pub text_components: u32,
}

impl Default for AutogluonParams {
    fn default() -> Self {
        Self {
            presets: "medium_quality".into(),
            time_limit: None,
            families: ["GBM", "CAT", "XGB"].map(String::from).to_vec(),
            num_cpus: 2,
            memory_limit_gb: 4.0,
            text_min_mean_chars: 30,
            text_max_features: 50_000,
            text_components: 64,
        }
    }
}

/// The seed parameter of each CPU family AutoGluon knows.
pub const FAMILY_SEEDS: [(&str, &str); 6] = [
    ("GBM", "seed"),
    ("CAT", "random_seed"),
    ("XGB", "seed"),
    ("RF", "random_state"),
    ("XT", "random_state"),
    ("KNN", ""),
];

/// The params of the template model `model` (its `template` and `params`), checked.
pub fn params(
    model: &str,
    template: &str,
    table: Option<&toml::Table>,
) -> Result<AutogluonParams, ParamsError> {
    if !TEMPLATES.contains(&template) {
        return Err(ParamsError::Unknown {
            model: model.to_string(),
            template: template.to_string(),
            known: TEMPLATES.join(", "),
        });
    }
    let bad = |message: String| ParamsError::Params {
        model: model.to_string(),
        message,
    };
    let p: AutogluonParams = match table {
        Some(table) => table
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| bad(e.message().to_string()))?,
        None => AutogluonParams::default(),
    };
    if let Some(f) = p
        .families
        .iter()
        .find(|f| !FAMILY_SEEDS.iter().any(|(k, _)| k == f))
    {
        let known: Vec<_> = FAMILY_SEEDS.iter().map(|(k, _)| *k).collect();
        return Err(bad(format!(
            "family `{f}` is not a CPU family ({})",
            known.join(", ")
        )));
    }
    if p.families.is_empty() {
        return Err(bad("families is empty".into()));
    }
    if p.time_limit.is_some_and(|t| !(t.is_finite() && t > 0.0)) || p.num_cpus == 0 {
        return Err(bad("time_limit and num_cpus must be positive".into()));
    }
    Ok(p)
}
