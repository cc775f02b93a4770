//! `manifests/competitions/<id>.toml`: everything ml2b knows about one competition.
//!
//! On-disk format (TOML, unknown keys rejected):
//! ```toml
//! id = "ames-housing"            # lowercase letters, digits and '-'; the file stem
//! title = "Ames Housing Prices"
//! domain = "tabular"             # tabular | text | image
//! task = "regression"            # binary | multiclass | regression | multi-target-regression | multilabel
//! visibility = "public"          # public | private (the paper's leakage-resistant set)
//! translation = "machine"        # machine | human | none: who wrote the 13 translations
//! languages = ["en", "fr"]       # optional: the languages with a task text (default: all 14)
//! [metric]
//! name = "rmsle"                 # a key of the grading registry (`ml2b score --metric`)
//! direction = "minimize"         # minimize | maximize; must agree with the metric's own
//! [columns]
//! id = "id"
//! targets = ["Sale_Price"]
//! weight = "weight"              # only for weighted metrics
//! weight_is_feature = false      # true: the weight stays in public/test.csv (as ML2B's X_val)
//! one_hot = ["EAP", "HPL"]       # log_loss only: private/answers.csv holds these 0/1 class
//!                                # columns (MLE-bench's one-hot answers), not the label
//! [source]                       # the raw data the splits are rebuilt from
//! file = "source/ames.csv"       # relative to data/<id>/
//! blake3 = "…"
//! origin = "…"; licence = "…"; citation = "…"
//! [source.format]                # how the source file is read (holdout rule; all optional)
//! encoding = "utf-8"             # utf-8 (a BOM is skipped) | windows-1251 | windows-1252
//! delimiter = ","                # , | ; | "\t" | |
//! decimal = "."                  # . | , (numbers written 3,5 are rewritten 3.5; not with ",")
//! [split]
//! rule = "holdout"               # holdout: seeded, see competition::split | given: files as imported
//! test_fraction = 0.2
//! seed = 42
//! stratify = false
//! [files.public]                 # name under data/<id>/public/ → blake3
//! [files.private]                # name under data/<id>/private/ → blake3 (only the grader reads these)
//! [characteristics]              # checked by `ml2b prepare --check`
//! rows = 2930; features = 73; classes = 0
//! domain_terms = ["sale price"]; domain_term_density = 0.05
//! [gates]                        # translate-validate
//! min_bleu = 0.35; min_ac1 = 0.8
//! [baseline]                     # the reference solution's score on the private answers
//! score = 0.12; expected = [0.10, 0.16]
//! [baseline.autogluon]           # the algorithmic baseline's (model `autogluon`), optional
//! score = 0.13; expected = [0.11, 0.17]
//! [mle_bench]                    # only for a competition imported from MLE-bench
//! grader = "auc-roc"             # config.yaml's grader.name, as MLE-bench spells it
//! revision = "783b15a…"          # the checkout's git revision ("" when it is not a git checkout)
//! leaderboard = "mle-bench/leaderboard.csv"   # relative to data/<id>/; its blake3 below
//! leaderboard_blake3 = "…"
//! submission = "values"         # program only: what the sample submission's columns hold (values | labels)
//! [mle_bench.program]            # only when ml2b runs MLE-bench's own grader (metric "program")
//! "mle-bench/grader/mlebench/competitions/<id>/grade.py" = "…"   # relative to data/<id>/ → blake3
//! ```
//! A competition graded by MLE-bench's own `grade.py` has `metric.name = "program"`: no
//! metric of the registry, its direction read from the leaderboard, its `[mle_bench]`
//! program and leaderboard required (see `competition::program`).
//! Invariants checked on load, each failure naming the file and the field: the id is the
//! file stem; the metric is known and its direction agrees with the manifest's (an original
//! release's wrong direction is fixed on import, never accepted here); a weight column is
//! given exactly for weighted metrics; multi-target metrics have two or more targets; hashes
//! are 64 hex digits; the split is well-formed; paths stay inside the competition folder.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use serde::{Deserialize, Serialize};

