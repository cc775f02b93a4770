//! Import of the original ML2B release (`../shared/reference/ML2B.md` §1.2–1.5).
//!
//! Layout read (DIR may be the release root or its `competitions/` folder):
//! `competitions/competitions.json` (id → config; keys starting with `_` are skipped, as the
//! original does), `competitions/tasks/<Language>.csv` (columns `comp_name`, `competition`,
//! `description`, `data_card`, `domain`, `metric`, and `comp-id` once the original's
//! `load_data.py` has run; the file stem is a language name or one of the release's
//! spellings `Arab`, `Ukranian`, `Belarus`) and `competitions/data/<id>/<train file>`.
//!
//! **Task texts.** A row belongs to the competition the original's loader would give it:
//! its `comp-id` when the file has that column and the row a value there; otherwise its
//! `competition` mapped by the original's `competition_map` (all 16 Kaggle slugs of
//! `load_data.py`, e.g. `2020-10-29` → `financial-engineering-1`), or taken as it is (an
//! ML2B id). Rows naming no competition of `competitions.json` are ignored, as there. The
//! first row per language is used (the original stops at the first match); a slug resolved
//! to an id, another row for the same competition, and an empty `data_card` (accepted, as
//! the original shows a blank data card) are recorded in `import_notes`. Any other empty
//! field leaves that language out (recorded), or in the English text fails that competition
//! only, never the others (so `--only` imports the rest). The task CSVs are read like a
//! source file (encoding and delimiter detected, see below).
//!
//! **Data.** Each supported entry (default grader or `multitarget`, csv split, default
//! loader, one training file) becomes a holdout competition: its training file is the
//! source, split 80/20 with seed 42 like the original's `train_test_split` (the rows
//! differ: ml2b's split rule is its own, see `competition::split`), stratified when
//! `stratified_split` is set. The training file is copied as it is and read the way the
//! original's `read_csv_smart` reads it ([`crate::competition::source_format`]: UTF-8 or a
//! detected Windows code page, `,` then `;` then tab or `|`, and decimal commas made points);
//! a format other than UTF-8/`,`/`.` is recorded in `[source.format]` and `import_notes`,
//! and the prepared public/private files are UTF-8, comma-separated, decimal-point CSVs.
//!
//! Known quirks are fixed explicitly and recorded in `import_notes`:
//! * a direction that contradicts the metric (thapar's R² marked `minimize`) follows the
//!   metric;
//! * `mean_average_precision` (whose `apk` ignored k and scored only the first hit) becomes
//!   Kaggle's `map@k` with the entry's `map_k` (default 3); `map_ml2b` reproduces the old one;
//! * `wmae` (the original's `mean(w·|y−ŷ|)`) becomes the standard `Σw|y−ŷ|/Σw`; `wmae_ml2b`
//!   reproduces the old one.
//!
//! Also recorded: the weight column of a weighted metric stays a feature in `public/test.csv`
//! (`columns.weight_is_feature`), because the original keeps it in `X_val` (its splitter
//! drops only the target); and `domain`, inferred from the data with the evidence
//! (`import::domain`: image files, else a free-text feature column, else tabular).
//!
//! Entries needing a custom loader or grader (images, multi-file recommenders) are refused
//! with their reason, and the others imported (`import::install`); `--only` selects. Errors
//! name the release's own files (never the staging folder an import removes).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Draft, Found, ImportError, check_draft, domain, task_type_with};
use crate::competition::prepare::{Table, decompressed};
use crate::competition::source_format::{self, Detected};
use crate::manifest::competition::{
    Characteristics, Columns, Domain, Encoding, Gates, MetricSpec, Source, Split, SplitRule, Translation,
    Visibility,
};
use crate::manifest::{CompetitionManifest, Languages, TaskText};
use crate::metrics::grading::Metric;

