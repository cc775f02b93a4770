//! `manifests/sandbox.toml` (optional): defaults of every run's sandbox, which the flags
//! override. Today one key:
//!
//! ```toml
//! gpus = 1        # NVIDIA GPUs each run gets, or "all" (`--gpus`); absent: none
//! ```

use std::path::Path;

use serde::Deserialize;

use super::ManifestError;

/// The file, under the benchmark root.
pub const FILE: &str = "manifests/sandbox.toml";

/// The whole file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxManifest {
    pub gpus: Option<GpuCount>,
}

/// `gpus`: a number, or a word (only `all` is one).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum GpuCount {
    Number(u32),
    Word(String),
}

impl SandboxManifest {
    /// The sandbox manifest of the benchmark at `root`; the empty one when it has none.
    pub fn load(root: &Path) -> Result<Self, ManifestError> {
        super::load_optional(&root.join(FILE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_is_a_number_or_a_word() {
        let path = Path::new(FILE);
        let parse = |text: &str| super::super::parse::<SandboxManifest>(path, text);
        assert_eq!(parse("").unwrap().gpus, None);
        assert_eq!(parse("gpus = 2").unwrap().gpus, Some(GpuCount::Number(2)));
        assert_eq!(
            parse("gpus = \"all\"").unwrap().gpus,
            Some(GpuCount::Word("all".into()))
        );
        assert!(parse("gpu = 1").is_err());
    }
}
