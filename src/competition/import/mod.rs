//! `ml2b import`: turn another layout's competitions into manifests and data folders.
//!
//! Readers ([`ml2b`], [`mle_bench`]) produce a [`Found`]: [`Draft`]s (a manifest, task
//! texts, the files to copy, write or derive) and the competitions they refused, each with
//! its reason. [`install`] then makes each draft real without ever leaving half of one
//! visible: everything is staged under `<root>/.import-<pid>/`, each staged competition is
//! loaded and prepared there (checksums recorded), and only then published, one competition
//! at a time: its data folder renamed into place, then its manifest linked into place
//! (never over an existing one). A competition becomes visible (to
//! [`super::Benchmark::load`]) when its manifest appears, after its data is complete; a
//! manifest that cannot be published takes its data folder back out.
//!
//! A competition that cannot be imported is refused, never half-imported: a reader's
//! refusal, an id that already exists (import never overwrites), or a failure while
//! staging or preparing it. [`Policy::Partial`] publishes the others; [`Policy::Strict`]
//! publishes nothing when anything was refused (and takes back what it published if a
//! publication fails). The staging folder is removed whatever happens, so a preparing
//! error names the original of a copied file (the release's training file), never its
//! staged copy.

mod derive;
mod domain;
mod error;
pub mod ml2b;
pub mod mle_bench;
pub mod mle_config;
mod mle_layout;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use derive::{ComposedId, Derivation, Derived};
pub use error::ImportError;

use super::{Competition, prepare};
use crate::manifest::competition::TaskType;
use crate::manifest::{CompetitionManifest, ManifestError, TaskText};
use crate::metrics::grading::{InputKind, Metric};

/// One competition ready to install.
#[derive(Clone, Debug)]
pub struct Draft {
    pub manifest: CompetitionManifest,
    /// Language code → task text.
    pub texts: Vec<(String, TaskText)>,
    /// (source path, destination relative to `data/<id>/`).
    pub copies: Vec<(PathBuf, String)>,
    /// (destination relative to `data/<id>/`, bytes): files the import writes itself (the
    /// graded columns of an answers file).
    pub generated: Vec<(String, Vec<u8>)>,
    /// Public files made from others while staging (the harness's `train.csv` and
    /// `test.csv` of another layout); their checksums are recorded in `files.public` once
    /// written.
    pub derived: Vec<Derived>,
}

/// A competition a reader or [`install`] refused, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Refusal {
    pub id: String,
    pub reason: String,
}

impl Refusal {
    pub fn new(id: &str, reason: impl Into<String>) -> Self {
        Self {
            id: id.to_string(),
            reason: reason.into(),
        }
    }

    /// A refusal whose reason is `err` and its causes, joined by `: `.
    fn of(id: &str, err: &(dyn std::error::Error + 'static)) -> Self {
        let mut reason = err.to_string();
        let mut cause = err.source();
        while let Some(c) = cause {
            reason.push_str(": ");
            reason.push_str(&c.to_string());
            cause = c.source();
        }
        Self::new(id, reason)
    }
}

/// What a reader found: the drafts to install and the competitions it refused.
#[derive(Clone, Debug, Default)]
pub struct Found {
    pub drafts: Vec<Draft>,
    pub refused: Vec<Refusal>,
}

impl Found {
    /// The drafts and refusals of `results` (id, draft or reason).
    pub(crate) fn from_results(results: impl IntoIterator<Item = (String, Result<Draft, String>)>) -> Self {
        let mut found = Self::default();
        for (id, result) in results {
            match result {
                Ok(d) => found.drafts.push(d),
                Err(reason) => found.refused.push(Refusal::new(&id, reason)),
            }
        }
        found
    }
}

/// What [`install`] does when a competition is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Publish every competition that can be imported.
    Partial,
    /// Publish nothing when anything is refused.
    Strict,
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

/// What an import did: the competitions published, and those refused (sorted by id).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub imported: Vec<Imported>,
    pub refused: Vec<Refusal>,
}

/// Stages, prepares and publishes the drafts of `found` under `root` (see the module
/// docs). Whatever a competition fails on (staging, preparing, publishing it) refuses that
/// competition, with the error and its causes as the reason.
pub fn install(root: &Path, found: Found, policy: Policy) -> Report {
    let Found { drafts, mut refused } = found;
    let staging = root.join(format!(".import-{}", std::process::id()));
    let mut staged = Vec::new();
    for d in drafts {
        let id = d.manifest.id.clone();
        match existing(root, &id).map_or_else(|| stage(&staging, &d), Err) {
            Ok(()) => staged.push(d),
            Err(e) => {
                let _ = std::fs::remove_dir_all(staging.join("data").join(&id));
                refused.push(Refusal::of(&id, &e));
            }
        }
    }
    let published = if policy == Policy::Strict && !refused.is_empty() {
        Vec::new()
    } else {
        publish_all(root, &staging, staged, policy, &mut refused)
    };
    let _ = std::fs::remove_dir_all(&staging);
    refused.sort_by(|a, b| a.id.cmp(&b.id));
    Report {
        imported: published.iter().map(imported).collect(),
        refused,
    }
}

fn imported(d: &Draft) -> Imported {
    Imported {
        id: d.manifest.id.clone(),
        languages: d.texts.iter().map(|(c, _)| c.clone()).collect(),
        metric: d.manifest.metric.name.clone(),
        grading: if d.manifest.is_program_graded() {
            "program"
        } else {
            "native"
        },
        notes: d.manifest.import_notes.clone(),
    }
}

