//! The benchmark's competitions: manifests plus their data folders.
//!
//! A benchmark root holds `manifests/competitions/<id>.toml` and `data/<id>/` (layout
//! below; see also `data/README.md`). The bundled root is the repository itself.
//! ```text
//! data/<id>/source/…            raw data the split is rebuilt from (holdout rule)
//! data/<id>/public/train.csv    id + features + target(s) (+ weight)
//! data/<id>/public/test.csv     id + features
//! data/<id>/public/sample_submission.csv
//! data/<id>/private/answers.csv id + target(s) (+ weight): only the grader reads it
//! data/<id>/tasks/<code>.toml   the task text per language (manifest::task)
//! data/<id>/back/<code>.toml    English back-translation of tasks/<code>.toml
//! data/<id>/solution/{modular,mono}.py   the reference solution (the baseline)
//! data/<id>/mle-bench/leaderboard.csv     an MLE-bench competition's Kaggle leaderboard
//!                                         (where its manifest's `[mle_bench]` says)
//! ```
//! A predictions file is scored, and its score ranked on the leaderboard, by [`grading`].
//!
//! Invariants checked by [`Benchmark::load`]: every manifest is valid and named after its
//! id; ids are unique; every competition's language list names known languages, includes
//! English, and each has a valid task text. Loading never writes anything.

pub mod grading;
pub mod import;
pub mod integrity;
pub mod prepare;
pub mod program;
pub mod ratings;
pub mod sample;
pub mod source_format;
pub mod spec;
pub mod split;
pub mod terms;
pub mod validation;

use std::path::{Path, PathBuf};

use crate::manifest::{CompetitionManifest, Languages, ManifestError, TaskText};

/// One competition: its manifest and where its data lives.
#[derive(Clone, Debug)]
pub struct Competition {
    pub manifest: CompetitionManifest,
    /// `manifests/competitions/<id>.toml`.
    pub manifest_path: PathBuf,
    /// `data/<id>/`.
    pub dir: PathBuf,
}

impl Competition {
    /// The competition id.
    pub fn id(&self) -> &str {
        &self.manifest.id
    }

    /// The languages with a task text: the manifest's list (default: all of `languages`),
    /// then, in `languages`' order, each other language whose `tasks/<code>.toml` exists
    /// (a text `ml2b translate` made for a competition imported in fewer languages).
    pub fn languages<'a>(&'a self, languages: &'a Languages) -> Vec<&'a str> {
        if self.manifest.languages.is_empty() {
            return languages.all().iter().map(|l| l.code.as_str()).collect();
        }
        let mut out: Vec<&str> = self.manifest.languages.iter().map(String::as_str).collect();
        for l in languages.all() {
            if !out.contains(&l.code.as_str()) && self.task_path(&l.code).is_file() {
                out.push(&l.code);
            }
        }
        out
    }

    /// `data/<id>/tasks/<code>.toml`.
    pub fn task_path(&self, code: &str) -> PathBuf {
        self.dir.join("tasks").join(format!("{code}.toml"))
    }

    /// `data/<id>/back/<code>.toml`.
    pub fn back_path(&self, code: &str) -> PathBuf {
        self.dir.join("back").join(format!("{code}.toml"))
    }

    /// The task text in `code`.
    pub fn task(&self, code: &str) -> Result<TaskText, ManifestError> {
        TaskText::load(&self.task_path(code))
    }

    /// The English back-translation of the `code` text, if there is one.
    pub fn back_translation(&self, code: &str) -> Result<Option<TaskText>, ManifestError> {
        let path = self.back_path(code);
        if path.exists() {
            TaskText::load(&path).map(Some)
        } else {
            Ok(None)
        }
    }

    /// A file of the public or private side.
    pub fn file(&self, side: Side, name: &str) -> PathBuf {
        self.dir.join(side.dir()).join(name)
    }

    /// How the grader reads answers in the label layout (a validation split's, and the
    /// private answers of any competition without one-hot answers) and predictions.
    pub fn grade_options(&self) -> crate::metrics::grading::GradeOptions {
        let m = &self.manifest;
        crate::metrics::grading::GradeOptions {
            id_col: m.columns.id.clone(),
            weight_col: m.columns.weight.clone().unwrap_or_else(|| "weight".into()),
            targets: Some(m.columns.targets.clone()),
            ..Default::default()
        }
    }