/// The original's `competition_map` (`competitions/load_data.py`): Kaggle slugs in the task
/// CSVs' `competition` column → ML2B ids, all 16 entries.
const COMPETITION_MAP: [(&str, &str); 16] = [
    ("widsdatathon2020", "wids-datathon-2020"),
    ("ieor242hw4", "ieor-242-nyc-taxi"),
    ("stat441datachallenge1", "uwaterloo-stat441-jewelry"),
    ("2020-10-29", "financial-engineering-1"),
    ("shaastra-wells-fargo-hackathon", "she-hacks-2021"),
    ("2021-ml-w1p1", "ai-cancer-predictions"),
    ("classification-with-non-deep-classifiers", "syde-522-winter-2021"),
    ("ventilator-pressure-prediction", "google-brain-ventilator"),
    ("porto-seguro-data-challenge", "porto-seguro-challenge"),
    ("playground-series-s3e2", "stroke-prediction-s3e2"),
    ("109-1-ntut-dl-app-hw1", "emnist-handwritten-chars"),
    ("made-hw-2", "movie-genre-classification"),
    ("prml-data-contest-nov-2020", "biker-tour-recommendation"),
    ("2020-11-05", "financial-engineering-2"),
    ("mlolympiadbd2025", "ml-olympiad-bd-2025"),
    ("2020-11-20", "financial-engineering-3"),
];

/// The competitions the release's commit messages call private.
const PRIVATE: [&str; 4] = [
    "itmo-flat-price-prediction-2024",
    "car-becho-paisa-paao",
    "cs-506-fall-2025-technical-midterm",
    "ift-6390-ift-3395-beer-quality-prediction",
];

/// The columns a task CSV must have.
const TASK_COLUMNS: [&str; 6] = [
    "comp_name",
    "competition",
    "description",
    "data_card",
    "domain",
    "metric",
];

/// Reads the release under `dir` (all, or those in `only`): a draft of each competition that
/// can be imported, the reason of each that cannot. An error is the release itself (its
/// `competitions.json`, a task CSV) or the selection being wrong.
pub fn read(dir: &Path, languages: &Languages, only: &[String], licence: &str) -> Result<Found, ImportError> {
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
    let mut configs: BTreeMap<String, Value> =
        serde_json::from_str(&text).map_err(|e| ImportError::invalid(&json_path, e.to_string()))?;
    configs.retain(|id, _| !id.starts_with('_'));
    for id in only {
        if !configs.contains_key(id) {
            return Err(ImportError::invalid(
                &json_path,
                format!("has no competition `{id}`"),
            ));
        }
    }
    let tasks = Tasks::read(&comps, languages, &configs)?;
    let selected = configs
        .iter()
        .filter(|(id, _)| only.is_empty() || only.contains(id));
    Ok(Found::from_results(selected.map(|(id, config)| {
        let entry = Entry {
            id,
            config,
            json: &json_path,
            data: comps.join("data").join(id),
        };
        (id.clone(), entry.draft(&tasks, licence))
    })))
}

/// How a task row was matched to its competition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Via {
    /// `competition` (or `comp-id`) holds the id itself.
    Id,
    /// The `comp-id` column names it; `competition` holds a slug.
    CompId,
    /// The original's `competition_map` maps the slug in `competition`.
    Map,
}

/// One task CSV row that names a competition of `competitions.json`.
struct TaskRow {
    /// The task CSV, relative to the release's `competitions/` folder (`tasks/Arab.csv`).
    file: String,
    line: u64,
    code: String,
    /// Its `competition` (a slug unless `via` is [`Via::Id`]).
    key: String,
    via: Via,
    text: TaskText,
}

/// A competition's task texts: (language code, text), in language order.
type Texts = Vec<(String, TaskText)>;

/// The task texts of the release.
struct Tasks {
    by_id: BTreeMap<String, Vec<TaskRow>>,
    /// The English task CSV (relative, like [`TaskRow::file`]), if any.
    english: Option<String>,
    /// The ids the English file's rows resolve to that name no competition of
    /// `competitions.json`.
    english_unmatched: Vec<String>,
}

