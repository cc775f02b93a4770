//! Import of the original ML2B release (`../shared/reference/ML2B.md` §1.2–1.5).
//!
//! Layout read (DIR may be the release root or its `competitions/` folder):
//! `competitions/competitions.json` (id → config), `competitions/tasks/<Language>.csv`
//! (columns `comp_name`, `competition`, `description`, `data_card`, `domain`, `metric`; the
//! file stem is a language name or one of the release's spellings `Arab`, `Ukranian`,
//! `Belarus`) and `competitions/data/<id>/<train file>`.
//!
//! Each supported entry (default grader or `multitarget`, csv split, default loader, one
//! training file) becomes a holdout competition: its training file is the source, split
//! 80/20 with seed 42 like the original's `train_test_split` (the rows differ: ml2b's split
//! rule is its own, see `competition::split`), stratified when `stratified_split` is set.
//! Known quirks are fixed explicitly and recorded in `import_notes`:
//! * a direction that contradicts the metric (thapar's R² marked `minimize`) follows the
//!   metric;
//! * `mean_average_precision` (whose `apk` ignored k and scored only the first hit) becomes
//!   Kaggle's `map@k` with the entry's `map_k` (default 3); `map_ml2b` reproduces the old one;
//! * `wmae` (the original's `mean(w·|y−ŷ|)`) becomes the standard `Σw|y−ŷ|/Σw`; `wmae_ml2b`
//!   reproduces the old one.
//!
//! Entries needing a custom loader or grader (images, multi-file recommenders) are refused
//! with their reason; `--only` selects the importable ones.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Draft, ImportError, csv_header, task_type};
use crate::manifest::competition::{
    Characteristics, Columns, Domain, Gates, MetricSpec, Source, Split, SplitRule, Translation, Visibility,
};
use crate::manifest::{CompetitionManifest, Languages, TaskText};
use crate::metrics::grading::Metric;

/// Kaggle slugs in the task CSVs that name an ML2B id (the release's `competition_map`).
const SLUGS: [(&str, &str); 7] = [
    ("widsdatathon2020", "wids-datathon-2020"),
    ("ieor242hw4", "ieor-242-nyc-taxi"),
    ("ventilator-pressure-prediction", "google-brain-ventilator"),
    ("prml-data-contest-nov-2020", "biker-tour-recommendation"),
    ("2021-ml-w1p1", "ai-cancer-predictions"),
    ("made-hw-2", "movie-genre-classification"),
    ("109-1-ntut-dl-app-hw1", "emnist-handwritten-chars"),
];

/// The competitions the release's commit messages call private.
const PRIVATE: [&str; 4] = [
    "itmo-flat-price-prediction-2024",
    "car-becho-paisa-paao",
    "cs-506-fall-2025-technical-midterm",
    "ift-6390-ift-3395-beer-quality-prediction",
];

/// Reads the release under `dir` into drafts (all, or those in `only`).
pub fn read(
    dir: &Path,
    languages: &Languages,
    only: &[String],
    licence: &str,
) -> Result<Vec<Draft>, ImportError> {
    let comps = if dir.join("competitions/competitions.json").exists() {
        dir.join("competitions")
    } else {
        dir.to_path_buf()
    };
    let json_path = comps.join("competitions.json");
    let text = std::fs::read_to_string(&json_path).map_err(|source| ImportError::Read {
        path: json_path.clone(),
        source,
    })?;
    let configs: BTreeMap<String, Value> =
        serde_json::from_str(&text).map_err(|e| ImportError::invalid(&json_path, e.to_string()))?;
    for id in only {
        if !configs.contains_key(id) {
            return Err(ImportError::invalid(
                &json_path,
                format!("has no competition `{id}`"),
            ));
        }
    }
    let texts = read_tasks(&comps.join("tasks"), languages)?;
    let mut drafts = Vec::new();
    let mut problems = Vec::new();
    for (id, config) in &configs {
        if !only.is_empty() && !only.contains(id) {
            continue;
        }
        let entry = Entry {
            id,
            config,
            json: &json_path,
            data: comps.join("data").join(id),
        };
        match entry.draft(texts.get(id.as_str()), licence) {
            Ok(d) => drafts.push(d),
            Err(e) => problems.push(format!("{id}: {e}")),
        }
    }
    if !problems.is_empty() {
        return Err(ImportError::Several(problems));
    }
    Ok(drafts)
}

