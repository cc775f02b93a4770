//! `ml2b import`: turn another layout's competitions into manifests and data folders.
//!
//! Readers ([`ml2b`], [`mle_bench`]) produce [`Draft`]s: a manifest, task texts and the
//! files to copy. [`install`] then makes each draft real without ever leaving half of one
//! visible: everything is staged under `<root>/.import-<pid>/`, the staged competition is
//! loaded and prepared there (checksums recorded), and only when every draft succeeded are
//! the data folders, then the manifests, renamed into place. A competition becomes visible
//! (to [`super::Benchmark::load`]) when its manifest appears, after its data is complete. An
//! id that already exists is refused, never overwritten. The staging folder is removed
//! whatever happens, so a preparing error names the original of a copied file (the
//! release's training file), never its staged copy.

mod domain;
pub mod ml2b;
pub mod mle_bench;
pub mod mle_config;

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Competition, prepare};
use crate::manifest::competition::TaskType;
use crate::manifest::{CompetitionManifest, ManifestError, TaskText};
use crate::metrics::grading::{InputKind, Metric};

/// Why an import failed. Nothing was installed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{id}` already exists at {}; remove it first (import never overwrites)", path.display())]
    Exists { id: String, path: PathBuf },
    #[error("{} of the competitions cannot be imported (nothing was imported):\n  {}", .0.len(), .0.join("\n  "))]
    Several(Vec<String>),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("preparing imported `{id}`")]
    Prepare {
        id: String,
        #[source]
        source: prepare::PrepareError,
    },
}

