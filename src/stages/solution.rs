//! Running a stored solution: the service execute and the aide agent's validation runs
//! share, so that neither stage imports the other.
//!
//! A [`Runner`] is the sandbox backend, the managed Python and the limits. [`Runner::run`]
//! materializes the code object and the harness in a scratch folder, runs the job in the
//! backend on a public folder (the competition's, or a validation split of its training
//! rows) and stores the predictions as an object; a run the sandbox could not start is
//! retried once, then an error (never a result). [`Runner::identity`] is what makes two
//! runs of the same code on the same data differ, for unit keys: a change to the backend,
//! its image, the harness, the requirements or the limits runs the code anew.

use std::path::PathBuf;
use std::sync::Arc;

use crate::competition::Competition;
use crate::competition::spec::Spec;
use crate::events::{Format, Outcome};
use crate::sandbox::{Backend, GpuSet, Gpus, Job, Limits, ModelCache, Network, Proxy, assets};
use crate::store::{Hash, Store};

/// How stored code runs: the sandbox backend, the managed Python and the limits. The execute
/// stage and the aide agent's validation runs share it.
#[derive(Clone)]
pub struct Runner {
    pub backend: Arc<dyn Backend>,
    pub python: PathBuf,
    pub limits: Limits,
    /// The runs' network, and its proxy when it is `proxy` (started by the pipeline).
    pub network: Network,
    pub proxy: Option<Arc<Proxy>>,
    /// The pretrained weights runs see (`--model-cache`), listed.
    pub model_cache: Option<Arc<ModelCache>>,
    /// The GPUs asked for and those found for them (`--gpus`).
    pub gpus_asked: Option<Gpus>,
    pub gpus: Option<Arc<GpuSet>>,
}

/// One run of stored code.
pub struct Ran {
    pub run: crate::sandbox::Run,
    /// The `sandbox::Outcome` name.
    pub outcome: crate::events::Outcome,
    /// The predictions, stored as an object (when the run wrote them).
    pub predictions: Option<Hash>,
}

impl Runner {
    /// What makes runs of the same code on the same data differ, for unit keys: the backend,
    /// its image, the harness's and the requirements' blake3, the limits and, unless it is
    /// `none` (so that runs made before networks existed keep their keys), the network and
    /// the relay's blake3, the model cache's listing and the GPUs asked for, when there are.
    pub fn identity(&self) -> serde_json::Map<String, serde_json::Value> {
        let v = serde_json::json!({
            "backend": self.backend.name(), "image": self.backend.image(),
            "harness": assets::hash(assets::HARNESS), "requirements": assets::hash(assets::REQUIREMENTS),
            "limits": self.limits,
        });
        let serde_json::Value::Object(mut map) = v else {
            unreachable!("a JSON object")
        };
        if self.network != Network::None {
            map.insert("network".into(), serde_json::json!(self.network));
            map.insert("relay".into(), assets::hash(assets::RELAY).into());
        }
        if let Some(cache) = &self.model_cache {
            map.insert("model_cache".into(), cache.blake3.to_hex().into());
        }
        if let Some(gpus) = &self.gpus_asked {
            map.insert("gpus".into(), serde_json::json!(gpus));
        }
        map
    }

    /// Runs `code` (an object of `store`) for `c` in `format`, with `public_dir` as its public
    /// folder (the competition's, or a validation split), and stores its predictions.
    ///
    /// A run the sandbox could not start (`sandbox_error`: the harness never reached the
    /// code) is tried once more, then is an `Err`: a fault of the environment, which the
    /// caller must not record as the code's result.
    pub async fn run(
        &self,
        store: &Store,
        c: &Competition,
        format: Format,
        code: &Hash,
        public_dir: PathBuf,
    ) -> Result<Ran, String> {
        let first = self.run_once(store, c, format, code, public_dir.clone()).await?;
        if first.outcome != Outcome::SandboxError {
            return Ok(first);
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let second = self.run_once(store, c, format, code, public_dir).await?;
        if second.outcome != Outcome::SandboxError {
            return Ok(second);
        }
        Err(format!(
            "the sandbox could not run the code (twice): {}",
            second.run.detail.as_deref().unwrap_or("no detail")
        ))
    }

    async fn run_once(
        &self,
        store: &Store,
        c: &Competition,
        format: Format,
        code: &Hash,
        public_dir: PathBuf,
    ) -> Result<Ran, String> {
        let bytes = store.objects().get(code).map_err(|e| crate::error::chain(&e))?;
        let scratch = crate::sandbox::scratch_dir().map_err(|e| crate::error::chain(&e))?;
        let code_path = scratch.path().join("code.py");
        std::fs::write(&code_path, &bytes).map_err(|e| e.to_string())?;
        let out_dir = scratch.path().join("out");
        std::fs::create_dir(&out_dir).map_err(|e| e.to_string())?;
        let job = Job {
            python: self.python.clone(),
            harness: assets::materialize("harness.py", assets::HARNESS)
                .map_err(|e| crate::error::chain(&e))?,
            code: code_path,
            format,
            public_dir,
            spec: Spec::of(&c.manifest),
            limits: self.limits.clone(),
            proxy: self.proxy.clone(),
            model_cache: self.model_cache.clone(),
            gpus: self.gpus.clone(),
        };
        let backend = self.backend.clone();
        let run = tokio::task::spawn_blocking(move || backend.run(&job, &out_dir))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| crate::error::chain(&e))?;
        let predictions = match &run.predictions {
            Some(p) => {
                let bytes = std::fs::read(p).map_err(|e| e.to_string())?;
                Some(store.objects().put(&bytes).map_err(|e| crate::error::chain(&e))?)
            }
            None => None,
        };
        Ok(Ran {
            outcome: run.outcome,
            run,
            predictions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nowhere;

    impl Backend for Nowhere {
        fn name(&self) -> &'static str {
            "local"
        }

        fn run(
            &self,
            _: &Job,
            _: &std::path::Path,
        ) -> Result<crate::sandbox::Run, crate::sandbox::SandboxError> {
            unreachable!("never run")
        }
    }

    fn runner(network: Network, gpus: Option<Gpus>) -> Runner {
        Runner {
            backend: Arc::new(Nowhere),
            python: "/nowhere/python".into(),
            limits: Limits::default(),
            network,
            proxy: None,
            model_cache: None,
            gpus_asked: gpus,
            gpus: None,
        }
    }

    /// A run without a network, cache or GPUs keeps the identity (and so the execute unit
    /// keys) it had before they existed; each of them changes it.
    #[test]
    fn only_what_was_asked_for_joins_the_identity() {
        let plain = runner(Network::None, None).identity();
        let keys: Vec<&str> = plain.keys().map(String::as_str).collect();
        assert_eq!(keys, ["backend", "harness", "image", "limits", "requirements"]);
        let proxy = runner(Network::Proxy(crate::sandbox::Allowlist::default()), None).identity();
        assert!(proxy.contains_key("network") && proxy.contains_key("relay"));
        let gpu = runner(Network::None, Some(Gpus::Count(1))).identity();
        assert_eq!(gpu["gpus"], serde_json::json!({"count": 1}));
    }
}