impl Tasks {
    fn read(
        comps: &Path,
        languages: &Languages,
        configs: &BTreeMap<String, Value>,
    ) -> Result<Self, ImportError> {
        let dir = comps.join("tasks");
        let entries = std::fs::read_dir(&dir).map_err(|source| ImportError::Read {
            path: dir.clone(),
            source,
        })?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "csv"))
            .collect();
        files.sort();
        let mut tasks = Self {
            by_id: BTreeMap::new(),
            english: None,
            english_unmatched: Vec::new(),
        };
        for path in files {
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            let lang = languages.resolve(stem).ok_or_else(|| {
                ImportError::invalid(&path, format!("`{stem}` is not a language of languages.toml"))
            })?;
            let name = format!("tasks/{}", path.file_name().unwrap_or_default().to_string_lossy());
            if lang.code == "en" && tasks.english.is_none() {
                tasks.english = Some(name.clone());
            }
            for (id, row) in read_task_file(&path, &name, &lang.code)? {
                if configs.contains_key(&id) {
                    tasks.by_id.entry(id).or_default().push(row);
                } else if lang.code == "en" {
                    tasks.english_unmatched.push(id);
                }
            }
        }
        let rank = |code: &str| languages.all().iter().position(|l| l.code == code);
        for rows in tasks.by_id.values_mut() {
            // Stable: within a language, file order then row order.
            rows.sort_by_key(|r| rank(&r.code));
        }
        Ok(tasks)
    }

    /// The competition's texts (first row per language, in language order) and the notes
    /// they need, or why they cannot be used.
    fn texts(&self, id: &str) -> Result<(Texts, Vec<String>), String> {
        let rows = self.by_id.get(id).map_or(&[][..], Vec::as_slice);
        let mut texts: Texts = Vec::new();
        let mut notes = Vec::new();
        let mut empty_cards = Vec::new();
        let mut keys: BTreeMap<(Via, &str), usize> = BTreeMap::new();
        for row in rows {
            if texts.iter().any(|(code, _)| *code == row.code) {
                notes.push(format!(
                    "task texts: {} line {} is another row for this competition; the first is used, as the original does",
                    row.file, row.line
                ));
                continue;
            }
            if let Some((field, _)) = row
                .text
                .fields()
                .into_iter()
                .find(|(f, v)| *f != "data_card" && v.is_empty())
            {
                let what = format!(
                    "{} line {}: `{}` is empty",
                    row.file,
                    row.line,
                    task_column(field)
                );
                if row.code == "en" {
                    return Err(what);
                }
                notes.push(format!("task texts: {what}, so this language is left out"));
                continue;
            }
            if row.text.data_card.is_empty() {
                empty_cards.push(row.file.as_str());
            }
            if row.via != Via::Id {
                *keys.entry((row.via, row.key.as_str())).or_default() += 1;
            }
            texts.push((row.code.clone(), row.text.clone()));
        }
        if !texts.iter().any(|(c, _)| c == "en") {
            let Some(english) = &self.english else {
                return Err("no English task text: there is no tasks/English.csv".into());
            };
            let mut message = format!(
                "no English task text: no row of {english} resolves to it (by its `comp-id`, the original's competition_map, or the id itself)"
            );
            if !self.english_unmatched.is_empty() {
                let shown: Vec<String> = self
                    .english_unmatched
                    .iter()
                    .take(8)
                    .map(|k| format!("`{k}`"))
                    .collect();
                message.push_str(&format!(
                    "; rows there that name no competition of competitions.json: {}{}",
                    shown.join(", "),
                    if self.english_unmatched.len() > shown.len() {
                        ", …"
                    } else {
                        ""
                    }
                ));
            }
            return Err(message);
        }
        for ((via, key), files) in keys {
            let how = match via {
                Via::CompId => "by their `comp-id` column",
                _ => "by the original's competition_map (load_data.py)",
            };
            let files = match files {
                1 => "1 task CSV names".to_string(),
                n => format!("{n} task CSVs name"),
            };
            notes.insert(
                0,
                format!("task texts: {files} it `{key}`, resolved to this id {how}"),
            );
        }
        if !empty_cards.is_empty() {
            notes.push(format!(
                "task texts: the data card is empty in {} (accepted, as the original does: the prompt's data card is blank)",
                empty_cards.join(", ")
            ));
        }
        Ok((texts, notes))
    }
}

