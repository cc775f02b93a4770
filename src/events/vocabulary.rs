//! The closed sets every stage, log and reader shares: the submission [`Format`], how a
//! run ended ([`Outcome`]), who answers a model's requests ([`Provider`]).
//!
//! A leaf: it imports nothing of the crate, so the sandbox, the providers, the manifests
//! and the events all name these without depending on one another.
//!
//! On disk: each is written as its serde name in snake or lower case (`modular`,
//! `runtime_error`, `openai`), in events, manifests and the harness's `result.json` alike;
//! a name is never changed (event ids hash them).

use serde::{Deserialize, Serialize};

/// The name a unit-like enum has in the files (its serde name), e.g. `maximize`.
pub fn serde_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    SyntaxError,
    ImportError,
    MissingFunction,
    SignatureMismatch,
    RuntimeError,
    Timeout,
    OutOfMemory,
    BadPredictions,
    ConstraintViolation,
    SandboxError,
}

impl std::fmt::Display for Outcome {
    /// The name events and the harness use (`ok`, `runtime_error`, …).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&serde_name(self))
    }
}

impl Outcome {
    /// Parses the harness's `outcome` field.
    pub fn from_harness(name: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
    }
}

/// Which submission format the code follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// MODULAR_PREDICT: `train(data)`, `prepare_val(train_output, X_val)`,
    /// `predict(train_output, prepare_val_output)`.
    Modular,
    /// MONO_PREDICT: `train_and_predict(data, X_val)`.
    Mono,
}

/// A format name that is neither `modular` nor `mono`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown submission format {0:?}: expected \"modular\" or \"mono\"")]
pub struct ParseFormatError(pub String);

impl std::str::FromStr for Format {
    type Err = ParseFormatError;

    /// `modular`, `mono`, or the original release's `MODULAR_PREDICT`, `MONO_PREDICT`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "modular" | "modular_predict" => Ok(Format::Modular),
            "mono" | "mono_predict" => Ok(Format::Mono),
            _ => Err(ParseFormatError(s.to_string())),
        }
    }
}

impl Format {
    pub fn harness_mode(self) -> &'static str {
        match self {
            Self::Modular => "modular",
            Self::Mono => "mono",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.harness_mode())
    }
}

/// Who answers a model's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Openai,
    Anthropic,
    Reference,
    Replay,
    /// An embedded llama.cpp model (`model`: a GGUF path, or `demo` for SmolLM2-135M).
    Local,
    /// A fixed solution rendered from a template of `assets/generate/` (`template`), such
    /// as the AutoGluon baseline; `params` are the template's settings.
    Template,
}

impl Provider {
    /// Whether requests go over HTTP to an API (`openai`, `anthropic`).
    pub fn is_http(self) -> bool {
        matches!(self, Self::Openai | Self::Anthropic)
    }

    /// Whether a model of this provider is asked anything (`reference` and `template`
    /// write their code without a request).
    pub fn answers_requests(self) -> bool {
        !matches!(self, Self::Reference | Self::Template)
    }
}