/// The error for an id whose manifest or data folder exists under `root`.
fn existing(root: &Path, id: &str) -> Option<ImportError> {
    [manifest_path(root, id), root.join("data").join(id)]
        .into_iter()
        .find(|p| p.exists())
        .map(|path| ImportError::Exists {
            id: id.to_string(),
            path,
        })
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

fn stage(staging: &Path, d: &Draft) -> Result<(), ImportError> {
    let id = &d.manifest.id;
    let dir = staging.join("data").join(id);
    let prepare_err = |source| ImportError::Prepare {
        id: id.clone(),
        source,
    };
    for (from, to) in &d.copies {
        let dest = dir.join(to);
        std::fs::create_dir_all(dest.parent().expect("has a parent")).map_err(write_err(&dest))?;
        std::fs::copy(from, &dest).map_err(|source| ImportError::Read {
            path: from.clone(),
            source,
        })?;
    }
    for (to, bytes) in &d.generated {
        prepare::write_atomic(&dir.join(to), bytes).map_err(prepare_err)?;
    }
    let mut manifest = d.manifest.clone();
    for derived in &d.derived {
        let blake3 = derived.write(&dir)?;
        let name = derived.to.strip_prefix("public/").unwrap_or(&derived.to);
        manifest.files.public.insert(name.to_string(), blake3);
    }
    for (code, text) in &d.texts {
        let path = dir.join("tasks").join(format!("{code}.toml"));
        text.check(&path)?;
        prepare::write_atomic(&path, text.to_toml().as_bytes()).map_err(prepare_err)?;
    }
    let manifest_path = manifest_path(staging, id);
    let text = toml::to_string(&manifest).expect("a manifest serializes");
    let header = format!(
        "# Imported by ml2b {}; see import_notes for every change.\n",
        env!("CARGO_PKG_VERSION")
    );
    prepare::write_atomic(&manifest_path, format!("{header}{text}").as_bytes()).map_err(prepare_err)?;
    let competition = Competition {
        manifest: CompetitionManifest::load(&manifest_path)?,
        manifest_path,
        dir,
    };
    // The staging folder is removed: name the copied and derived files' originals.
    let prep = |source: prepare::PrepareError| ImportError::Prepare {
        id: id.clone(),
        source: source.relocated(|path| {
            d.copies
                .iter()
                .map(|(from, to)| (from, to))
                .chain(d.derived.iter().map(|x| (&x.from, &x.to)))
                .find(|(_, to)| competition.dir.join(to) == path)
                .map(|(from, _)| from.clone())
        }),
    };
    let built = prepare::build(&competition).map_err(prep)?;
    prepare::write(&competition, &built, true).map_err(prep)?;
    Ok(())
}

/// Publishes each staged draft; returns those published. A draft that cannot be published
/// is refused; under [`Policy::Strict`] that takes back every one published before it.
fn publish_all(
    root: &Path,
    staging: &Path,
    staged: Vec<Draft>,
    policy: Policy,
    refused: &mut Vec<Refusal>,
) -> Vec<Draft> {
    let mut published: Vec<Draft> = Vec::new();
    for d in staged {
        let id = d.manifest.id.clone();
        match publish(root, staging, &id) {
            Ok(()) => published.push(d),
            Err(e) => {
                refused.push(Refusal::of(&id, &e));
                if policy == Policy::Strict {
                    for p in published.drain(..).rev() {
                        unpublish(root, &p.manifest.id);
                    }
                    break;
                }
            }
        }
    }
    published
}

/// Moves one staged competition into `root`: its data folder, then its manifest (linked,
/// so that an existing one is never replaced); if the manifest fails, the data goes back.
fn publish(root: &Path, staging: &Path, id: &str) -> Result<(), ImportError> {
    let data = root.join("data");
    let manifests = root.join("manifests/competitions");
    for dir in [&data, &manifests] {
        std::fs::create_dir_all(dir).map_err(write_err(dir))?;
    }
    let to = data.join(id);
    std::fs::rename(staging.join("data").join(id), &to).map_err(write_err(&to))?;
    let manifest = manifest_path(root, id);
    if let Err(source) = link_new(&manifest_path(staging, id), &manifest) {
        let _ = std::fs::remove_dir_all(&to);
        return Err(ImportError::Write {
            path: manifest,
            source,
        });
    }
    Ok(())
}

/// Puts `from`'s bytes at `to` unless `to` exists: a hard link, or where the file system has
/// none, a copy into a file created new.
fn link_new(from: &Path, to: &Path) -> std::io::Result<()> {
    match std::fs::hard_link(from, to) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            let mut out = std::fs::File::options().write(true).create_new(true).open(to)?;
            std::io::copy(&mut std::fs::File::open(from)?, &mut out)?;
            out.sync_all()
        }
        other => other,
    }
}

/// Takes a published competition back out: its manifest first, so it is never visible
/// without its data.
fn unpublish(root: &Path, id: &str) {
    let _ = std::fs::remove_file(manifest_path(root, id));
    let _ = std::fs::remove_dir_all(root.join("data").join(id));
}

/// Checks a drafted manifest; an error names the files it was drawn from (`sources`), not
/// the manifest, which does not exist yet.
pub(crate) fn check_draft(manifest: &CompetitionManifest, sources: &[&Path]) -> Result<(), String> {
    let named = PathBuf::from(format!("{}.toml", manifest.id));
    manifest.check(&named).map_err(|e| {
        let what = match e {
            ManifestError::Invalid { field, message, .. } => format!("{field}: {message}"),
            other => other.to_string(),
        };
        let from: Vec<String> = sources.iter().map(|p| p.display().to_string()).collect();
        format!("{what} (in the manifest drawn from {})", from.join(", "))
    })
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