    /// How the grader reads `private/answers.csv`: its class columns when they are
    /// one-hot (`columns.one_hot`), else as [`Self::grade_options`].
    pub fn private_grade_options(&self) -> crate::metrics::grading::GradeOptions {
        let one_hot = &self.manifest.columns.one_hot;
        let mut options = self.grade_options();
        if !one_hot.is_empty() {
            options.targets = Some(one_hot.clone());
        }
        options
    }

    /// `data/<id>/solution/<mode>.py`.
    pub fn solution(&self, mode: &str) -> PathBuf {
        self.dir.join("solution").join(format!("{mode}.py"))
    }

    fn check_languages(&self, languages: &Languages) -> Result<(), ManifestError> {
        let bad = |field: &str, message: String| ManifestError::Invalid {
            path: self.manifest_path.clone(),
            field: field.into(),
            message,
        };
        for code in &self.manifest.languages {
            if !languages.all().iter().any(|l| &l.code == code) {
                return Err(bad(
                    "languages",
                    format!("`{code}` is not a language of languages.toml"),
                ));
            }
        }
        let list = self.languages(languages);
        if !list.contains(&"en") {
            return Err(bad(
                "languages",
                "English (`en`) is required: it is the original".into(),
            ));
        }
        for code in list {
            let path = self.task_path(code);
            if !path.exists() {
                return Err(bad(
                    "languages",
                    format!("`{code}` has no task text: {} is missing", path.display()),
                ));
            }
            self.task(code)?;
        }
        Ok(())
    }
}

/// The public or private side of a competition's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Public,
    Private,
}

impl Side {
    /// The folder under `data/<id>/`.
    pub fn dir(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Private => "private",
        }
    }
}

/// Every competition under a benchmark root, in id order.
#[derive(Clone, Debug)]
pub struct Benchmark {
    pub root: PathBuf,
    pub languages: Languages,
    pub competitions: Vec<Competition>,
}

impl Benchmark {
    /// Loads and checks every manifest under `root` (see the module docs).
    pub fn load(root: &Path) -> Result<Self, ManifestError> {
        let languages = Languages::load(&root.join("manifests/languages.toml"))?;
        let dir = root.join("manifests/competitions");
        let mut paths = Vec::new();
        let entries = std::fs::read_dir(&dir).map_err(|source| ManifestError::Read {
            path: dir.clone(),
            source,
        })?;
        for entry in entries {
            let path = entry
                .map_err(|source| ManifestError::Read {
                    path: dir.clone(),
                    source,
                })?
                .path();
            if path.extension().is_some_and(|e| e == "toml") {
                paths.push(path);
            }
        }
        paths.sort();
        let mut competitions = Vec::with_capacity(paths.len());
        for manifest_path in paths {
            let manifest = CompetitionManifest::load(&manifest_path)?;
            let competition = Competition {
                dir: root.join("data").join(&manifest.id),
                manifest,
                manifest_path,
            };
            competition.check_languages(&languages)?;
            competitions.push(competition);
        }
        Ok(Self {
            root: root.to_path_buf(),
            languages,
            competitions,
        })
    }

    /// The competitions named in `ids` (all when empty), or an error naming an unknown id.
    pub fn select(&self, ids: &[String]) -> Result<Vec<&Competition>, String> {
        if ids.is_empty() {
            return Ok(self.competitions.iter().collect());
        }
        ids.iter()
            .map(|id| {
                self.competitions.iter().find(|c| c.id() == id).ok_or_else(|| {
                    format!(
                        "no competition `{id}` under {}; {}",
                        self.root.join("manifests/competitions").display(),
                        self.suggest(id)
                    )
                })
            })
            .collect()
    }

    /// What an unknown competition id may have meant: the closest id (by edit distance,
    /// within a third of its length), else the ids there are (the first 20).
    fn suggest(&self, id: &str) -> String {
        let ids: Vec<&str> = self.competitions.iter().map(|c| c.id()).collect();
        let closest = ids
            .iter()
            .map(|c| (strsim::levenshtein(id, c), *c))
            .filter(|(d, c)| *d * 3 <= c.len().max(id.len()))
            .min();
        if let Some((_, c)) = closest {
            return format!("did you mean `{c}`?");
        }
        let shown: Vec<&str> = ids.iter().take(20).copied().collect();
        let more = if ids.len() > shown.len() {
            format!(" and {} more", ids.len() - shown.len())
        } else {
            String::new()
        };
        match ids.is_empty() {
            true => "the root has no competition".into(),
            false => format!("the competitions are {}{more}", shown.join(", ")),
        }
    }
}
