//! `manifests/models.toml`: the models a run can generate code with.
//!
//! On-disk format (TOML, unknown keys rejected): one `[[model]]` table per model with
//! `name` (how runs and tables call it), `provider` (`openai` for any OpenAI-compatible
//! chat API — OpenAI, vLLM, Ollama, llama.cpp server, OpenRouter —, `anthropic`,
//! `reference` for a competition's reference solution, `replay` for responses recorded in
//! another store), `endpoint` (base URL; none for `reference`/`replay`), `model` (the
//! provider's model id), `api_key_env` (the environment variable holding the key; the key
//! itself never appears in a manifest), prices in US dollars per million input and
//! output tokens, for `replay` the `store` to replay (with `model` naming the model whose
//! responses to take), for `local` (an embedded llama.cpp model) `model` = a GGUF path or
//! `demo`, for `template` (a fixed solution rendered from `assets/generate/<template>.py.j2`,
//! the algorithmic baseline) `template` and a `[model.params]` table, and optionally
//! `max_tokens` per response, `max_response_bytes` (HTTP providers: the most bytes of a
//! response body read; default 8 MiB, past it the answer is recorded as too large, with no
//! code), and `tool_protocol` — how the react agent offers its tools:
//! `openai` (OpenAI tool calling, the default of `openai` models) or `text` (Thought /
//! Action / Action Input parsed from the reply, the default of the others), and the
//! provider's request limits for the model: `max_in_flight` (requests at once),
//! `requests_per_minute`, `tokens_per_minute` (defaults per provider kind, and how every
//! stage of a run asking the model shares them: `crate::providers::budget`).
//! Invariants: names are unique; HTTP providers have an http(s) endpoint and
//! a model id; prices are finite and not negative; request limits are at least 1.

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ManifestError;
use crate::events::Provider;

/// How the react agent offers its tools to a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolProtocol {
    /// OpenAI-compatible tool calling (`tools` in the request, `tool_calls` in the answer).
    Openai,
    /// A text protocol for endpoints without tool support: Thought / Action / Action Input
    /// in the reply, the observation sent back as a user message.
    Text,
    /// Anthropic tool use (`tools` with `input_schema` in the request, `tool_use` blocks in
    /// the answer, `tool_result` blocks back): `anthropic` models only.
    Anthropic,
}

/// One model.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    pub name: String,
    pub provider: Provider,
    #[serde(default)]
    pub endpoint: String,
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub api_key_env: String,
    #[serde(default)]
    pub usd_per_mtok_input: f64,
    #[serde(default)]
    pub usd_per_mtok_output: f64,
    /// `replay` only: the store whose generate events answer (its model `model`).
    #[serde(default)]
    pub store: String,
    /// The most tokens one response may have (default: the stage's, 4096).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// HTTP providers: the most bytes of a response body read (default
    /// [`crate::providers::http::MAX_RESPONSE_BYTES`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_response_bytes: Option<u64>,
    /// `template` only: which template (`autogluon`).
    #[serde(default)]
    pub template: String,
    /// `template` only: the template's settings (checked by the template's own rules).
    #[serde(default)]
    pub params: Option<toml::Table>,
    /// How the react agent offers its tools (default: [`Model::tool_protocol`]).
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "tool_protocol")]
    pub tool_protocol_override: Option<ToolProtocol>,
    /// Requests in flight at once (default: the provider kind's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<usize>,
    /// Requests started per minute (default: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_minute: Option<u32>,
    /// Tokens (input and output) per minute (default: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_minute: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    model: Vec<Model>,
}

impl Model {
    /// How the react agent offers its tools: the manifest's `tool_protocol`, else OpenAI
    /// tool calling for `openai` models, Anthropic tool use for `anthropic` models and the
    /// text protocol for the others (the embedded model has no tool template).
    pub fn tool_protocol(&self) -> ToolProtocol {
        self.tool_protocol_override.unwrap_or(match self.provider {
            Provider::Openai => ToolProtocol::Openai,
            Provider::Anthropic => ToolProtocol::Anthropic,
            _ => ToolProtocol::Text,
        })
    }

    /// The params of a `template` model, checked (`manifest::templates`).
    pub fn template_params(
        &self,
    ) -> Result<super::templates::AutogluonParams, super::templates::ParamsError> {
        super::templates::params(&self.name, &self.template, self.params.as_ref())
    }
}

/// The models of `models.toml`, in file order.
#[derive(Clone, Debug)]
pub struct Models {
    pub list: Vec<Model>,
}

impl Models {
    /// Loads and checks `models.toml`.
    pub fn load(path: &Path) -> Result<Self, ManifestError> {
        let file: File = super::load(path)?;
        check(path, &file.model)?;
        Ok(Self { list: file.model })
    }

    /// The model called `name`.
    pub fn get(&self, name: &str) -> Option<&Model> {
        self.list.iter().find(|m| m.name == name)
    }
}

/// Why `m`'s tool protocol cannot reach its provider: a tool-calling protocol is spoken by
/// its own API's client only.
fn protocol_mismatch(m: &Model) -> Option<String> {
    let (needs, name) = match m.tool_protocol_override? {
        ToolProtocol::Openai => (Provider::Openai, "openai"),
        ToolProtocol::Anthropic => (Provider::Anthropic, "anthropic"),
        ToolProtocol::Text => return None,
    };
    (m.provider != needs).then(|| format!("`{name}` tool calling needs provider = \"{name}\""))
}

