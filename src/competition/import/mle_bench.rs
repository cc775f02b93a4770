//! Import of MLE-bench competitions: the data `mlebench prepare` wrote, and the checkout's
//! `config.yaml`, `description.md`, `leaderboard.csv` and `grade.py`.
//!
//! Layout read:
//! * `DATA_DIR/<id>/prepared/public/` (or `DATA_DIR/<id>/public/`): `train.csv`, `test.csv`,
//!   the sample submission, and whatever else the preparation put there (folders too: all of
//!   it is copied, checksummed, under `data/<id>/public/`);
//! * `DATA_DIR/<id>/prepared/private/` (or `…/private/`): the answers;
//! * with `--repo CHECKOUT`: `CHECKOUT/mlebench/competitions/<id>/{config.yaml,
//!   description.md, leaderboard.csv, grade.py, *.py}`, `CHECKOUT/mlebench/competitions/
//!   utils.py`, `CHECKOUT/mlebench/metrics.py` and `CHECKOUT/experiments/splits/<name>.txt`;
//!   without it, `DATA_DIR/<id>/config.yaml` and a `description.md` beside the data (the
//!   older layout), or `--metric` for one competition.
//!
//! `config.yaml` names the grader, the answers file and the sample submission (paths
//! relative to `DATA_DIR`). The harness reads `public/train.csv` and `public/test.csv`;
//! where the preparation writes its data otherwise (`labels.csv`, JSON records, zipped
//! CSVs, test rows that are files named by id), `import::mle_layout` says where they come
//! from, and the import adds them beside the preparation's files (`import::derive`).
//! Columns are resolved by name, never by position: the id is the column `grade.py` keys on
//! (`import::mle_layout`, else the sample submission's first column), once per answers row
//! and in `test.csv`; the predicted columns are the sample submission's others that
//! `test.csv` lacks (one it has is echoed, not predicted), each found by name in the answers
//! and in `train.csv` (the harness reads the targets from it). For a
//! probability metric over class columns the target is the one column `train.csv` has and
//! `test.csv` lacks; MLE-bench's one-hot answers stay one-hot (`columns.one_hot`, each row
//! checked to set exactly one class), so that a class no test row holds counts as in
//! MLE-bench's log loss. The private answers ml2b keeps are the id and graded columns only
//! (the answers of some preparations carry every feature), written verbatim.
//!
//! Grading ([`crate::metrics::grading::mle_bench`]): a grader that one of ml2b's exact
//! metrics computes is graded natively; any other is graded by the checkout's own
//! `grade.py`, run in the sandbox as a grading program (`competition::program`), its files
//! and the checkout's revision recorded in `[mle_bench]`. The leaderboard is copied to
//! `data/<id>/mle-bench/leaderboard.csv` with its blake3 (medals: `metrics::medals`).
//! `--split lite` (MLE-bench's low-complexity split), `--split NAME` (a file of
//! `experiments/splits/`) or `--split FILE` selects competitions; `--only` too. `--metric`
//! overrides the grader of exactly one competition.
//!
//! Refused, with the reason (the others are still imported, `import::install`): data in no
//! layout the harness reads (no `train.csv`/`test.csv` and no entry in
//! `import::mle_layout`: a custom loader), JSONL answers, a grading program without a
//! checkout or leaderboard, an id that repeats in the answers, and any column the rules
//! above cannot find. Errors name the preparation's and the checkout's files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::mle_config::Config;
use super::mle_layout::{Layout, Resolved, layout};
use super::{Derived, Draft, Found, ImportError, check_draft, csv_header, domain, task_type_with};
use crate::manifest::competition::{
    Characteristics, Columns, Domain, Files, Gates, MetricSpec, MleBench, PROGRAM, Source, Split, SplitRule,
    TaskType, Translation, Visibility, check_id,
};
use crate::manifest::{CompetitionManifest, TaskText};
use crate::metrics::grading::mle_bench::{MleGrader, mle_bench_competition_grader};
use crate::metrics::grading::{Direction, InputKind, Metric};
use crate::metrics::medals::Leaderboard;

/// What `ml2b import mle-bench` was asked.
#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    pub only: &'a [String],
    /// Overrides the grader of the one competition imported.
    pub metric: Option<&'a str>,
    pub licence: &'a str,
    /// The MLE-bench checkout.
    pub repo: Option<&'a Path>,
    /// `lite`, a split name of the checkout, or a file of ids.
    pub split: Option<&'a str>,
}

/// Where the leaderboard goes, relative to `data/<id>/`.
pub const LEADERBOARD: &str = "mle-bench/leaderboard.csv";
/// Where the grading program's files go, relative to `data/<id>/`.
pub const GRADER_DIR: &str = "mle-bench/grader";