/// The task CSV column a [`TaskText`] field comes from.
fn task_column(field: &str) -> &str {
    match field {
        "title" => "comp_name",
        other => other,
    }
}

/// The rows of one task CSV as (resolved id, row).
fn read_task_file(path: &Path, name: &str, code: &str) -> Result<Vec<(String, TaskRow)>, ImportError> {
    let bytes = std::fs::read(path).map_err(|source| ImportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let required: Vec<String> = TASK_COLUMNS.iter().map(|c| c.to_string()).collect();
    let detected = source_format::detect(&bytes, &required).map_err(|m| ImportError::invalid(path, m))?;
    let table = Table::parse_source(path, &bytes, &detected.format)
        .map_err(|e| ImportError::invalid(path, e.to_string()))?;
    let col = |name: &str| {
        table
            .header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| ImportError::invalid(path, format!("has no column `{name}`")))
    };
    let [title, comp, desc, card, domain, metric] = TASK_COLUMNS.map(col);
    let (title, comp, desc, card, domain, metric) = (title?, comp?, desc?, card?, domain?, metric?);
    let comp_id = col("comp-id").ok();
    let mut out = Vec::new();
    for (i, record) in table.rows.iter().enumerate() {
        let competition = record[comp].trim();
        let (id, via) = resolve(comp_id.map(|c| record[c].trim()), competition);
        let row = TaskRow {
            file: name.to_string(),
            line: record.position().map_or(i as u64 + 2, |p| p.line()),
            code: code.to_string(),
            key: competition.to_string(),
            via,
            text: TaskText {
                title: record[title].trim().to_string(),
                domain: record[domain].trim().to_string(),
                metric: record[metric].trim().to_string(),
                description: record[desc].trim().to_string(),
                data_card: record[card].trim().to_string(),
            },
        };
        out.push((id, row));
    }
    Ok(out)
}