use super::ManifestError;
use crate::metrics::grading::{Direction, InputKind, Metric};

/// One competition manifest.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CompetitionManifest {
    pub id: String,
    pub title: String,
    pub domain: Domain,
    pub task: TaskType,
    pub visibility: Visibility,
    pub translation: Translation,
    /// The languages (ISO codes) with a task text in `data/<id>/tasks/`; default: all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<String>,
    pub metric: MetricSpec,
    pub columns: Columns,
    pub source: Source,
    pub split: Split,
    #[serde(default)]
    pub files: Files,
    pub characteristics: Characteristics,
    #[serde(default)]
    pub gates: Gates,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    /// How an imported competition differs from its original (one line per fix).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub import_notes: Vec<String>,
    /// An MLE-bench competition's grader name, revision, leaderboard and grading program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mle_bench: Option<MleBench>,
}

/// `[mle_bench]`: where an MLE-bench competition came from and how MLE-bench ranks it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MleBench {
    /// `config.yaml`'s `grader.name`, as MLE-bench spells it (`auc-roc`, `MAP@5`, …).
    pub grader: String,
    /// The MLE-bench checkout's git revision; empty when it was not a git checkout.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub revision: String,
    /// The Kaggle leaderboard (a `score` column, best first), relative to `data/<id>/`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub leaderboard: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub leaderboard_blake3: String,
    /// A program-graded competition: what the sample submission's target columns hold
    /// (`values` or `labels`), which is what the solution must return.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub submission: String,
    /// The grading program's files (relative to `data/<id>/`) → blake3, when the metric is
    /// `program`: MLE-bench's own `grade.py` (and the modules it imports), run in the sandbox.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub program: BTreeMap<String, String>,
}

/// The metric name of a competition graded by its own program (`[mle_bench.program]`).
pub const PROGRAM: &str = "program";

/// What the data is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Domain {
    Tabular,
    Text,
    Image,
}

/// What is predicted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskType {
    Binary,
    Multiclass,
    Regression,
    MultiTargetRegression,
    Multilabel,
}

impl TaskType {
    /// Classification tasks are split stratified by default and have classes.
    pub fn is_classification(self) -> bool {
        matches!(self, Self::Binary | Self::Multiclass)
    }
}

/// The paper's public (on Kaggle) or private (leakage-resistant) competitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    Public,
    Private,
}

/// Who translated the task texts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Translation {
    /// Machine translation; never claimed to be human-validated.
    Machine,
    /// Human translation (an imported release that says so).
    Human,
    /// Only the English text exists.
    None,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MetricSpec {
    pub name: String,
    pub direction: Direction,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Columns {
    #[serde(default = "default_id")]
    pub id: String,
    pub targets: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<String>,
    /// The weight column is also a feature: it stays in `public/test.csv` (the original
    /// ML2B release keeps it in `X_val`). It is in `private/answers.csv` either way.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub weight_is_feature: bool,
    /// MLE-bench's one-hot answers (`log_loss` only): `private/answers.csv` holds these
    /// class columns, one 0/1 column per class with exactly one 1 per row, instead of the
    /// label column. The solution still learns `targets[0]` (the label column of
    /// `train.csv`) and predicts a probability per class; grading reads every class
    /// column, also one that no answer row holds, as MLE-bench's log loss does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub one_hot: Vec<String>,
}

/// `columns.one_hot`: a `log_loss` over one label column, two or more distinct classes,
/// none named like the id or the label.
fn check_one_hot(metric: Metric, cols: &Columns) -> Result<(), String> {
    if cols.one_hot.is_empty() {
        return Ok(());
    }
    if metric != Metric::LogLoss || cols.targets.len() != 1 {
        return Err(format!(
            "one-hot answers are for `log_loss` over one label column, not `{metric}` over {}",
            cols.targets.len()
        ));
    }
    let mut seen = vec![cols.id.as_str(), cols.targets[0].as_str()];
    for class in &cols.one_hot {
        if class.is_empty() || seen.contains(&class.as_str()) {
            return Err(format!("class column `{class}` is empty or named twice"));
        }
        seen.push(class);
    }
    if cols.one_hot.len() < 2 {
        return Err("needs two or more class columns".into());
    }
    Ok(())
}

fn default_id() -> String {
    "id".into()
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Relative to `data/<id>/`; empty for `split.rule = "given"`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub file: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub blake3: String,
    pub origin: String,
    pub licence: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub citation: String,
    /// How the source file is read (`[source.format]`); the built files are always UTF-8,
    /// comma-separated, with a decimal point.
    #[serde(default, skip_serializing_if = "SourceFormat::is_default")]
    pub format: SourceFormat,
}

/// `[source.format]`: a source file's text encoding, field delimiter and decimal mark
/// (`competition::source_format` reads and detects them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SourceFormat {
    #[serde(default)]
    pub encoding: Encoding,
    #[serde(default = "default_delimiter")]
    pub delimiter: char,
    #[serde(default = "default_decimal")]
    pub decimal: char,
}