/// Reads every selected competition under `dir`: a draft of each that can be imported, the
/// reason of each that cannot. An error is the selection itself being wrong.
pub fn read(dir: &Path, opts: &Options) -> Result<Found, ImportError> {
    let ids = select(dir, opts)?;
    if opts.metric.is_some() && ids.len() != 1 {
        return Err(ImportError::invalid(
            dir,
            format!(
                "--metric overrides the grader of one competition, and {} are selected; \
                 name it with --only",
                ids.len()
            ),
        ));
    }
    Ok(Found::from_results(ids.into_iter().map(|(id, folder)| {
        let result = draft(dir, &id, &folder, opts);
        (id, result)
    })))
}

/// The selected competitions: (id, folder), sorted by id.
fn select(dir: &Path, opts: &Options) -> Result<Vec<(String, PathBuf)>, ImportError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ImportError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut found: BTreeMap<String, PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir() && sides(p).is_some())
        .filter_map(|p| Some((p.file_name()?.to_str()?.to_string(), p)))
        .collect();
    let mut wanted: Vec<String> = opts.only.to_vec();
    if let Some(split) = opts.split {
        let listed = split_ids(split, opts.repo)?;
        wanted = if wanted.is_empty() {
            listed
        } else {
            wanted.into_iter().filter(|id| listed.contains(id)).collect()
        };
    }
    if wanted.is_empty() && opts.only.is_empty() && opts.split.is_none() {
        if found.is_empty() {
            return Err(ImportError::invalid(
                dir,
                "holds no competition folder with public/ and private/ (as `mlebench prepare` writes them)",
            ));
        }
        return Ok(found.into_iter().collect());
    }
    let missing: Vec<String> = wanted
        .iter()
        .filter(|id| !found.contains_key(*id))
        .map(|id| {
            format!(
                "{id}: no prepared folder {id}/prepared/{{public,private}} under {}",
                dir.display()
            )
        })
        .collect();
    if !missing.is_empty() {
        return Err(ImportError::NotFound(missing));
    }
    found.retain(|id, _| wanted.contains(id));
    if found.is_empty() {
        return Err(ImportError::invalid(
            dir,
            "the selection (--only, --split) names no competition",
        ));
    }
    Ok(found.into_iter().collect())
}

/// The ids of a split: `lite` is MLE-bench's low-complexity split (`low.txt`), a bare name
/// is `experiments/splits/<name>.txt` of the checkout, anything else a file.
fn split_ids(split: &str, repo: Option<&Path>) -> Result<Vec<String>, ImportError> {
    let named = |name: &str| repo.map(|r| r.join("experiments/splits").join(format!("{name}.txt")));
    let path = match split {
        "lite" => named("low"),
        s if !s.contains(['/', '.']) => named(s),
        s => Some(PathBuf::from(s)),
    }
    .ok_or_else(|| {
        ImportError::invalid(
            Path::new(split),
            "a named split is read from the checkout: pass --repo MLEBENCH_CHECKOUT",
        )
    })?;
    let text = std::fs::read_to_string(&path).map_err(|source| ImportError::Read {
        path: path.clone(),
        source,
    })?;
    let ids: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    if ids.is_empty() {
        return Err(ImportError::invalid(&path, "lists no competition"));
    }
    Ok(ids)
}

fn sides(folder: &Path) -> Option<(PathBuf, PathBuf)> {
    [folder.join("prepared"), folder.to_path_buf()]
        .into_iter()
        .map(|base| (base.join("public"), base.join("private")))
        .find(|(p, q)| p.is_dir() && q.is_dir())
}

/// Where one competition's files are.
struct Sources {
    id: String,
    folder: PathBuf,
    public: PathBuf,
    /// `mlebench/competitions/<id>/` of the checkout.
    checkout: Option<PathBuf>,
    config: Option<Config>,
    sample: PathBuf,
    /// The sample submission's header.
    sample_header: Vec<String>,
    answers: PathBuf,
    layout: Layout,
}

impl Sources {
    fn find(dir: &Path, id: &str, folder: &Path, repo: Option<&Path>) -> Result<Self, String> {
        let (public, private) = sides(folder).ok_or("no public/ and private/ folders")?;
        let checkout = repo.map(|r| r.join("mlebench/competitions").join(id));
        if let Some(c) = checkout.as_ref().filter(|c| !c.is_dir()) {
            return Err(format!(
                "the checkout has no {} (is --repo an MLE-bench checkout, and `{id}` one of its competitions?)",
                c.display()
            ));
        }
        let config_path = checkout
            .as_ref()
            .map(|c| c.join("config.yaml"))
            .unwrap_or_else(|| folder.join("config.yaml"));
        let config = if config_path.is_file() {
            Some(Config::read(&config_path).map_err(|e| e.to_string())?)
        } else {
            None
        };
        let named = |rel: Option<&String>| rel.map(|r| dir.join(r)).filter(|p| p.is_file());
        let sample = named(config.as_ref().and_then(|c| c.sample_submission.as_ref()))
            .or_else(|| first_file(&public, &["sample_submission.csv", "sampleSubmission.csv"]))
            .ok_or_else(|| format!("{} has no sample submission", public.display()))?;
        let answers = named(config.as_ref().and_then(|c| c.answers.as_ref()))
            .or_else(|| first_file(&private, &["test.csv", "answers.csv"]))
            .ok_or_else(|| format!("{} has neither test.csv nor answers.csv", private.display()))?;
        let sample_header = csv_header(&sample).map_err(|e| e.to_string())?;
        if sample_header.is_empty() {
            return Err(format!("{} has no columns", sample.display()));
        }
        Ok(Self {
            id: id.to_string(),
            folder: folder.to_path_buf(),
            public,
            checkout,
            config,
            sample,
            sample_header,
            answers,
            layout: layout(id),
        })
    }