/// Task texts by competition id: (language code, text) in language-file order.
fn read_tasks(
    dir: &Path,
    languages: &Languages,
) -> Result<BTreeMap<String, Vec<(String, TaskText)>>, ImportError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ImportError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    files.sort();
    let mut by_id: BTreeMap<String, Vec<(String, TaskText)>> = BTreeMap::new();
    for path in files {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let lang = languages.resolve(stem).ok_or_else(|| {
            ImportError::invalid(&path, format!("`{stem}` is not a language of languages.toml"))
        })?;
        for (id, text) in read_task_file(&path)? {
            by_id.entry(id).or_default().push((lang.code.clone(), text));
        }
    }
    let rank = |code: &str| languages.all().iter().position(|l| l.code == code);
    for texts in by_id.values_mut() {
        texts.sort_by_key(|(code, _)| rank(code));
    }
    Ok(by_id)
}

fn read_task_file(path: &Path) -> Result<Vec<(String, TaskText)>, ImportError> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| ImportError::invalid(path, e.to_string()))?;
    let header = reader
        .headers()
        .map_err(|e| ImportError::invalid(path, e.to_string()))?
        .clone();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| ImportError::invalid(path, format!("has no column `{name}`")))
    };
    let [name, comp, desc, card, domain, metric] = [
        "comp_name",
        "competition",
        "description",
        "data_card",
        "domain",
        "metric",
    ]
    .map(col);
    let (name, comp, desc, card, domain, metric) = (name?, comp?, desc?, card?, domain?, metric?);
    let mut out = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let line = i + 2;
        let record = record.map_err(|e| ImportError::invalid(path, e.to_string()))?;
        let key = record[comp].trim();
        let id = SLUGS
            .iter()
            .find(|(slug, _)| *slug == key)
            .map_or(key, |(_, id)| id)
            .to_string();
        let text = TaskText {
            title: record[name].trim().to_string(),
            domain: record[domain].trim().to_string(),
            metric: record[metric].trim().to_string(),
            description: record[desc].trim().to_string(),
            data_card: record[card].trim().to_string(),
        };
        if let Some((field, _)) = text.fields().into_iter().find(|(_, v)| v.is_empty()) {
            return Err(ImportError::invalid(
                path,
                format!("line {line} (`{id}`): `{field}` is empty"),
            ));
        }
        out.push((id, text));
    }
    Ok(out)
}

struct Entry<'a> {
    id: &'a str,
    config: &'a Value,
    json: &'a Path,
    data: PathBuf,
}