/// The field delimiters a source may use.
pub const DELIMITERS: [char; 4] = [',', ';', '\t', '|'];

impl Default for SourceFormat {
    fn default() -> Self {
        Self {
            encoding: Encoding::Utf8,
            delimiter: ',',
            decimal: '.',
        }
    }
}

impl SourceFormat {
    /// UTF-8, `,`, `.`: the format every built file has.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

fn default_delimiter() -> char {
    ','
}
fn default_decimal() -> char {
    '.'
}

/// A source file's text encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
pub enum Encoding {
    /// UTF-8; a leading byte-order mark is skipped.
    #[default]
    #[serde(rename = "utf-8")]
    Utf8,
    /// The Cyrillic Windows code page.
    #[serde(rename = "windows-1251")]
    Windows1251,
    /// The Western European Windows code page.
    #[serde(rename = "windows-1252")]
    Windows1252,
}

impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Utf8 => "utf-8",
            Self::Windows1251 => "windows-1251",
            Self::Windows1252 => "windows-1252",
        })
    }
}

/// How the source is split into public and private files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SplitRule {
    /// A seeded holdout (`competition::split`).
    Holdout,
    /// The public and private files are given (imported prepared folders).
    Given,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Split {
    pub rule: SplitRule,
    #[serde(default = "default_fraction")]
    pub test_fraction: f64,
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(default)]
    pub stratify: bool,
}

fn default_fraction() -> f64 {
    0.2
}
fn default_seed() -> u64 {
    42
}

/// File name → blake3 hex, per side.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Files {
    #[serde(default)]
    pub public: BTreeMap<String, String>,
    #[serde(default)]
    pub private: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Characteristics {
    #[serde(default)]
    pub rows: u64,
    #[serde(default)]
    pub features: u64,
    #[serde(default)]
    pub classes: u64,
    #[serde(default)]
    pub domain_terms: Vec<String>,
    #[serde(default)]
    pub domain_term_density: f64,
}

/// translate-validate's thresholds (BLEU on the 0–1 scale).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Gates {
    #[serde(default = "default_min_bleu")]
    pub min_bleu: f64,
    #[serde(default = "default_min_ac1")]
    pub min_ac1: f64,
}

fn default_min_bleu() -> f64 {
    0.35
}
fn default_min_ac1() -> f64 {
    0.80
}

