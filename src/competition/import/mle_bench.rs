//! Import of MLE-bench-style prepared competitions.
//!
//! Layout read: `DIR/<id>/prepared/public/` (or `DIR/<id>/public/`) with `train.csv`,
//! `test.csv`, `sample_submission.csv` and `description.md` (or `DIR/<id>/description.md`),
//! and `DIR/<id>/prepared/private/` (or `DIR/<id>/private/`) with the answers, `test.csv`
//! (or `answers.csv`). A folder is a competition when it has both sides.
//!
//! The split is given (`split.rule = "given"`): public files are copied as they are, the
//! answers become `private/answers.csv`, and every file's checksum is recorded. The id column
//! is the first column of `sample_submission.csv`, the targets its other columns. The metric
//! comes from `--metric`, else from `config.yaml`'s `grader.name` where that is a metric
//! ml2b knows. The English task text is `description.md`; the data card lists the public
//! files and their columns. Only English exists (`translation = "none"`).

use std::path::{Path, PathBuf};

use super::{Draft, ImportError, csv_header, task_type};
use crate::manifest::competition::{
    Characteristics, Columns, Domain, Files, Gates, MetricSpec, Source, Split, SplitRule, Translation,
    Visibility, check_id,
};
use crate::manifest::{CompetitionManifest, TaskText};
use crate::metrics::grading::{InputKind, Metric};

/// Reads every competition folder under `dir` (or those in `only`).
pub fn read(
    dir: &Path,
    only: &[String],
    metric: Option<&str>,
    licence: &str,
) -> Result<Vec<Draft>, ImportError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ImportError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    let mut drafts = Vec::new();
    let mut problems = Vec::new();
    for folder in folders {
        let id = folder
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let Some((public, private)) = sides(&folder) else {
            continue;
        };
        if !only.is_empty() && !only.contains(&id) {
            continue;
        }
        match draft(&id, &folder, &public, &private, metric, licence) {
            Ok(d) => drafts.push(d),
            Err(e) => problems.push(format!("{id}: {e}")),
        }
    }
    for id in only {
        if !drafts.iter().any(|d| d.manifest.id == *id)
            && !problems.iter().any(|p| p.starts_with(&format!("{id}:")))
        {
            problems.push(format!(
                "{id}: no prepared competition folder under {}",
                dir.display()
            ));
        }
    }
    if !problems.is_empty() {
        return Err(ImportError::Several(problems));
    }
    if drafts.is_empty() {
        return Err(ImportError::invalid(
            dir,
            "holds no competition folder with public/ and private/",
        ));
    }
    Ok(drafts)
}

fn sides(folder: &Path) -> Option<(PathBuf, PathBuf)> {
    [folder.join("prepared"), folder.to_path_buf()]
        .into_iter()
        .map(|base| (base.join("public"), base.join("private")))
        .find(|(p, q)| p.is_dir() && q.is_dir())
}