    /// The column grade.py keys rows on: the layout's, else the sample submission's first.
    fn id_column(&self) -> &str {
        self.layout.id.unwrap_or(&self.sample_header[0])
    }

    /// The files a drafted manifest is drawn from, for its errors.
    fn drawn_from(&self) -> Vec<&Path> {
        let config = self.config.as_ref().map(|c| c.path.as_path());
        config
            .into_iter()
            .chain([self.sample.as_path(), &self.answers])
            .collect()
    }

    fn description(&self) -> Result<String, String> {
        let candidates = [
            self.checkout.as_ref().map(|c| c.join("description.md")),
            Some(self.public.join("description.md")),
            Some(self.folder.join("description.md")),
        ];
        let path = candidates
            .into_iter()
            .flatten()
            .find(|p| p.is_file())
            .ok_or("no description.md (in the checkout or beside the data)")?;
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
    }
}

fn first_file(dir: &Path, names: &[&str]) -> Option<PathBuf> {
    names.iter().map(|n| dir.join(n)).find(|p| p.is_file())
}

/// How the competition is graded, and what the importer noted about it.
enum Grading {
    Native(Metric),
    /// MLE-bench's own grade.py (the reason is in the notes).
    Program,
}

fn grading(src: &Sources, opts: &Options) -> Result<(Grading, Option<String>, Vec<String>), String> {
    let grader = src.config.as_ref().and_then(|c| c.grader.clone());
    if let Some(m) = opts.metric {
        let metric: Metric = m
            .parse()
            .map_err(|e: crate::metrics::grading::UnknownMetric| e.to_string())?;
        let note = format!(
            "grading: --metric {metric} (MLE-bench's grader: {})",
            grader.as_deref().unwrap_or("none recorded")
        );
        return Ok((Grading::Native(metric), grader, vec![note]));
    }
    let Some(name) = grader else {
        return Err(match &src.checkout {
            Some(c) => format!("{} has no grader.name", c.join("config.yaml").display()),
            None => format!(
                "no config.yaml at {}: pass --repo MLEBENCH_CHECKOUT (or --metric for one competition)",
                src.folder.join("config.yaml").display()
            ),
        });
    };
    Ok(match mle_bench_competition_grader(&src.id, &name) {
        MleGrader::Native { metric, note } => {
            let mut notes = vec![format!("grading: MLE-bench's `{name}` is ml2b's `{metric}`")];
            notes.extend(note.map(|n| format!("grading: {n}")));
            (Grading::Native(metric), Some(name), notes)
        }
        MleGrader::Program { why } => {
            let note = format!("grading: MLE-bench's own grade.py in the sandbox (`{name}`: {why})");
            (Grading::Program, Some(name), vec![note])
        }
    })
}

fn draft(dir: &Path, id: &str, folder: &Path, opts: &Options) -> Result<Draft, String> {
    check_id(id)?;
    let src = Sources::find(dir, id, folder, opts.repo)?;
    let (grading, grader, notes) = grading(&src, opts)?;
    let mut parts = Parts {
        notes,
        ..Parts::default()
    };
    let public = parts.copy_public(&src)?;
    let harness = parts.harness(&src)?;
    let shape = Headers::read(&src, &harness, &mut parts.notes)?;
    let mut graded = match grading {
        Grading::Native(metric) => shape.view(&src).native(metric, &mut parts)?,
        Grading::Program => shape.view(&src).program(&src, &mut parts)?,
    };
    graded.mle.grader = grader.unwrap_or_else(|| format!("--metric {}", graded.metric.name));
    graded.mle.revision = opts.repo.map(revision).unwrap_or_default();
    leaderboard(&src, &mut graded, &mut parts)?;
    let text = task_text(&src, &graded.mle.grader, &public, &harness)?;
    let (domain, domain_note) = infer_domain(&src, &harness.train, &graded.columns);
    parts.notes.push(domain_note);
    parts
        .notes
        .insert(0, "split: given by the MLE-bench preparation, not rebuilt".into());
    let manifest = CompetitionManifest {
        id: id.to_string(),
        title: text.title.clone(),
        domain,
        task: graded.task,
        visibility: Visibility::Public,
        translation: Translation::None,
        languages: vec!["en".into()],
        metric: graded.metric,
        columns: graded.columns,
        source: Source {
            file: String::new(),
            blake3: String::new(),
            origin: format!("MLE-bench prepared folder {}", src.folder.display()),
            licence: opts.licence.to_string(),
            citation: String::new(),
            format: Default::default(),
        },
        split: Split {
            rule: SplitRule::Given,
            test_fraction: 0.2,
            seed: 42,
            stratify: false,
        },
        files: parts.files,
        characteristics: Characteristics::default(),
        gates: Gates::default(),
        baseline: None,
        import_notes: parts.notes,
        mle_bench: Some(graded.mle),
    };
    check_draft(&manifest, &src.drawn_from())?;
    Ok(Draft {
        manifest,
        texts: vec![("en".into(), text)],
        copies: parts.copies,
        generated: parts.generated,
        derived: parts.derived,
    })
}