impl Default for Gates {
    fn default() -> Self {
        Self {
            min_bleu: default_min_bleu(),
            min_ac1: default_min_ac1(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// The reference solution's score when the manifest was written.
    pub score: f64,
    /// `[low, high]`: where any run of the reference solution must land.
    pub expected: [f64; 2],
    /// The algorithmic baseline (model `autogluon`): its score and range likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autogluon: Option<Recorded>,
}

/// A baseline's recorded score and the range any run of it must land in.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Recorded {
    pub score: f64,
    pub expected: [f64; 2],
}

impl Baseline {
    /// The recorded score and range of a baseline role.
    pub fn recorded(&self, role: BaselineRole) -> Option<Recorded> {
        match role {
            BaselineRole::Reference => Some(Recorded {
                score: self.score,
                expected: self.expected,
            }),
            BaselineRole::Automl => self.autogluon.clone(),
        }
    }
}

/// The two baselines of every competition: the reference solution (the paper's
/// LLM-assisted manual solution) and the algorithmic baseline (AutoGluon).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BaselineRole {
    Reference,
    Automl,
}

impl BaselineRole {
    /// The role a grade event names (`reference`, `automl`).
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Reference, Self::Automl]
            .into_iter()
            .find(|r| super::serde_name(r) == name)
    }
}

impl CompetitionManifest {
    /// Loads and checks a competition manifest.
    pub fn load(path: &Path) -> Result<Self, ManifestError> {
        let manifest: Self = super::load(path)?;
        manifest.check(path)?;
        Ok(manifest)
    }