fn check(path: &Path, models: &[Model]) -> Result<(), ManifestError> {
    let mut names = HashSet::new();
    for (i, m) in models.iter().enumerate() {
        let bad = |field: &str, message: String| ManifestError::Invalid {
            path: path.to_path_buf(),
            field: format!("model[{i}].{field}"),
            message,
        };
        if m.name.trim().is_empty() {
            return Err(bad("name", "is empty".into()));
        }
        if !names.insert(m.name.as_str()) {
            return Err(bad("name", format!("`{}` is named twice", m.name)));
        }
        if m.provider.is_http() {
            if !(m.endpoint.starts_with("http://") || m.endpoint.starts_with("https://")) {
                return Err(bad("endpoint", format!("`{}` is not an http(s) URL", m.endpoint)));
            }
            if m.model.trim().is_empty() {
                return Err(bad(
                    "model",
                    "an HTTP provider needs the provider's model id".into(),
                ));
            }
        }
        match m.max_response_bytes {
            Some(0) => return Err(bad("max_response_bytes", "must be at least 1".into())),
            Some(_) if !m.provider.is_http() => {
                return Err(bad(
                    "max_response_bytes",
                    "only an HTTP provider (openai, anthropic) reads a response body".into(),
                ));
            }
            _ => {}
        }
        for (field, zero) in [
            ("max_in_flight", m.max_in_flight == Some(0)),
            ("requests_per_minute", m.requests_per_minute == Some(0)),
            ("tokens_per_minute", m.tokens_per_minute == Some(0)),
        ] {
            if zero {
                return Err(bad(field, "must be at least 1".into()));
            }
        }
        if let Some(message) = protocol_mismatch(m) {
            return Err(bad("tool_protocol", message));
        }
        if m.provider == Provider::Template {
            m.template_params().map_err(|e| bad("template", e.to_string()))?;
        }
        if m.provider == Provider::Replay && (m.store.is_empty() || m.model.is_empty()) {
            return Err(bad(
                "store",
                "a replay model names the store to replay (`store`) and the model in it (`model`)".into(),
            ));
        }
        for (field, price) in [
            ("usd_per_mtok_input", m.usd_per_mtok_input),
            ("usd_per_mtok_output", m.usd_per_mtok_output),
        ] {
            if !(price.is_finite() && price >= 0.0) {
                return Err(bad(field, format!("{price} is not a price")));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_models_manifest_loads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests/models.toml");
        let models = Models::load(&path).unwrap();
        assert_eq!(models.get("reference").unwrap().provider, Provider::Reference);
    }

    #[test]
    fn a_request_limit_of_zero_is_refused_naming_its_field() {
        let path = Path::new("models.toml");
        for field in ["max_in_flight", "requests_per_minute", "tokens_per_minute"] {
            let text = format!(
                "[[model]]\nname = \"m\"\nprovider = \"openai\"\nendpoint = \"http://h\"\nmodel = \"x\"\n{field} = 0\n"
            );
            let file: File = crate::manifest::parse(path, &text).unwrap();
            let err = check(path, &file.model).unwrap_err().to_string();
            assert_eq!(err, format!("models.toml: model[0].{field}: must be at least 1"));
        }
    }

    #[test]
    fn tool_calling_is_refused_on_another_providers_model() {
        let path = Path::new("models.toml");
        let model = |provider: &str, protocol: &str| {
            format!(
                "[[model]]\nname = \"m\"\nprovider = \"{provider}\"\nendpoint = \"http://h\"\nmodel = \"x\"\ntool_protocol = \"{protocol}\"\n"
            )
        };
        let checked = |text: &str| {
            let file: File = crate::manifest::parse(path, text).unwrap();
            check(path, &file.model).map_err(|e| e.to_string())
        };
        assert_eq!(
            checked(&model("openai", "anthropic")).unwrap_err(),
            "models.toml: model[0].tool_protocol: `anthropic` tool calling needs provider = \"anthropic\""
        );
        assert!(checked(&model("anthropic", "openai")).is_err());
        for (provider, protocol) in [
            ("anthropic", "anthropic"),
            ("anthropic", "text"),
            ("openai", "text"),
        ] {
            assert_eq!(
                checked(&model(provider, protocol)),
                Ok(()),
                "{provider} {protocol}"
            );
        }
        let default =
            "[[model]]\nname = \"m\"\nprovider = \"anthropic\"\nendpoint = \"http://h\"\nmodel = \"x\"\n";
        let file: File = crate::manifest::parse(path, default).unwrap();
        assert_eq!(file.model[0].tool_protocol(), ToolProtocol::Anthropic);
    }

    #[test]
    fn bad_models_name_the_field() {
        let path = Path::new("models.toml");
        let parse = |text: &str| -> String {
            let file: File = crate::manifest::parse(path, text).unwrap();
            check(path, &file.model).unwrap_err().to_string()
        };
        let no_url = "[[model]]\nname = \"m\"\nprovider = \"openai\"\nmodel = \"x\"\n";
        assert_eq!(
            parse(no_url),
            "models.toml: model[0].endpoint: `` is not an http(s) URL"
        );
        let twice = "[[model]]\nname = \"r\"\nprovider = \"reference\"\n[[model]]\nname = \"r\"\nprovider = \"replay\"\n";
        assert!(parse(twice).contains("model[1].name: `r` is named twice"));
        let zero = "[[model]]\nname = \"m\"\nprovider = \"openai\"\nendpoint = \"http://h\"\nmodel = \"x\"\nmax_response_bytes = 0\n";
        assert_eq!(
            parse(zero),
            "models.toml: model[0].max_response_bytes: must be at least 1"
        );
        let local =
            "[[model]]\nname = \"m\"\nprovider = \"local\"\nmodel = \"demo\"\nmax_response_bytes = 10\n";
        assert!(parse(local).contains("model[0].max_response_bytes: only an HTTP provider"));
    }
}