fn draft(
    id: &str,
    folder: &Path,
    public: &Path,
    private: &Path,
    metric: Option<&str>,
    licence: &str,
) -> Result<Draft, String> {
    check_id(id)?;
    let metric = match metric {
        Some(m) => m.parse::<Metric>().map_err(|e| e.to_string())?,
        None => config_metric(folder)?,
    };
    let sample = public.join("sample_submission.csv");
    let header = csv_header(&sample).map_err(|e| e.to_string())?;
    let (id_col, targets) = header
        .split_first()
        .ok_or("sample_submission.csv has no columns")?;
    let answers = ["test.csv", "answers.csv"]
        .map(|n| private.join(n))
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| format!("{} has neither test.csv nor answers.csv", private.display()))?;
    let answer_header = csv_header(&answers).map_err(|e| e.to_string())?;
    let mut targets = targets.to_vec();
    if metric.input_kind() == InputKind::Probabilities {
        // One column per class in the submission; the answers hold the label column.
        targets = answer_header
            .iter()
            .filter(|h| *h != id_col)
            .take(1)
            .cloned()
            .collect();
    }
    for t in targets.iter().chain([id_col]) {
        if !answer_header.contains(t) {
            return Err(format!("{} has no column `{t}`", answers.display()));
        }
    }
    let description_path = [public.join("description.md"), folder.join("description.md")]
        .into_iter()
        .find(|p| p.is_file())
        .ok_or("no description.md")?;
    let description = std::fs::read_to_string(&description_path)
        .map_err(|e| format!("{}: {e}", description_path.display()))?;

    let mut copies = Vec::new();
    let mut files = Files::default();
    let mut public_files: Vec<PathBuf> = std::fs::read_dir(public)
        .map_err(|e| format!("{}: {e}", public.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "description.md"))
        .collect();
    public_files.sort();
    for path in &public_files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or("a file name is not UTF-8")?
            .to_string();
        files.public.insert(name.clone(), hash(path)?);
        copies.push((path.clone(), format!("public/{name}")));
    }
    for required in ["train.csv", "test.csv"] {
        if !files.public.contains_key(required) {
            return Err(format!("{} has no {required}", public.display()));
        }
    }
    files.private.insert("answers.csv".into(), hash(&answers)?);
    copies.push((answers.clone(), "private/answers.csv".into()));

    let task = task_type(&metric, &answers, &targets[0]).map_err(|e| e.to_string())?;
    let title = description
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .map_or_else(|| id.to_string(), |t| t.trim().to_string());
    let text = TaskText {
        title: title.clone(),
        domain: format!("Kaggle competition `{id}`, imported from an MLE-bench prepared folder."),
        metric: metric.to_string(),
        description: description.trim().to_string(),
        data_card: data_card(&public_files)?,
    };
    let weight = (metric.input_kind() == InputKind::WeightedValues).then(|| "weight".to_string());
    let manifest = CompetitionManifest {
        id: id.to_string(),
        title,
        domain: Domain::Tabular,
        task,
        visibility: Visibility::Public,
        translation: Translation::None,
        languages: vec!["en".into()],
        metric: MetricSpec {
            name: metric.to_string(),
            direction: metric.direction(),
        },
        columns: Columns {
            id: id_col.clone(),
            targets,
            weight,
            weight_is_feature: false,
        },
        source: Source {
            file: String::new(),
            blake3: String::new(),
            origin: format!("MLE-bench prepared folder {}", folder.display()),
            licence: licence.to_string(),
            citation: String::new(),
            format: Default::default(),
        },
        split: Split {
            rule: SplitRule::Given,
            test_fraction: 0.2,
            seed: 42,
            stratify: false,
        },
        files,
        characteristics: Characteristics::default(),
        gates: Gates::default(),
        baseline: None,
        import_notes: vec!["split: given by the MLE-bench preparation, not rebuilt".into()],
        mle_bench: None,
    };
    manifest
        .check(&folder.join(format!("{id}.toml")))
        .map_err(|e| e.to_string())?;
    Ok(Draft {
        manifest,
        texts: vec![("en".into(), text)],
        copies,
    })
}

fn hash(path: &Path) -> Result<String, String> {
    crate::store::hash_file_hex(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// `config.yaml`'s `grader:` → `name:` value, when it is a metric ml2b knows.
fn config_metric(folder: &Path) -> Result<Metric, String> {
    let path = folder.join("config.yaml");
    let text = std::fs::read_to_string(&path).map_err(|_| {
        format!(
            "no --metric given and no {} to read the grader from",
            path.display()
        )
    })?;
    let mut in_grader = false;
    for line in text.lines() {
        if !line.starts_with(' ') {
            in_grader = line.trim_end() == "grader:";
        } else if in_grader && let Some(name) = line.trim().strip_prefix("name:") {
            let name = name.trim().trim_matches(['"', '\'']);
            return name.parse().map_err(|_| {
                format!(
                    "{}: grader `{name}` is not a metric ml2b knows; pass --metric",
                    path.display()
                )
            });
        }
    }
    Err(format!("{} has no grader.name; pass --metric", path.display()))
}

fn data_card(public_files: &[PathBuf]) -> Result<String, String> {
    let mut card = String::from("## Files\n");
    for path in public_files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.ends_with(".csv") {
            let header = csv_header(path).map_err(|e| e.to_string())?;
            card.push_str(&format!(
                "\n- `{name}`: columns {}",
                header
                    .iter()
                    .map(|h| format!("`{h}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        } else {
            card.push_str(&format!("\n- `{name}`"));
        }
    }
    card.push('\n');
    Ok(card)
}