    /// Parses and checks the text of a competition manifest.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ManifestError> {
        let manifest: Self = super::parse(path, text)?;
        manifest.check(path)?;
        Ok(manifest)
    }

    /// The parsed metric (checked on load); `None` for a competition graded by its own
    /// program ([`PROGRAM`]).
    pub fn metric(&self) -> Option<Metric> {
        self.metric.name.parse().ok()
    }

    /// Whether MLE-bench's own grading program grades this competition.
    pub fn is_program_graded(&self) -> bool {
        self.metric.name == PROGRAM
    }

    /// Every file the grader alone may read, relative to `data/<id>/`.
    pub fn private_paths(&self) -> impl Iterator<Item = String> + '_ {
        self.files.private.keys().map(|name| format!("private/{name}"))
    }

    /// Checks every invariant in the module docs.
    pub fn check(&self, path: &Path) -> Result<(), ManifestError> {
        let bad = |field: &str, message: String| ManifestError::Invalid {
            path: path.to_path_buf(),
            field: field.to_string(),
            message,
        };
        check_id(&self.id).map_err(|m| bad("id", m))?;
        if path
            .file_stem()
            .and_then(|s| s.to_str())
            .is_some_and(|stem| stem != self.id)
        {
            return Err(bad("id", format!("`{}` differs from the file name", self.id)));
        }
        if self.title.trim().is_empty() {
            return Err(bad("title", "is empty".into()));
        }
        self.check_metric().map_err(|(f, m)| bad(f, m))?;
        self.check_source_and_split().map_err(|(f, m)| bad(f, m))?;
        self.check_files().map_err(|(f, m)| bad(f, m))?;
        self.check_mle_bench().map_err(|(f, m)| bad(f, m))?;
        self.check_gates_and_baseline().map_err(|(f, m)| bad(f, m))
    }

    /// A program-graded competition: its program and leaderboard, one id and some targets.
    fn check_program(&self) -> Result<(), (&'static str, String)> {
        let program = self.mle_bench.as_ref().filter(|m| !m.program.is_empty());
        let Some(m) = program else {
            return Err((
                "metric.name",
                "`program` needs the [mle_bench.program] files that grade".into(),
            ));
        };
        if m.leaderboard.is_empty() {
            return Err((
                "mle_bench.leaderboard",
                "a program-graded competition reads its direction from the leaderboard".into(),
            ));
        }
        if !matches!(m.submission.as_str(), "values" | "labels") {
            return Err((
                "mle_bench.submission",
                format!("`{}` is neither `values` nor `labels`", m.submission),
            ));
        }
        if self.columns.id.is_empty() || self.columns.targets.is_empty() {
            return Err(("columns", "needs the id and the target columns".into()));
        }
        if self.columns.weight.is_some() {
            return Err((
                "columns.weight",
                "a grading program takes no weight column".into(),
            ));
        }
        Ok(())
    }

    fn check_mle_bench(&self) -> Result<(), (&'static str, String)> {
        let Some(m) = &self.mle_bench else {
            return Ok(());
        };
        if m.grader.trim().is_empty() {
            return Err(("mle_bench.grader", "is empty".into()));
        }
        if m.leaderboard.is_empty() != m.leaderboard_blake3.is_empty() {
            return Err((
                "mle_bench.leaderboard_blake3",
                "a leaderboard needs its blake3, and a blake3 its leaderboard".into(),
            ));
        }
        if !m.leaderboard.is_empty() {
            check_relative(&m.leaderboard).map_err(|e| ("mle_bench.leaderboard", e))?;
            check_hash(&m.leaderboard_blake3).map_err(|e| ("mle_bench.leaderboard_blake3", e))?;
        }
        for (name, hash) in &m.program {
            check_relative(name).map_err(|e| ("mle_bench.program", format!("`{name}`: {e}")))?;
            check_hash(hash).map_err(|e| ("mle_bench.program", format!("`{name}`: {e}")))?;
        }
        Ok(())
    }

    fn check_metric(&self) -> Result<(), (&'static str, String)> {
        if self.is_program_graded() {
            return self.check_program();
        }
        let metric: Metric = self
            .metric
            .name
            .parse()
            .map_err(|e| ("metric.name", format!("{e}")))?;
        if metric.direction() != self.metric.direction {
            return Err((
                "metric.direction",
                format!(
                    "`{}` is {}d, not {}d",
                    self.metric.name,
                    direction_word(metric.direction()),
                    direction_word(self.metric.direction)
                ),
            ));
        }
        let cols = &self.columns;
        if cols.id.is_empty() {
            return Err(("columns.id", "is empty".into()));
        }
        if cols.targets.is_empty() || cols.targets.iter().any(|t| t.is_empty()) {
            return Err((
                "columns.targets",
                "needs at least one non-empty column name".into(),
            ));
        }
        let mut seen = vec![cols.id.as_str()];
        for t in cols.targets.iter().chain(&cols.weight) {
            if seen.contains(&t.as_str()) {
                return Err(("columns", format!("column `{t}` is named twice")));
            }
            seen.push(t);
        }
        let kind = metric.input_kind();
        match (kind, &cols.weight) {
            (InputKind::WeightedValues, None) => {
                return Err(("columns.weight", format!("`{metric}` needs a weight column")));
            }
            (k, Some(_)) if k != InputKind::WeightedValues => {
                return Err(("columns.weight", format!("`{metric}` takes no weight column")));
            }
            _ => {}
        }
        if !metric.accepts_targets(cols.targets.len()) {
            return Err((
                "columns.targets",
                format!("`{metric}` needs {}", metric.target_count()),
            ));
        }
        check_one_hot(metric, cols).map_err(|m| ("columns.one_hot", m))
    }

    fn check_source_and_split(&self) -> Result<(), (&'static str, String)> {
        if self.source.origin.trim().is_empty() {
            return Err(("source.origin", "is empty: say where the data comes from".into()));
        }
        if self.source.licence.trim().is_empty() {
            return Err((
                "source.licence",
                "is empty: say under which licence the data is shared".into(),
            ));
        }
        match self.split.rule {
            SplitRule::Holdout => {
                check_relative(&self.source.file).map_err(|m| ("source.file", m))?;
                if !self.source.blake3.is_empty() {
                    check_hash(&self.source.blake3).map_err(|m| ("source.blake3", m))?;
                }
                let f = self.split.test_fraction;
                if !(f > 0.0 && f < 1.0) {
                    return Err((
                        "split.test_fraction",
                        format!("{f} is not strictly between 0 and 1"),
                    ));
                }
                if self.split.stratify && !self.task.is_classification() {
                    return Err((
                        "split.stratify",
                        "only a classification task can be stratified".into(),
                    ));
                }
            }
            SplitRule::Given => {
                if !self.source.file.is_empty() {
                    return Err(("source.file", "a given split has no source file to split".into()));
                }
                if !self.source.format.is_default() {
                    return Err(("source.format", "a given split has no source file to read".into()));
                }
            }
        }
        let format = &self.source.format;
        if !DELIMITERS.contains(&format.delimiter) {
            return Err((
                "source.format.delimiter",
                format!("{:?} is not one of , ; \\t |", format.delimiter),
            ));
        }
        match format.decimal {
            '.' => {}
            ',' if format.delimiter != ',' => {}
            ',' => {
                return Err((
                    "source.format.decimal",
                    "a decimal comma needs a delimiter other than a comma".into(),
                ));
            }
            other => return Err(("source.format.decimal", format!("{other:?} is not . or ,"))),
        }
        if self.columns.weight_is_feature && self.columns.weight.is_none() {
            return Err(("columns.weight_is_feature", "there is no weight column".into()));
        }
        Ok(())
    }

    fn check_files(&self) -> Result<(), (&'static str, String)> {
        for (side, files) in [
            ("files.public", &self.files.public),
            ("files.private", &self.files.private),
        ] {
            for (name, hash) in files {
                check_relative(name).map_err(|m| (side, format!("`{name}`: {m}")))?;
                check_hash(hash).map_err(|m| (side, format!("`{name}`: {m}")))?;
            }
        }
        if self.split.rule == SplitRule::Given && self.files.private.is_empty() {
            return Err((
                "files.private",
                "a given split needs its private answers file".into(),
            ));
        }
        Ok(())
    }

    fn check_gates_and_baseline(&self) -> Result<(), (&'static str, String)> {
        if !(0.0..=1.0).contains(&self.gates.min_bleu) {
            return Err(("gates.min_bleu", "BLEU gates are on the 0-1 scale".into()));
        }
        if !(-1.0..=1.0).contains(&self.gates.min_ac1) {
            return Err(("gates.min_ac1", "AC1 lies in [-1, 1]".into()));
        }
        if let Some(b) = &self.baseline {
            let reference = [(
                ("baseline.score", "baseline.expected"),
                Some((b.score, b.expected)),
            )];
            let automl = [(
                ("baseline.autogluon.score", "baseline.autogluon.expected"),
                b.autogluon.as_ref().map(|r| (r.score, r.expected)),
            )];
            for ((score_field, range_field), recorded) in reference.into_iter().chain(automl) {
                let Some((score, [lo, hi])) = recorded else {
                    continue;
                };
                if !score.is_finite() {
                    return Err((score_field, format!("{score} is not a finite score")));
                }
                if lo.is_nan() || hi.is_nan() || lo > hi {
                    return Err((range_field, format!("[{lo}, {hi}] is not a range")));
                }
            }
        }
        Ok(())
    }
}