impl ImportError {
    pub(crate) fn invalid(path: &Path, message: impl Into<String>) -> Self {
        Self::Invalid {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

/// One competition ready to install.
#[derive(Clone, Debug)]
pub struct Draft {
    pub manifest: CompetitionManifest,
    /// Language code → task text.
    pub texts: Vec<(String, TaskText)>,
    /// (source path, destination relative to `data/<id>/`).
    pub copies: Vec<(PathBuf, String)>,
    /// (destination relative to `data/<id>/`, bytes): files the import writes itself (the
    /// graded columns of an answers file, labels made of one-hot columns).
    pub generated: Vec<(String, Vec<u8>)>,
}

/// What was installed.
#[derive(Clone, Debug, Serialize)]
pub struct Imported {
    pub id: String,
    pub languages: Vec<String>,
    pub metric: String,
    /// How its submissions are graded: `native` (one of ml2b's metrics) or `program`
    /// (MLE-bench's own grade.py in the sandbox).
    pub grading: &'static str,
    pub notes: Vec<String>,
}

/// Stages, prepares and installs `drafts` under `root` (see the module docs).
pub fn install(root: &Path, drafts: Vec<Draft>) -> Result<Vec<Imported>, ImportError> {
    for d in &drafts {
        for path in [
            manifest_path(root, &d.manifest.id),
            root.join("data").join(&d.manifest.id),
        ] {
            if path.exists() {
                return Err(ImportError::Exists {
                    id: d.manifest.id.clone(),
                    path,
                });
            }
        }
    }
    let staging = root.join(format!(".import-{}", std::process::id()));
    let result = stage_all(&staging, &drafts).and_then(|()| publish(root, &staging, &drafts));
    let _ = std::fs::remove_dir_all(&staging);
    result?;
    Ok(drafts
        .iter()
        .map(|d| Imported {
            id: d.manifest.id.clone(),
            languages: d.texts.iter().map(|(c, _)| c.clone()).collect(),
            metric: d.manifest.metric.name.clone(),
            grading: if d.manifest.is_program_graded() {
                "program"
            } else {
                "native"
            },
            notes: d.manifest.import_notes.clone(),
        })
        .collect())
}

fn manifest_path(root: &Path, id: &str) -> PathBuf {
    root.join("manifests/competitions").join(format!("{id}.toml"))
}

fn write_err(path: &Path) -> impl FnOnce(std::io::Error) -> ImportError + '_ {
    move |source| ImportError::Write {
        path: path.to_path_buf(),
        source,
    }
}

fn stage_all(staging: &Path, drafts: &[Draft]) -> Result<(), ImportError> {
    for d in drafts {
        stage(staging, d)?;
    }
    Ok(())
}

fn stage(staging: &Path, d: &Draft) -> Result<(), ImportError> {
    let id = &d.manifest.id;
    let dir = staging.join("data").join(id);
    for (from, to) in &d.copies {
        let dest = dir.join(to);
        std::fs::create_dir_all(dest.parent().expect("has a parent")).map_err(write_err(&dest))?;
        std::fs::copy(from, &dest).map_err(|source| ImportError::Read {
            path: from.clone(),
            source,
        })?;
    }
    for (to, bytes) in &d.generated {
        let dest = dir.join(to);
        prepare::write_atomic(&dest, bytes).map_err(|e| ImportError::Prepare {
            id: id.clone(),
            source: e,
        })?;
    }
    for (code, text) in &d.texts {
        let path = dir.join("tasks").join(format!("{code}.toml"));
        text.check(&path)?;
        prepare::write_atomic(&path, text.to_toml().as_bytes()).map_err(|e| ImportError::Prepare {
            id: id.clone(),
            source: e,
        })?;
    }
    let manifest_path = manifest_path(staging, id);
    let text = toml::to_string(&d.manifest).expect("a manifest serializes");
    let header = format!(
        "# Imported by ml2b {}; see import_notes for every change.\n",
        env!("CARGO_PKG_VERSION")
    );
    prepare::write_atomic(&manifest_path, format!("{header}{text}").as_bytes()).map_err(|e| {
        ImportError::Prepare {
            id: id.clone(),
            source: e,
        }
    })?;
    let competition = Competition {
        manifest: CompetitionManifest::load(&manifest_path)?,
        manifest_path,
        dir,
    };
    // The staging folder is removed on failure: name the copied files' originals.
    let prep = |source: prepare::PrepareError| ImportError::Prepare {
        id: id.clone(),
        source: source.relocated(|path| {
            d.copies
                .iter()
                .find(|(_, to)| competition.dir.join(to) == path)
                .map(|(from, _)| from.clone())
        }),
    };
    let built = prepare::build(&competition).map_err(prep)?;
    prepare::write(&competition, &built, true).map_err(prep)?;
    Ok(())
}

fn publish(root: &Path, staging: &Path, drafts: &[Draft]) -> Result<(), ImportError> {
    let data = root.join("data");
    let manifests = root.join("manifests/competitions");
    for dir in [&data, &manifests] {
        std::fs::create_dir_all(dir).map_err(write_err(dir))?;
    }
    for d in drafts {
        let to = data.join(&d.manifest.id);
        std::fs::rename(staging.join("data").join(&d.manifest.id), &to).map_err(write_err(&to))?;
    }
    for d in drafts {
        let to = manifest_path(root, &d.manifest.id);
        std::fs::rename(manifest_path(staging, &d.manifest.id), &to).map_err(write_err(&to))?;
    }
    Ok(())
}

/// Reads a CSV's header row.
pub(crate) fn csv_header(path: &Path) -> Result<Vec<String>, ImportError> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| ImportError::invalid(path, e.to_string()))?;
    let header = reader
        .headers()
        .map_err(|e| ImportError::invalid(path, e.to_string()))?;
    Ok(header.iter().map(str::to_string).collect())
}

/// The task type a metric implies; a classification task is binary or multiclass by the
/// number of distinct labels `distinct` counts (called only for a classification metric).
pub(crate) fn task_type_with<E>(
    metric: &Metric,
    distinct: impl FnOnce() -> Result<usize, E>,
) -> Result<TaskType, E> {
    Ok(match metric.input_kind() {
        InputKind::Values | InputKind::WeightedValues => TaskType::Regression,
        InputKind::MultiValues => TaskType::MultiTargetRegression,
        InputKind::LabelLists if !matches!(metric, Metric::Map(_)) => TaskType::Multilabel,
        _ => match distinct()? {
            2 => TaskType::Binary,
            _ => TaskType::Multiclass,
        },
    })
}