/// What a draft gathers: the files to copy or write, their checksums, the notes.
#[derive(Default)]
struct Parts {
    files: Files,
    copies: Vec<(PathBuf, String)>,
    generated: Vec<(String, Vec<u8>)>,
    derived: Vec<Derived>,
    notes: Vec<String>,
}

/// The harness's `train.csv` and `test.csv`, resolved from the competition's layout.
struct Harness {
    train: Resolved,
    test: Resolved,
}

impl Parts {
    /// Every public file, copied as it is.
    fn copy_public(&mut self, src: &Sources) -> Result<Vec<(String, PathBuf)>, String> {
        let public = public_files(&src.public)?;
        for (rel, path) in &public {
            self.files.public.insert(rel.clone(), hash(path)?);
            self.copies.push((path.clone(), format!("public/{rel}")));
        }
        Ok(public)
    }

    /// The harness's `train.csv` and `test.csv` (`import::mle_layout`), and what makes
    /// them where the preparation wrote its data otherwise: files derived while staging.
    fn harness(&mut self, src: &Sources) -> Result<Harness, String> {
        let sample = (src.sample.as_path(), src.id_column());
        let mut resolve = |data: super::mle_layout::Data, name: &'static str, rows: usize| {
            let r = data.resolve(name, &src.public, sample, rows)?;
            if let Some((how, note)) = &r.derived {
                self.derived.push(Derived {
                    to: format!("public/{name}"),
                    from: r.from.clone(),
                    how: how.clone(),
                });
                self.notes.push(note.clone());
            }
            Ok::<_, String>(r)
        };
        Ok(Harness {
            train: resolve(src.layout.train, "train.csv", domain::SAMPLE_ROWS)?,
            test: resolve(src.layout.test, "test.csv", 0)?,
        })
    }
}

/// What grading resolved to.
struct Graded {
    metric: MetricSpec,
    columns: Columns,
    task: TaskType,
    mle: MleBench,
}

/// The English task text: the checkout's description, the config's name as the title.
fn task_text(
    src: &Sources,
    grader: &str,
    public: &[(String, PathBuf)],
    harness: &Harness,
) -> Result<TaskText, String> {
    let description = src.description()?;
    let title = src
        .config
        .as_ref()
        .and_then(|c| c.name.clone())
        .or_else(|| {
            description
                .lines()
                .find_map(|l| l.strip_prefix("# "))
                .map(|t| t.trim().to_string())
        })
        .unwrap_or_else(|| src.id.clone());
    Ok(TaskText {
        title,
        domain: format!("Kaggle competition `{}`, as MLE-bench prepares it.", src.id),
        metric: grader.to_string(),
        description: description.trim().to_string(),
        data_card: data_card(public, harness)?,
    })
}