/// The id a task row names, as the original's loader finds it (see the module docs).
fn resolve(comp_id: Option<&str>, competition: &str) -> (String, Via) {
    if let Some(id) = comp_id.filter(|c| !c.is_empty()) {
        let via = if id == competition { Via::Id } else { Via::CompId };
        return (id.to_string(), via);
    }
    match COMPETITION_MAP.iter().find(|(slug, _)| *slug == competition) {
        Some((_, id)) => (id.to_string(), Via::Map),
        None => (competition.to_string(), Via::Id),
    }
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

    fn draft(&self, tasks: &Tasks, licence: &str) -> Result<Draft, String> {
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
        let (table, detected) = read_source(&train, &targets, weight.as_deref())?;
        notes.extend(format_note(&detected));
        let id_col = ["id", "ml2b_id", "_ml2b_id"]
            .into_iter()
            .find(|c| !table.header.iter().any(|h| h == c))
            .expect("one of three names is free")
            .to_string();
        if id_col != "id" {
            notes.push(format!(
                "columns: the data has its own `id` column, so ml2b's row id is `{id_col}`"
            ));
        }
        let target = table.column(&targets[0]).map_err(|e| e.to_string())?;
        let task = task_type_with(&metric, || {
            Ok::<_, String>(
                table
                    .rows
                    .iter()
                    .map(|r| &r[target])
                    .collect::<HashSet<_>>()
                    .len(),
            )
        })?;
        if let Some(w) = &weight {
            notes.push(format!(
                "columns: the weight `{w}` stays a feature in public/test.csv, as the original keeps it in X_val (its splitter drops only the target); the grader takes it from private/answers.csv"
            ));
        }
        let answer_cols: Vec<usize> = targets
            .iter()
            .chain(&weight)
            .filter_map(|c| table.header.iter().position(|h| h == c))
            .collect();
        let rows = domain::Rows {
            header: &table.header,
            rows: &table.rows,
            exclude: &answer_cols,
        };
        let (domain, mut domain_note) = domain::infer(&rows, &self.data);
        if domain == Domain::Image {
            domain_note
                .push_str("; solutions get only the training CSV, as from the original's default loader");
        }
        notes.push(domain_note);
        let (texts, text_notes) = tasks.texts(self.id)?;
        notes.extend(text_notes);
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
            domain,
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
                weight_is_feature: weight.is_some(),
                weight,
                one_hot: Vec::new(),
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
                format: detected.format,
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
        check_draft(&manifest, &[self.json, &train])?;
        Ok(Draft {
            manifest,
            texts,
            copies: vec![(train, format!("source/{train_name}"))],
            generated: Vec::new(),
            derived: Vec::new(),
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

/// Reads the training file as the original would (format detected) and checks that it has
/// the target and weight columns. Errors name the file.
fn read_source(train: &Path, targets: &[String], weight: Option<&str>) -> Result<(Table, Detected), String> {
    let bytes = std::fs::read(train).map_err(|e| format!("cannot read {}: {e}", train.display()))?;
    let bytes = decompressed(train, bytes).map_err(|e| e.to_string())?;
    let required: Vec<String> = targets
        .iter()
        .cloned()
        .chain(weight.map(str::to_string))
        .collect();
    let detected =
        source_format::detect(&bytes, &required).map_err(|m| format!("{}: {m}", train.display()))?;
    let table = Table::parse_source(train, &bytes, &detected.format).map_err(|e| e.to_string())?;
    for column in &required {
        table.column(column).map_err(|e| e.to_string())?;
    }
    Ok((table, detected))
}

/// The import note for a source format other than UTF-8, `,`, `.` (none for that one).
fn format_note(d: &Detected) -> Option<String> {
    let f = &d.format;
    let mut parts = Vec::new();
    match f.encoding {
        Encoding::Utf8 if d.bom => parts.push("UTF-8 with a byte-order mark (skipped)".to_string()),
        Encoding::Utf8 => {}
        other => parts.push(format!(
            "encoding {other} (not UTF-8; the original reads it with the encoding charset_normalizer detects)"
        )),
    }
    if f.delimiter != ',' {
        let shown = if f.delimiter == '\t' {
            "tab".to_string()
        } else {
            format!("`{}`", f.delimiter)
        };
        parts.push(format!(
            "delimiter {shown} (the original falls back to `;`, then to a sniffed delimiter)"
        ));
    }
    if f.decimal == ',' {
        let cols: Vec<String> = d.decimal_columns.iter().map(|c| format!("`{c}`")).collect();
        parts.push(format!(
            "decimal commas in {} rewritten with a point (a fix: the original's pandas reads these columns as text)",
            cols.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "source: read as detected ([source.format]): {}; the prepared files are UTF-8, comma-separated, with a decimal point",
            parts.join("; ")
        )
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_resolve_like_the_original_loader() {
        assert_eq!(
            resolve(Some("financial-engineering-1"), "2020-10-29"),
            ("financial-engineering-1".into(), Via::CompId)
        );
        assert_eq!(
            resolve(None, "2020-10-29"),
            ("financial-engineering-1".into(), Via::Map)
        );
        assert_eq!(
            resolve(Some(""), "porto-seguro-data-challenge"),
            ("porto-seguro-challenge".into(), Via::Map)
        );
        assert_eq!(
            resolve(Some("crime-learn"), "crime-learn"),
            ("crime-learn".into(), Via::Id)
        );
        assert_eq!(resolve(None, "crime-learn"), ("crime-learn".into(), Via::Id));
        let ids: HashSet<&str> = COMPETITION_MAP.iter().map(|(_, id)| *id).collect();
        assert_eq!(ids.len(), 16, "16 distinct targets, as in load_data.py");
    }
}