fn direction_word(d: Direction) -> &'static str {
    match d {
        Direction::Maximize => "maximize",
        Direction::Minimize => "minimize",
    }
}

/// A competition id: lowercase ASCII letters, digits and inner '-' or '_'.
pub fn check_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && !id.starts_with(['-', '_'])
        && !id.ends_with(['-', '_']);
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{id}` is not a competition id (lowercase letters, digits, '-' and '_')"
        ))
    }
}

/// A 64-digit lowercase hex blake3 hash.
pub fn check_hash(hash: &str) -> Result<(), String> {
    if hash.len() == 64
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        Ok(())
    } else {
        Err(format!("`{hash}` is not a blake3 hash (64 lowercase hex digits)"))
    }
}

/// A relative path that stays inside its folder.
fn check_relative(path: &str) -> Result<(), String> {
    let p = Path::new(path);
    if path.is_empty() || !p.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(format!(
            "`{path}` must be a relative path inside the competition folder"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
id = "toy"
title = "Toy"
domain = "tabular"
task = "binary"
visibility = "public"
translation = "machine"
[metric]
name = "roc_auc"
direction = "maximize"
[columns]
targets = ["y"]
[source]
file = "source/toy.csv"
blake3 = "0000000000000000000000000000000000000000000000000000000000000000"
origin = "made up"
licence = "CC0-1.0"
[split]
rule = "holdout"
stratify = true
[characteristics]
rows = 10
"#;

    fn parse(text: &str) -> Result<CompetitionManifest, ManifestError> {
        CompetitionManifest::parse(Path::new("manifests/competitions/toy.toml"), text)
    }

    #[test]
    fn a_good_manifest_parses_with_defaults() {
        let m = parse(GOOD).unwrap();
        assert_eq!(m.columns.id, "id");
        assert_eq!(m.split.seed, 42);
        assert_eq!(m.gates.min_bleu, 0.35);
        assert_eq!(m.metric(), Some(Metric::RocAuc));
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let cases = [
            (GOOD.replace("name = \"roc_auc\"\n", ""), "missing field `name`"),
            (
                GOOD.replace("\"maximize\"", "\"upward\""),
                "unknown variant `upward`",
            ),
            (GOOD.replace("\"maximize\"", "\"minimize\""), "metric.direction"),
            (
                GOOD.replace("roc_auc", "roc_auk"),
                "metric.name: unknown metric `roc_auk`",
            ),
            (GOOD.replace("0000000000", "zz"), "source.blake3"),
            (
                GOOD.replace("title = \"Toy\"", "title = \"Toy\"\ncolour = 1"),
                "unknown field `colour`",
            ),
            (
                GOOD.replace("\"source/toy.csv\"", "\"../toy.csv\""),
                "source.file",
            ),
            (
                GOOD.replace("id = \"toy\"", "id = \"other\""),
                "differs from the file name",
            ),
            (GOOD.replace("rows = 10", "rows = \"ten\""), "invalid type"),
        ];
        for (text, want) in cases {
            let err = parse(&text).unwrap_err().to_string();
            assert!(err.starts_with("manifests/competitions/toy.toml"), "{err}");
            assert!(err.contains(want), "{err} lacks {want}");
        }
    }

    #[test]
    fn a_baseline_score_that_is_not_finite_is_named_as_the_score() {
        let baseline = |table: &str| GOOD.replace("[split]", &format!("{table}\n[split]"));
        let cases = [
            (
                "[baseline]\nscore = nan\nexpected = [0.5, 0.9]",
                "baseline.score: NaN is not a finite score",
            ),
            (
                "[baseline]\nscore = 0.7\nexpected = [0.5, 0.9]\n[baseline.autogluon]\nscore = inf\nexpected = [0.5, 0.9]",
                "baseline.autogluon.score: inf is not a finite score",
            ),
            (
                "[baseline]\nscore = 0.7\nexpected = [0.9, 0.5]",
                "baseline.expected: [0.9, 0.5] is not a range",
            ),
            (
                "[baseline]\nscore = 0.7\nexpected = [0.5, 0.9]\n[baseline.autogluon]\nscore = 0.7\nexpected = [nan, 0.9]",
                "baseline.autogluon.expected: [NaN, 0.9] is not a range",
            ),
        ];
        for (table, want) in cases {
            let err = parse(&baseline(table)).unwrap_err().to_string();
            assert!(err.contains(want), "{err} lacks {want}");
        }
        parse(&baseline("[baseline]\nscore = 0.7\nexpected = [0.5, 0.9]")).unwrap();
    }

    #[test]
    fn weights_and_targets_must_fit_the_metric() {
        let wmae = GOOD
            .replace("roc_auc", "wmae")
            .replace("\"maximize\"", "\"minimize\"")
            .replace("binary", "regression")
            .replace("stratify = true", "");
        assert!(parse(&wmae).unwrap_err().to_string().contains("columns.weight"));
        let multi = GOOD
            .replace("roc_auc", "rmse_multi")
            .replace("\"maximize\"", "\"minimize\"");
        assert!(parse(&multi).unwrap_err().to_string().contains("more than one"));
        let feature = GOOD.replace("targets = [\"y\"]", "targets = [\"y\"]\nweight_is_feature = true");
        assert!(
            parse(&feature)
                .unwrap_err()
                .to_string()
                .contains("columns.weight_is_feature: there is no weight column")
        );
    }

    #[test]
    fn one_hot_answers_are_for_a_log_loss_over_one_label() {
        let log_loss = GOOD
            .replace("roc_auc", "log_loss")
            .replace("\"maximize\"", "\"minimize\"");
        let with = |manifest: &str, classes: &str| {
            manifest.replace(
                "targets = [\"y\"]",
                &format!("targets = [\"y\"]\none_hot = {classes}"),
            )
        };
        let m = parse(&with(&log_loss, r#"["no", "yes"]"#)).unwrap();
        assert_eq!(m.columns.one_hot, ["no", "yes"]);
        assert!(toml::to_string(&m).unwrap().contains("one_hot = ["));
        let refused = |manifest: &str| parse(manifest).unwrap_err().to_string();
        assert!(
            refused(&with(GOOD, r#"["no", "yes"]"#))
                .contains("columns.one_hot: one-hot answers are for `log_loss`")
        );
        assert!(refused(&with(&log_loss, r#"["no", "no"]"#)).contains("named twice"));
        assert!(refused(&with(&log_loss, r#"["y", "no"]"#)).contains("named twice"));
        assert!(refused(&with(&log_loss, r#"["no"]"#)).contains("two or more class columns"));
        assert!(
            !toml::to_string(&parse(&log_loss).unwrap())
                .unwrap()
                .contains("one_hot")
        );
    }

    #[test]
    fn a_source_format_is_read_checked_and_left_out_when_default() {
        let with = |format: &str| {
            GOOD.replace(
                "licence = \"CC0-1.0\"\n",
                &format!("licence = \"CC0-1.0\"\n{format}"),
            )
        };
        let m = parse(&with(
            "[source.format]\nencoding = \"windows-1251\"\ndelimiter = \";\"\ndecimal = \",\"\n",
        ))
        .unwrap();
        assert_eq!(
            m.source.format,
            SourceFormat {
                encoding: Encoding::Windows1251,
                delimiter: ';',
                decimal: ',',
            }
        );
        let text = toml::to_string(&m).unwrap();
        assert!(
            text.contains(
                "[source.format]\nencoding = \"windows-1251\"\ndelimiter = \";\"\ndecimal = \",\"\n"
            ),
            "{text}"
        );
        let tab = parse(&with("[source.format]\ndelimiter = \"\\t\"\n")).unwrap();
        assert_eq!(
            (tab.source.format.encoding, tab.source.format.delimiter),
            (Encoding::Utf8, '\t')
        );
        assert!(!toml::to_string(&parse(GOOD).unwrap()).unwrap().contains("format"));
        for (format, field) in [
            ("[source.format]\ndelimiter = \":\"\n", "source.format.delimiter"),
            ("[source.format]\ndecimal = \",\"\n", "source.format.decimal"),
            (
                "[source.format]\nencoding = \"latin-9\"\n",
                "unknown variant `latin-9`",
            ),
        ] {
            let err = parse(&with(format)).unwrap_err().to_string();
            assert!(err.contains(field), "{format}: {err}");
        }
    }
}