/// Every file under `public/` (recursively, `description.md` at the top excepted): (path
/// relative to `public/`, path), sorted.
fn public_files(public: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(public).min_depth(1).sort_by_file_name() {
        let entry = entry.map_err(|e| format!("{}: {e}", public.display()))?;
        if !entry.file_type().is_file() {
            if entry.file_type().is_symlink() {
                return Err(format!(
                    "{}: a symbolic link is not copied",
                    entry.path().display()
                ));
            }
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(public)
            .expect("under public")
            .to_str()
            .ok_or_else(|| format!("{}: a file name is not UTF-8", entry.path().display()))?
            .to_string();
        if rel != "description.md" {
            out.push((rel, entry.path().to_path_buf()));
        }
    }
    Ok(out)
}

/// A CSV read whole: its header and records, as written.
struct Csv {
    path: PathBuf,
    header: Vec<String>,
    rows: Vec<csv::StringRecord>,
}

impl Csv {
    fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// Checks that column `col` holds each value once (rows are graded by it).
    fn unique(&self, col: usize) -> Result<(), String> {
        let mut seen = std::collections::HashMap::new();
        for (i, row) in self.rows.iter().enumerate() {
            if let Some(first) = seen.insert(&row[col], i) {
                return Err(format!(
                    "{}: rows {} and {} have the same id `{}` = `{}`; rows are graded by their id",
                    self.path.display(),
                    first + 2,
                    i + 2,
                    self.header[col],
                    &row[col]
                ));
            }
        }
        Ok(())
    }
}

fn read_csv(path: &Path) -> Result<Csv, String> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let header = reader
        .headers()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .iter()
        .map(String::from)
        .collect();
    let mut rows = Vec::new();
    for (i, r) in reader.records().enumerate() {
        rows.push(r.map_err(|e| format!("{}: row {}: {e}", path.display(), i + 2))?);
    }
    Ok(Csv {
        path: path.to_path_buf(),
        header,
        rows,
    })
}

/// The files the columns are resolved from, read once.
struct Headers {
    train: Vec<String>,
    /// The file the harness's train.csv is (made from).
    train_from: PathBuf,
    test: Vec<String>,
    /// The id column (grade.py's) and the predicted columns of the sample submission.
    id: String,
    predicted: Vec<String>,
    answers: Csv,
}