impl Entry<'_> {
    fn str(&self, key: &str) -> Option<&str> {
        self.config.get(key).and_then(Value::as_str)
    }

    fn draft(&self, texts: Option<&Vec<(String, TaskText)>>, licence: &str) -> Result<Draft, String> {
        self.check_supported()?;
        let mut notes = Vec::new();
        let original = self.str("metric").ok_or("no `metric`")?;
        let (metric, note) = map_metric(original, self.config.get("map_k").and_then(Value::as_u64))?;
        notes.extend(note);
        let direction = match self.str("direction") {
            Some("minimize") => crate::metrics::grading::Direction::Minimize,
            Some("maximize") => crate::metrics::grading::Direction::Maximize,
            other => return Err(format!("`direction` is {other:?}, not minimize or maximize")),
        };
        if direction != metric.direction() {
            notes.push(format!(
                "direction: `{original}` is {}d; the original release said `{}`, contradicting the metric",
                word(metric.direction()),
                word(direction)
            ));
        }
        let targets = match self.config.get("target_col") {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(a)) => a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
            _ => return Err("no `target_col`".into()),
        };
        let weight = self.str("weight_col").map(str::to_string);
        let train_name = self.train_file();
        let train = self.data.join(&train_name);
        if !train.is_file() {
            return Err(format!("its training file {} is missing", train.display()));
        }
        let header = csv_header(&train).map_err(|e| e.to_string())?;
        let id_col = ["id", "ml2b_id", "_ml2b_id"]
            .into_iter()
            .find(|c| !header.iter().any(|h| h == c))
            .expect("one of three names is free")
            .to_string();
        if id_col != "id" {
            notes.push(format!(
                "columns: the data has its own `id` column, so ml2b's row id is `{id_col}`"
            ));
        }
        let task = task_type(&metric, &train, &targets[0]).map_err(|e| e.to_string())?;
        let texts = texts.cloned().unwrap_or_default();
        if !texts.iter().any(|(c, _)| c == "en") {
            return Err("no English task text in tasks/English.csv".into());
        }
        let title = texts
            .iter()
            .find(|(c, _)| c == "en")
            .map(|(_, t)| t.title.clone())
            .unwrap_or_default();
        let stratify = self
            .config
            .get("stratified_split")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let manifest = CompetitionManifest {
            id: self.id.to_string(),
            title,
            domain: Domain::Tabular,
            task,
            visibility: if PRIVATE.contains(&self.id) {
                Visibility::Private
            } else {
                Visibility::Public
            },
            translation: Translation::Machine,
            languages: texts.iter().map(|(c, _)| c.clone()).collect(),
            metric: MetricSpec {
                name: metric.to_string(),
                direction: metric.direction(),
            },
            columns: Columns {
                id: id_col,
                targets,
                weight,
            },
            source: Source {
                file: format!("source/{train_name}"),
                blake3: String::new(),
                origin: format!(
                    "the original ML2B release: {}",
                    self.data.join(&train_name).display()
                ),
                licence: licence.to_string(),
                citation: String::new(),
            },
            split: Split {
                rule: SplitRule::Holdout,
                test_fraction: 0.2,
                seed: 42,
                stratify: stratify && task.is_classification(),
            },
            files: Default::default(),
            characteristics: Characteristics::default(),
            gates: Gates::default(),
            baseline: None,
            import_notes: notes,
            mle_bench: None,
        };
        manifest
            .check(&self.json.with_file_name(format!("{}.toml", self.id)))
            .map_err(|e| e.to_string())?;
        Ok(Draft {
            manifest,
            texts,
            copies: vec![(train, format!("source/{train_name}"))],
            generated: Vec::new(),
        })
    }

    fn check_supported(&self) -> Result<(), String> {
        for (key, default, ok) in [
            ("grader", "default", &["default", "multitarget"][..]),
            ("split_strategy", "csv", &["csv", "default"][..]),
            ("load_strategy", "default", &["default"][..]),
        ] {
            let value = self.str(key).unwrap_or(default);
            if !ok.contains(&value) {
                return Err(format!(
                    "{key} `{value}` needs its own loader or grader, which ml2b does not import"
                ));
            }
        }
        if let Some(cols) = self.config.get("exclude_cols").and_then(Value::as_array) {
            let weight = self.str("weight_col");
            if cols.iter().any(|c| c.as_str() != weight) {
                return Err("`exclude_cols` other than the weight column are not supported".into());
            }
        }
        Ok(())
    }

    fn train_file(&self) -> String {
        self.config
            .pointer("/file_mapping/train/filename")
            .and_then(Value::as_str)
            .unwrap_or("train.csv")
            .to_string()
    }
}

/// The ml2b metric for an original key, and the note when it changes the computation.
fn map_metric(original: &str, map_k: Option<u64>) -> Result<(Metric, Option<String>), String> {
    match original {
        "mean_average_precision" => {
            let k = map_k.unwrap_or(3);
            let metric: Metric = format!("map@{k}").parse().map_err(|e| format!("{e}"))?;
            Ok((
                metric,
                Some(format!(
                    "metric: `mean_average_precision` is graded as Kaggle's map@{k}; the original `apk` ignored k and scored only the first hit (`map_ml2b` reproduces it)"
                )),
            ))
        }
        "wmae" => Ok((
            Metric::Wmae,
            Some("metric: `wmae` is the standard sum(w*|y-p|)/sum(w); the original computed mean(w*|y-p|) (`wmae_ml2b` reproduces it)".into()),
        )),
        other => other.parse().map(|m| (m, None)).map_err(|e| format!("{e}")),
    }
}

fn word(d: crate::metrics::grading::Direction) -> &'static str {
    match d {
        crate::metrics::grading::Direction::Minimize => "minimize",
        crate::metrics::grading::Direction::Maximize => "maximize",
    }
}
