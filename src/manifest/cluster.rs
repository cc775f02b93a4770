//! `manifests/cluster.toml` (optional): the benchmark's defaults for `--engine slurm`, so
//! that a lab writes its partition, account and time limit once instead of on every command.
//! Flags override the file: `--shards` and `--max-running` replace its values, and each
//! `--slurm-arg` is passed after its `sbatch_args` (sbatch takes the last of a repeated
//! option). Without the file, the defaults are 8 × `max_running` shards and 4 tasks at once.
//!
//! ```toml
//! [slurm]
//! max_running = 16                 # array tasks at once (sbatch --array=…%K)
//! shards = 128                     # shards of a plan (default 8 × max_running)
//! sbatch_args = ["--partition=cpu", "--account=ml2b", "--time=04:00:00"]
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ManifestError;

/// The file, under the benchmark root.
pub const FILE: &str = "manifests/cluster.toml";

/// Array tasks at once when neither the flag nor the file says.
pub const DEFAULT_MAX_RUNNING: u32 = 4;

/// The whole file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterManifest {
    #[serde(default)]
    pub slurm: SlurmDefaults,
}

/// `[slurm]`: the Slurm engine's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmDefaults {
    pub max_running: Option<u32>,
    pub shards: Option<u32>,
    #[serde(default)]
    pub sbatch_args: Vec<String>,
}

impl ClusterManifest {
    /// The cluster manifest of the benchmark at `root`; the empty one when it has none.
    pub fn load(root: &Path) -> Result<Self, ManifestError> {
        let path = root.join(FILE);
        let manifest: Self = super::load_optional(&path)?;
        manifest.check(&path)?;
        Ok(manifest)
    }

    fn check(&self, path: &Path) -> Result<(), ManifestError> {
        let invalid = |field: &str, message: &str| ManifestError::Invalid {
            path: PathBuf::from(path),
            field: format!("slurm.{field}"),
            message: message.into(),
        };
        for (field, value) in [
            ("max_running", self.slurm.max_running),
            ("shards", self.slurm.shards),
        ] {
            if value == Some(0) {
                return Err(invalid(field, "must be at least 1"));
            }
        }
        if self.slurm.sbatch_args.iter().any(|a| a.trim().is_empty()) {
            return Err(invalid("sbatch_args", "an empty argument"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: Option<&str>) -> Result<ClusterManifest, String> {
        let dir = tempfile::tempdir().unwrap();
        if let Some(text) = text {
            std::fs::create_dir_all(dir.path().join("manifests")).unwrap();
            std::fs::write(dir.path().join(FILE), text).unwrap();
        }
        ClusterManifest::load(dir.path()).map_err(|e| e.to_string())
    }

    #[test]
    fn the_file_is_optional_and_read_strictly() {
        assert_eq!(load(None).unwrap(), ClusterManifest::default());
        let read = load(Some(
            "[slurm]\nmax_running = 16\nsbatch_args = [\"--partition=cpu\", \"--time=04:00:00\"]\n",
        ))
        .unwrap();
        assert_eq!(read.slurm.max_running, Some(16));
        assert_eq!(read.slurm.shards, None);
        assert_eq!(read.slurm.sbatch_args, ["--partition=cpu", "--time=04:00:00"]);
        let typo = load(Some("[slurm]\nmax_runing = 16\n")).unwrap_err();
        assert!(
            typo.contains("cluster.toml:2") && typo.contains("max_runing"),
            "{typo}"
        );
        let zero = load(Some("[slurm]\nshards = 0\n")).unwrap_err();
        assert!(
            zero.ends_with("cluster.toml: slurm.shards: must be at least 1"),
            "{zero}"
        );
    }
}