impl Headers {
    /// Reads the answers and resolves the id and predicted columns: the id is grade.py's
    /// (`import::mle_layout`, else the sample submission's first column), in the answers
    /// once per row and in test.csv; the predicted columns are the sample submission's
    /// others that test.csv lacks (a column it has is echoed, not predicted, and noted).
    fn read(src: &Sources, harness: &Harness, notes: &mut Vec<String>) -> Result<Self, String> {
        if src.answers.extension().is_some_and(|e| e != "csv") {
            return Err(format!(
                "{}: answers that are not CSV need a custom grader",
                src.answers.display()
            ));
        }
        let answers = read_csv(&src.answers)?;
        let id = src.id_column().to_string();
        let sample = &src.sample_header;
        if !sample.contains(&id) {
            return Err(format!(
                "{} has no column `{id}`, the id grade.py keys rows on",
                src.sample.display()
            ));
        }
        let test = &harness.test;
        let (echoed, predicted): (Vec<String>, Vec<String>) = sample
            .iter()
            .filter(|c| **c != id)
            .cloned()
            .partition(|c| test.header.contains(c));
        if predicted.is_empty() {
            return Err(format!(
                "{} has no column to predict besides the id `{id}` (test.csv holds every other)",
                src.sample.display()
            ));
        }
        let col = answers.column(&id).ok_or_else(|| {
            format!(
                "{} has no id column `{id}` (the id of {})",
                answers.path.display(),
                src.sample.display()
            )
        })?;
        if !test.header.contains(&id) {
            return Err(format!(
                "{} has no id column `{id}`: the harness writes each prediction's id from test.csv",
                test.from.display()
            ));
        }
        answers.unique(col)?;
        if !echoed.is_empty() {
            notes.push(format!(
                "columns: the sample submission also holds {} of test.csv, echoed, not predicted \
                 (grade.py keys on `{id}`)",
                echoed
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(Self {
            train: harness.train.header.clone(),
            train_from: harness.train.from.clone(),
            test: test.header.clone(),
            id,
            predicted,
            answers,
        })
    }

    fn view<'a>(&'a self, src: &'a Sources) -> Shape<'a> {
        Shape {
            train: &self.train,
            train_from: &self.train_from,
            test: &self.test,
            id: &self.id,
            predicted: &self.predicted,
            sample_path: &src.sample,
            answers: &self.answers,
        }
    }
}

/// The headers the columns are resolved from.
struct Shape<'a> {
    train: &'a [String],
    train_from: &'a Path,
    test: &'a [String],
    id: &'a str,
    predicted: &'a [String],
    sample_path: &'a Path,
    answers: &'a Csv,
}

impl Shape<'_> {
    /// The columns `train.csv` has and `test.csv` lacks: what is to be predicted.
    fn train_only(&self) -> Vec<&String> {
        self.train.iter().filter(|c| !self.test.contains(c)).collect()
    }

    /// A predicted column must be in the answers (to grade) and in train.csv (to learn).
    fn require(&self, column: &str, in_answers: bool) -> Result<(), String> {
        if in_answers && self.answers.column(column).is_none() {
            return Err(format!(
                "{} has no column `{column}` (predicted in {})",
                self.answers.path.display(),
                self.sample_path.display()
            ));
        }
        if !self.train.iter().any(|c| c == column) {
            return Err(format!(
                "{} has no column `{column}` that {} predicts: this competition's data needs a \
                 custom loader",
                self.train_from.display(),
                self.sample_path.display()
            ));
        }
        Ok(())
    }

    /// A native metric: its columns, and the answers' graded columns as the private file.
    fn native(&self, metric: Metric, parts: &mut Parts) -> Result<Graded, String> {
        let (columns, kept) = self.native_columns(metric, &mut parts.notes)?;
        let task = native_task(metric, &columns, &kept)?;
        parts
            .files
            .private
            .insert("answers.csv".into(), blake3_hex(&kept));
        parts.generated.push(("private/answers.csv".into(), kept));
        Ok(Graded {
            metric: MetricSpec {
                name: metric.to_string(),
                direction: metric.direction(),
            },
            columns,
            task,
            mle: MleBench::default(),
        })
    }

    /// A grading program: the sample submission's columns, the answers as they are, the
    /// program's files; the direction is the leaderboard's (see [`leaderboard`]).
    fn program(&self, src: &Sources, parts: &mut Parts) -> Result<Graded, String> {
        let (columns, submission) = self.program_columns(src)?;
        parts
            .files
            .private
            .insert("answers.csv".into(), hash(&src.answers)?);
        parts
            .copies
            .push((src.answers.clone(), "private/answers.csv".into()));
        let mut mle = MleBench {
            submission: submission.to_string(),
            ..MleBench::default()
        };
        program_files(src, &mut mle, &mut parts.copies)?;
        let task = match (submission, columns.targets.len()) {
            ("labels", _) => TaskType::Multiclass,
            (_, 1) => TaskType::Regression,
            _ => TaskType::MultiTargetRegression,
        };
        Ok(Graded {
            metric: MetricSpec {
                name: PROGRAM.into(),
                direction: Direction::Maximize,
            },
            columns,
            task,
            mle,
        })
    }

    /// Columns for a native metric, and the private answers to keep (id and targets).
    fn native_columns(&self, metric: Metric, notes: &mut Vec<String>) -> Result<(Columns, Vec<u8>), String> {
        let id = self.id.to_string();
        let predicted = self.predicted;
        if metric.input_kind() == InputKind::WeightedValues {
            return Err(format!(
                "`{metric}` needs a weight column, which MLE-bench's answers do not name"
            ));
        }
        let classes = metric.input_kind() == InputKind::Probabilities && predicted.len() > 1;
        let kept = if classes {
            self.class_answers(&id, predicted, notes)?
        } else {
            for t in predicted {
                self.require(t, true)?;
            }
            Kept {
                answers: self.keep(&id, predicted, notes)?,
                targets: predicted.to_vec(),
                one_hot: Vec::new(),
            }
        };
        let columns = Columns {
            id,
            targets: kept.targets,
            weight: None,
            weight_is_feature: false,
            one_hot: kept.one_hot,
        };
        Ok((columns, kept.answers))
    }

    /// A probability metric over class columns: the label column of train.csv, and the
    /// answers: that column when they have it, else MLE-bench's one-hot class columns, kept
    /// one-hot (`columns.one_hot`) so that a class no answer row holds still counts.
    fn class_answers(&self, id: &str, classes: &[String], notes: &mut Vec<String>) -> Result<Kept, String> {
        let label = match self.train_only().as_slice() {
            [one] => (*one).clone(),
            others => {
                return Err(format!(
                    "the label column is the one column train.csv has and test.csv lacks, and \
                     there are {} ({})",
                    others.len(),
                    others
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        };
        if self.answers.column(&label).is_some() {
            return Ok(Kept {
                answers: self.keep(id, std::slice::from_ref(&label), notes)?,
                targets: vec![label],
                one_hot: Vec::new(),
            });
        }
        let absent = self.check_one_hot(classes, &label)?;
        let answers = self.keep(id, classes, notes)?;
        notes.push(format!(
            "answers: MLE-bench's one-hot class columns ({}) of {} are kept and graded one-hot \
             ({absent} of them set in no row); the solution learns the label column `{label}` \
             and predicts a probability per class",
            classes.len(),
            file_name(&self.answers.path)
        ));
        Ok(Kept {
            answers,
            targets: vec![label],
            one_hot: classes.to_vec(),
        })
    }

    /// Checks that every answers row sets exactly one of the class columns (1, the others
    /// 0); returns how many classes no row sets.
    fn check_one_hot(&self, classes: &[String], label: &str) -> Result<usize, String> {
        let a = self.answers;
        let cols: Vec<usize> = classes
            .iter()
            .map(|c| {
                a.column(c).ok_or_else(|| {
                    format!(
                        "{} has neither the label column `{label}` nor the class column `{c}`",
                        a.path.display()
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        let mut set = vec![false; classes.len()];
        for (i, row) in a.rows.iter().enumerate() {
            let mut hot = None;
            for (k, &c) in cols.iter().enumerate() {
                match row[c].trim().parse::<f64>() {
                    Ok(v) if v == 1.0 && hot.is_none() => hot = Some(k),
                    Ok(0.0) => {}
                    _ => {
                        return Err(format!(
                            "{}: row {} is not one-hot (column `{}` holds `{}`)",
                            a.path.display(),
                            i + 2,
                            classes[k],
                            &row[c]
                        ));
                    }
                }
            }
            let k = hot.ok_or_else(|| format!("{}: row {} has no class set", a.path.display(), i + 2))?;
            set[k] = true;
        }
        Ok(set.iter().filter(|s| !**s).count())
    }

    /// The answers' id and `targets` columns, verbatim.
    fn keep(&self, id: &str, targets: &[String], notes: &mut Vec<String>) -> Result<Vec<u8>, String> {
        let a = self.answers;
        let cols: Vec<usize> = std::iter::once(id)
            .chain(targets.iter().map(String::as_str))
            .map(|c| a.column(c).expect("checked"))
            .collect();
        let dropped = a.header.len() - cols.len();
        if dropped > 0 {
            notes.push(format!(
                "answers: kept the columns {} of {} ({dropped} other columns are not graded)",
                std::iter::once(id)
                    .chain(targets.iter().map(String::as_str))
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                file_name(&a.path)
            ));
        }
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(cols.iter().map(|&c| a.header[c].as_str()))
            .expect("memory");
        for row in &a.rows {
            w.write_record(cols.iter().map(|&c| &row[c])).expect("memory");
        }
        Ok(w.into_inner().expect("memory"))
    }

    /// Columns for a grading program (the sample submission's), and what they hold.
    fn program_columns(&self, src: &Sources) -> Result<(Columns, &'static str), String> {
        let targets = self.predicted.to_vec();
        for t in &targets {
            self.require(t, false)?;
        }
        let sample = read_csv(&src.sample)?;
        let cols: Vec<usize> = targets.iter().filter_map(|t| sample.column(t)).collect();
        let numeric = sample
            .rows
            .iter()
            .all(|r| cols.iter().all(|&c| r[c].trim().parse::<f64>().is_ok()));
        let columns = Columns {
            id: self.id.to_string(),
            targets,
            weight: None,
            weight_is_feature: false,
            one_hot: Vec::new(),
        };
        Ok((columns, if numeric { "values" } else { "labels" }))
    }
}

/// The task a native metric implies, classes counted in the kept answers' target column.
/// A natively graded competition's targets (and one-hot class columns), and the private
/// answers kept for them.
struct Kept {
    targets: Vec<String>,
    one_hot: Vec<String>,
    answers: Vec<u8>,
}

/// The task type of a natively graded competition: from its metric, and the number of
/// classes (of the one-hot columns, or the distinct labels of the kept answers).
fn native_task(metric: Metric, columns: &Columns, answers: &[u8]) -> Result<TaskType, String> {
    task_type_with(&metric, || {
        if !columns.one_hot.is_empty() {
            return Ok(columns.one_hot.len());
        }
        let mut seen = std::collections::BTreeSet::new();
        for rec in csv::Reader::from_reader(answers).records() {
            seen.insert(rec.map_err(|e| e.to_string())?[1].to_string());
        }
        Ok(seen.len())
    })
}

/// The grading program: the competition's Python files, the checkout's shared helpers.
fn program_files(
    src: &Sources,
    mle: &mut MleBench,
    copies: &mut Vec<(PathBuf, String)>,
) -> Result<(), String> {
    let checkout = src.checkout.as_ref().ok_or(
        "this grader is run as MLE-bench's own grade.py, which is read from the checkout: pass --repo",
    )?;
    if !checkout.join("grade.py").is_file() {
        return Err(format!("{} has no grade.py", checkout.display()));
    }
    let mlebench = checkout
        .parent()
        .and_then(Path::parent)
        .expect("<repo>/mlebench/competitions/<id>");
    let mut wanted: Vec<(PathBuf, String)> = Vec::new();
    let mut own: Vec<PathBuf> = std::fs::read_dir(checkout)
        .map_err(|e| format!("{}: {e}", checkout.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "py") && p.file_name().is_some_and(|n| n != "prepare.py")
        })
        .collect();
    own.sort();
    for p in own {
        let name = file_name(&p);
        wanted.push((p, format!("mlebench/competitions/{}/{name}", src.id)));
    }
    for shared in ["competitions/utils.py", "metrics.py"] {
        let p = mlebench.join(shared);
        if p.is_file() {
            wanted.push((p, format!("mlebench/{shared}")));
        }
    }
    for (path, rel) in wanted {
        let dest = format!("{GRADER_DIR}/{rel}");
        mle.program.insert(dest.clone(), hash(&path)?);
        copies.push((path, dest));
    }
    Ok(())
}

/// The leaderboard: copied with its blake3; a program's direction is read from it as
/// MLE-bench does (the first score below the last: lower is better).
fn leaderboard(src: &Sources, graded: &mut Graded, parts: &mut Parts) -> Result<(), String> {
    let (mle, metric) = (&mut graded.mle, &mut graded.metric);
    let (copies, notes) = (&mut parts.copies, &mut parts.notes);
    let path = src.checkout.as_ref().map(|c| c.join("leaderboard.csv"));
    let program = metric.name == PROGRAM;
    let Some(path) = path.filter(|p| p.is_file()) else {
        if program {
            return Err(
                "a grading program's direction is read from leaderboard.csv, and there is none".into(),
            );
        }
        notes.push("medals: no leaderboard.csv in the checkout, so no medals".into());
        return Ok(());
    };
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.starts_with(b"version https://git-lfs") {
        return Err(format!(
            "{} is a Git LFS pointer, not the leaderboard: run `git lfs pull` in the checkout",
            path.display()
        ));
    }
    let board = Leaderboard::read(&path).map_err(|e| e.to_string())?;
    let direction = if board.lower_is_better() {
        Direction::Minimize
    } else {
        Direction::Maximize
    };
    if program {
        metric.direction = direction;
    } else if direction != metric.direction {
        notes.push(format!(
            "medals: the leaderboard ranks its scores {} first, and `{}` is {}d; MLE-bench's \
             rule (the leaderboard's order) decides medals",
            if board.lower_is_better() {
                "lowest"
            } else {
                "highest"
            },
            metric.name,
            crate::events::serde_name(&metric.direction)
        ));
    }
    mle.leaderboard = LEADERBOARD.into();
    mle.leaderboard_blake3 = blake3_hex(&bytes);
    copies.push((path, LEADERBOARD.into()));
    notes.push(format!("medals: a leaderboard of {} teams", board.teams()));
    Ok(())
}

/// The checkout's git revision: HEAD's commit, read from `.git` without running git.
fn revision(repo: &Path) -> String {
    let git = repo.join(".git");
    let Ok(head) = std::fs::read_to_string(git.join("HEAD")) else {
        return String::new();
    };
    let head = head.trim();
    let Some(reference) = head.strip_prefix("ref: ") else {
        return head.to_string();
    };
    if let Ok(r) = std::fs::read_to_string(git.join(reference)) {
        return r.trim().to_string();
    }
    std::fs::read_to_string(git.join("packed-refs"))
        .ok()
        .and_then(|packed| {
            packed
                .lines()
                .find(|l| l.ends_with(reference))
                .and_then(|l| l.split_whitespace().next())
                .map(String::from)
        })
        .unwrap_or_default()
}

/// The domain from the public files and the first rows of `train.csv`
/// (`import::domain`); the predicted columns are never the evidence, nor is the id, unless
/// it is a column of data grade.py keys on (detecting-insults' `Comment`).
fn infer_domain(src: &Sources, train: &Resolved, columns: &Columns) -> (Domain, String) {
    let (header, rows, more) = (&train.header, &train.rows, train.more);
    let id_is_data = src.layout.id.is_some();
    let exclude: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| (**h == columns.id && !id_is_data) || columns.targets.contains(h))
        .map(|(i, _)| i)
        .collect();
    let rows = domain::Rows {
        header,
        rows,
        exclude: &exclude,
    };
    let (domain, mut note) = domain::infer(&rows, &src.public);
    if more && domain != Domain::Image {
        note.push_str(&format!(
            " (read from the first {} rows of train.csv)",
            domain::SAMPLE_ROWS
        ));
    }
    (domain, note)
}

fn hash(path: &Path) -> Result<String, String> {
    crate::store::hash_file_hex(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn blake3_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string()
}

/// The files of `public/` with the columns of each CSV, and the harness's files that the
/// import made from others.
fn data_card(public_files: &[(String, PathBuf)], harness: &Harness) -> Result<String, String> {
    let mut card = String::from("## Files\n");
    for (name, file) in [("train.csv", &harness.train), ("test.csv", &harness.test)] {
        if file.derived.is_some() {
            card.push_str(&format!(
                "\n- `{name}`: columns {} (made by ml2b from `{}`)",
                file.header
                    .iter()
                    .map(|h| format!("`{h}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                file_name(&file.from)
            ));
        }
    }
    let shown = 50;
    for (rel, path) in public_files.iter().take(shown) {
        if rel.ends_with(".csv") {
            let header = csv_header(path).map_err(|e| e.to_string())?;
            card.push_str(&format!(
                "\n- `{rel}`: columns {}",
                header
                    .iter()
                    .map(|h| format!("`{h}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        } else {
            card.push_str(&format!("\n- `{rel}`"));
        }
    }
    if public_files.len() > shown {
        card.push_str(&format!("\n- … and {} more files", public_files.len() - shown));
    }
    card.push('\n');
    Ok(card)
}
