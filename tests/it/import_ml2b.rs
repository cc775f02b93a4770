//! `ml2b import ml2b` on a release written here in the original's exact layout: entries
//! shaped like the real `competitions.json`, task CSVs keyed by Kaggle slugs with and
//! without the `comp-id` column `load_data.py` adds, plain ids, an empty data card, a
//! `;`-separated decimal-comma windows-1251 training file, a weighted metric and a text
//! competition.

use std::path::Path;

use ml2b::competition::{Benchmark, Competition, Side};
use ml2b::manifest::competition::{Domain, Encoding};

use crate::common::{Workspace, stderr, write};

/// Everything a root holds besides `manifests/languages.toml`.
fn left_behind(ws: &Workspace) -> Vec<String> {
    walkdir::WalkDir::new(ws.dir.path())
        .min_depth(1)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            e.path()
                .strip_prefix(ws.dir.path())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|p| p != "manifests/languages.toml")
        .collect()
}

/// Text in windows-1251 (ASCII and the Russian alphabet).
fn cp1251(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| match c as u32 {
            0..0x80 => c as u8,
            u @ 0x410..=0x44F => (u - 0x410 + 0xC0) as u8,
            0x401 => 0xA8,
            0x451 => 0xB8,
            _ => panic!("{c} is not in the fixture's windows-1251"),
        })
        .collect()
}

/// (Kaggle slug or id as the task CSVs name it, ML2B id), as the original's `competition_map`
/// has them for the eight competitions the issue found refused.
const SLUGGED: [(&str, &str); 8] = [
    ("2020-10-29", "financial-engineering-1"),
    ("2020-11-05", "financial-engineering-2"),
    ("2020-11-20", "financial-engineering-3"),
    ("porto-seguro-data-challenge", "porto-seguro-challenge"),
    ("shaastra-wells-fargo-hackathon", "she-hacks-2021"),
    ("playground-series-s3e2", "stroke-prediction-s3e2"),
    ("classification-with-non-deep-classifiers", "syde-522-winter-2021"),
    ("stat441datachallenge1", "uwaterloo-stat441-jewelry"),
];

/// Competitions the task CSVs name by their ML2B id.
const PLAIN: [&str; 4] = [
    "alfa-university-income-prediction",
    "itmo-flat-price-prediction-2024",
    "cs-506-fall-2025-technical-midterm",
    "playground-series-s5e6",
];

const JSON: &str = r#"{
    "_comment": {"note": "keys starting with an underscore are skipped, as the original does"},
    "uwaterloo-stat441-jewelry": {
        "metric": "roc_auc_score",
        "target_col": "Revenue",
        "direction": "maximize",
        "cv_folds": 3,
        "output_hint": "probabilities for class 1 (floats in [0, 1])"
    },
    "financial-engineering-1": {
        "metric": "mean_squared_error",
        "target_col": "col_5",
        "direction": "minimize",
        "cv_folds": 3,
        "output_hint": "predicted values for col_5 (floats)"
    },
    "financial-engineering-2": {
        "metric": "root_mean_squared_error",
        "target_col": "col_5",
        "direction": "minimize",
        "cv_folds": 3,
        "output_hint": "predicted values for col_5 (floats)",
        "split_strategy": "csv",
        "grader": "default"
    },
    "financial-engineering-3": {
        "metric": "root_mean_squared_error_multitarget",
        "target_col": ["col_5", "col_8"],
        "direction": "minimize",
        "cv_folds": 1,
        "output_hint": "predicted values for col_5 (floats), for col_8 binary predictions (0 or 1)",
        "files": {
            "train": {"type": "data", "required": true, "extensions": [".csv"]}
        },
        "file_mapping": {
            "train": {"filename": "train.csv", "type": "data", "required": true}
        },
        "split_strategy": "csv",
        "load_strategy": "default",
        "grader": "multitarget"
    },
    "alfa-university-income-prediction": {
        "metric": "wmae",
        "target_col": "target",
        "exclude_cols": ["w"],
        "weight_col": "w",
        "direction": "minimize",
        "cv_folds": 1,
        "files": {
            "train": {"type": "data", "required": true, "extensions": [".csv"]}
        },
        "file_mapping": {
            "train": {"filename": "train_clean.csv", "type": "data", "required": true}
        },
        "output_hint": "predicted values for target (floats)"
    },
    "she-hacks-2021": {
        "metric": "root_mean_squared_error",
        "target_col": "Unique Headcount",
        "direction": "minimize",
        "cv_folds": 3,
        "output_hint": "predicted headcounts (floats)"
    },
    "syde-522-winter-2021": {
        "metric": "accuracy_score",
        "target_col": "label",
        "direction": "maximize",
        "cv_folds": 3,
        "output_hint": "predicted class labels"
    },
    "porto-seguro-challenge": {
        "metric": "f1_score",
        "target_col": "y",
        "direction": "maximize",
        "cv_folds": 3,
        "output_hint": "binary predictions (0 or 1)"
    },
    "stroke-prediction-s3e2": {
        "metric": "roc_auc_score",
        "target_col": "stroke",
        "direction": "maximize",
        "cv_folds": 3,
        "output_hint": "probabilities for class 1 (floats in [0, 1])"
    },
    "playground-series-s5e6": {
        "metric": "mean_average_precision",
        "target_col": "Fertilizer Name",
        "direction": "maximize",
        "cv_folds": 1,
        "output_hint": "top-3 fertilizer names separated by spaces",
        "file_mapping": {
            "train": {"filename": "train.csv", "type": "data", "required": true}
        },
        "split_strategy": "csv",
        "load_strategy": "default",
        "grader": "default",
        "stratified_split": true
    },
    "itmo-flat-price-prediction-2024": {
        "metric": "root_mean_squared_error",
        "target_col": "price",
        "direction": "minimize",
        "cv_folds": 1,
        "output_hint": "predicted prices (floats)",
        "file_mapping": {
            "train": {"filename": "train.csv", "type": "data", "required": true}
        },
        "split_strategy": "csv",
        "load_strategy": "default",
        "grader": "default"
    },
    "cs-506-fall-2025-technical-midterm": {
        "metric": "f1_score_avg_macro",
        "target_col": "Score",
        "direction": "maximize",
        "cv_folds": 1,
        "output_hint": "predicted scores (integers 1-5)",
        "file_mapping": {
            "train": {"filename": "train.csv", "type": "data", "required": true}
        },
        "split_strategy": "csv",
        "load_strategy": "default",
        "grader": "default"
    }BIKER
}
"#;

const BIKER: &str = r#",
    "biker-tour-recommendation": {
        "metric": "mean_average_precision",
        "target_col": "like",
        "direction": "maximize",
        "cv_folds": 1,
        "file_mapping": {
            "train": {"filename": "train.csv", "type": "data", "required": true},
            "tours": {"filename": "tours.csv", "type": "data", "required": true}
        },
        "split_strategy": "biker_recommender",
        "load_strategy": "biker_recommender",
        "grader": "biker_recommender"
    }"#;

/// What to break in a release.
#[derive(Clone, Copy, PartialEq)]
enum Flaw {
    None,
    /// An entry that needs the original's custom loader and grader.
    CustomLoader,
    /// A regression target that is not a number (found only when preparing).
    BadTarget,
    /// porto-seguro-challenge's English description is empty.
    NoEnglishDescription,
}

/// One task CSV row: `competition` (and `comp-id`), then the texts.
fn task_row(key: &str, comp_id: Option<&str>, lang: &str, card: &str) -> String {
    let comp_id = comp_id.map_or(String::new(), |c| format!(",{c}"));
    format!(
        "\"{key} ({lang})\",{key},\"{card}\",\"Predict the target of {key}, {lang}.\nSecond line.\",Finance,Metric{comp_id}\n"
    )
}

const TASK_HEADER: &str = "comp_name,competition,data_card,description,domain,metric";

/// The release: English.csv keyed by slugs with the `comp-id` column `load_data.py` adds,
/// Russian.csv keyed by slugs without it (the dataset as downloaded), Arab.csv by ids, with
/// an empty data card for she-hacks-2021.
fn release(flaw: Flaw) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("competitions");
    let json = JSON.replace("BIKER", if flaw == Flaw::CustomLoader { BIKER } else { "" });
    write(&c.join("competitions.json"), json.as_bytes());

    let card = "Files: train.csv, with \"\"quotes\"\"";
    let mut english = format!("{TASK_HEADER},comp-id\n");
    let mut russian = format!("{TASK_HEADER}\n");
    let mut arab = format!("{TASK_HEADER}\n");
    for (slug, id) in SLUGGED {
        english.push_str(&task_row(slug, Some(id), "en", card));
        russian.push_str(&task_row(slug, None, "ru", card));
        let arab_card = if id == "she-hacks-2021" { "" } else { card };
        arab.push_str(&task_row(id, None, "ar", arab_card));
    }
    for id in PLAIN {
        english.push_str(&task_row(id, Some(id), "en", card));
        russian.push_str(&task_row(id, None, "ru", card));
    }
    english.push_str(&task_row(
        "biker-tour-recommendation",
        Some("biker-tour-recommendation"),
        "en",
        card,
    ));
    english.push_str(&task_row(
        "some-dropped-competition",
        Some("some-dropped-competition"),
        "en",
        card,
    ));
    if flaw == Flaw::NoEnglishDescription {
        english = english.replace(
            "\"Predict the target of porto-seguro-data-challenge, en.\nSecond line.\"",
            "\"\"",
        );
    }
    write(&c.join("tasks/English.csv"), english.as_bytes());
    write(&c.join("tasks/Russian.csv"), russian.as_bytes());
    write(&c.join("tasks/Arab.csv"), arab.as_bytes());

    let data = c.join("data");
    let n = 60;
    let mut fe = String::from("col_1,col_2,col_3,col_4,col_5,col_6,col_7,col_8\n");
    let mut jewelry = String::from("Administrative,BounceRates,Month,Revenue\n");
    let mut she = String::from("Year,Region,Unique Headcount\n");
    let mut syde = String::from("f0,f1,f2,label\n");
    let mut porto = String::from("id,var1,var2,y\n");
    let mut stroke = String::from("id,gender,age,stroke\n");
    let mut alfa = String::from("f,w,target\n");
    let mut fert = String::from("id,Soil Type,Nitrogen,Fertilizer Name\n");
    let mut reviews = String::from("Id,ProductId,HelpfulnessNumerator,Summary,Text,Score\n");
    let mut flats = String::from("district;area;rooms;price\n");
    let words = [
        "great", "taste", "awful", "coffee", "would", "buy", "again", "never", "smooth", "bitter",
    ];
    let districts = ["Приморский", "Невский", "Выборгский", "Калининский"];
    for i in 0..n {
        fe.push_str(&format!(
            "{},{},{},{},{}.5,{},{},{}\n",
            i % 7,
            i % 3,
            i * 2,
            i % 5,
            i * 3 % 17,
            i % 2,
            i % 4,
            i % 2
        ));
        jewelry.push_str(&format!(
            "{},{}.0{},{},{}\n",
            i % 4,
            i % 2,
            i % 9,
            ["Feb", "Mar", "Nov"][i % 3],
            if i % 3 == 0 { "True" } else { "False" }
        ));
        she.push_str(&format!("{},R{},{}\n", 2000 + i % 10, i % 4, 100 + i * 7 % 31));
        syde.push_str(&format!(
            "{},{},{},{}\n",
            i % 5,
            i % 7,
            i % 3,
            ["a", "b", "c"][i % 3]
        ));
        porto.push_str(&format!("{i},{},{},{}\n", i % 6, i % 2, i % 2));
        stroke.push_str(&format!(
            "{i},{},{},{}\n",
            ["Male", "Female"][i % 2],
            20 + i % 50,
            usize::from(i % 4 == 0)
        ));
        alfa.push_str(&format!("{},{},{}\n", i % 5, 1 + i % 2, i * 10));
        fert.push_str(&format!(
            "{i},{},{},{}\n",
            ["Sandy", "Loamy"][i % 2],
            i % 40,
            ["DAP", "Urea", "14-35-14"][i % 3]
        ));
        let text: Vec<&str> = (0..8 + i % 5)
            .map(|k| words[(i * 7 + k * 3) % words.len()])
            .collect();
        reviews.push_str(&format!(
            "{i},B00{},{},\"{} {}\",\"{} (review {i})\",{}\n",
            i % 9,
            i % 3,
            words[i % 10],
            words[(i + 3) % 10],
            text.join(" "),
            1 + i % 5
        ));
        flats.push_str(&format!(
            "{};{},{};{};{}\n",
            districts[i % 4],
            30 + i,
            i % 10,
            1 + i % 4,
            if i % 2 == 0 {
                format!("{}", 5_000_000 + i * 10_000)
            } else {
                format!("{},5", 5_000_000 + i * 10_000)
            }
        ));
    }
    if flaw == Flaw::BadTarget {
        she.push_str("2010,R1,n/a\n");
    }
    for id in [
        "financial-engineering-1",
        "financial-engineering-2",
        "financial-engineering-3",
    ] {
        write(&data.join(id).join("train.csv"), fe.as_bytes());
    }
    write(
        &data.join("uwaterloo-stat441-jewelry/train.csv"),
        jewelry.as_bytes(),
    );
    write(&data.join("she-hacks-2021/train.csv"), she.as_bytes());
    write(&data.join("syde-522-winter-2021/train.csv"), syde.as_bytes());
    write(&data.join("porto-seguro-challenge/train.csv"), porto.as_bytes());
    write(&data.join("stroke-prediction-s3e2/train.csv"), stroke.as_bytes());
    write(
        &data.join("alfa-university-income-prediction/train_clean.csv"),
        alfa.as_bytes(),
    );
    write(&data.join("playground-series-s5e6/train.csv"), fert.as_bytes());
    write(
        &data.join("cs-506-fall-2025-technical-midterm/train.csv"),
        reviews.as_bytes(),
    );
    write(
        &data.join("itmo-flat-price-prediction-2024/train.csv"),
        cp1251(&flats),
    );
    dir
}

fn import(ws: &Workspace, release: &Path, only: &[&str]) -> std::process::Output {
    let mut cmd = ws.ml2b();
    cmd.args(["--json", "import", "ml2b"]).arg(release);
    for id in only {
        cmd.args(["--only", id]);
    }
    cmd.output().unwrap()
}

fn get<'a>(bench: &'a Benchmark, id: &str) -> &'a Competition {
    bench.competitions.iter().find(|c| c.id() == id).unwrap()
}

fn has_note(c: &Competition, needle: &str) -> bool {
    c.manifest.import_notes.iter().any(|n| n.contains(needle))
}

#[test]
fn every_slug_keyed_competition_imports_with_its_notes() {
    let ws = Workspace::empty_root();
    let rel = release(Flaw::None);
    let out = import(&ws, rel.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["imported"].as_array().unwrap().len(),
        SLUGGED.len() + PLAIN.len()
    );
    assert_eq!(report["refused"], serde_json::json!([]));
    assert!(
        ws.ml2b().args(["prepare", "--check"]).status().unwrap().success(),
        "every import rebuilds bit for bit"
    );

    let bench = Benchmark::load(ws.dir.path()).unwrap();
    for (slug, id) in SLUGGED {
        let c = get(&bench, id);
        assert_eq!(c.manifest.languages, ["en", "ru", "ar"], "{id}");
        assert_eq!(c.manifest.title, format!("{slug} (en)"));
        assert_eq!(
            c.task("ru").unwrap().description,
            format!("Predict the target of {slug}, ru.\nSecond line.")
        );
        for via in ["by their `comp-id` column", "by the original's competition_map"] {
            let note = format!("task texts: 1 task CSV names it `{slug}`, resolved to this id {via}");
            assert!(has_note(c, &note), "{id}: {:?}", c.manifest.import_notes);
        }
    }
    for id in PLAIN {
        let c = get(&bench, id);
        assert_eq!(c.manifest.languages, ["en", "ru"], "{id}");
        assert!(!has_note(c, "resolved to this id"), "{id}: ids need no note");
    }

    // The empty data card: accepted, recorded, and blank in the task text.
    let she = get(&bench, "she-hacks-2021");
    assert!(
        has_note(she, "the data card is empty in tasks/Arab.csv"),
        "{:?}",
        she.manifest.import_notes
    );
    assert_eq!(she.task("ar").unwrap().data_card, "");
    assert_eq!(
        she.task("en").unwrap().data_card,
        "Files: train.csv, with \"quotes\""
    );
    assert_eq!(she.manifest.columns.targets, ["Unique Headcount"]);

    // Multi-target, binary and multiclass tasks from the slug-keyed entries.
    let fe3 = get(&bench, "financial-engineering-3");
    assert_eq!(fe3.manifest.columns.targets, ["col_5", "col_8"]);
    assert_eq!(
        format!("{:?}", get(&bench, "stroke-prediction-s3e2").manifest.task),
        "Binary"
    );
    assert_eq!(
        format!("{:?}", get(&bench, "syde-522-winter-2021").manifest.task),
        "Multiclass"
    );
}

#[test]
fn a_semicolon_decimal_comma_cp1251_file_is_read_and_recorded() {
    let ws = Workspace::empty_root();
    let rel = release(Flaw::None);
    let out = import(&ws, rel.path(), &["itmo-flat-price-prediction-2024"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let bench = Benchmark::load(ws.dir.path()).unwrap();
    let itmo = get(&bench, "itmo-flat-price-prediction-2024");
    let format = itmo.manifest.source.format;
    assert_eq!(
        (format.encoding, format.delimiter, format.decimal),
        (Encoding::Windows1251, ';', ',')
    );
    let notes = itmo.manifest.import_notes.join("\n");
    for needle in [
        "encoding windows-1251",
        "delimiter `;`",
        "decimal commas in `area`, `price` rewritten with a point",
    ] {
        assert!(notes.contains(needle), "{needle}: {notes}");
    }
    assert_eq!(format!("{:?}", itmo.manifest.visibility), "Private");
    assert_eq!(itmo.manifest.domain, Domain::Tabular);

    // The source is kept as it was; the prepared files are UTF-8, `,`, `.`.
    let source = std::fs::read(itmo.dir.join(&itmo.manifest.source.file)).unwrap();
    assert_eq!(
        source,
        std::fs::read(
            rel.path()
                .join("competitions/data/itmo-flat-price-prediction-2024/train.csv")
        )
        .unwrap()
    );
    let train = std::fs::read_to_string(itmo.file(Side::Public, "train.csv")).unwrap();
    assert_eq!(train.lines().next(), Some("id,district,area,rooms,price"));
    assert!(train.contains(",Невский,31.1,2,5010000.5\n"), "{train}");
    let test = std::fs::read_to_string(itmo.file(Side::Public, "test.csv")).unwrap();
    assert_eq!(test.lines().next(), Some("id,district,area,rooms"));
    let answers = std::fs::read_to_string(itmo.file(Side::Private, "answers.csv")).unwrap();
    assert!(
        answers
            .lines()
            .skip(1)
            .all(|l| l.split(',').nth(1).unwrap().parse::<f64>().is_ok()),
        "{answers}"
    );
    assert!(ws.ml2b().args(["prepare", "--check"]).status().unwrap().success());
}

#[test]
fn the_weight_stays_a_feature_and_text_is_recognised() {
    let ws = Workspace::empty_root();
    let rel = release(Flaw::None);
    let out = import(
        &ws,
        rel.path(),
        &[
            "alfa-university-income-prediction",
            "cs-506-fall-2025-technical-midterm",
            "playground-series-s5e6",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let bench = Benchmark::load(ws.dir.path()).unwrap();

    let alfa = get(&bench, "alfa-university-income-prediction");
    assert_eq!(alfa.manifest.metric.name, "wmae");
    assert_eq!(alfa.manifest.columns.weight.as_deref(), Some("w"));
    assert!(alfa.manifest.columns.weight_is_feature);
    assert!(has_note(
        alfa,
        "the weight `w` stays a feature in public/test.csv, as the original keeps it in X_val"
    ));
    let first = |side, name| {
        std::fs::read_to_string(alfa.file(side, name))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(first(Side::Public, "test.csv"), "id,f,w");
    assert_eq!(first(Side::Private, "answers.csv"), "id,target,w");
    assert_eq!(alfa.manifest.domain, Domain::Tabular);
    assert!(has_note(alfa, "domain: tabular"));

    let reviews = get(&bench, "cs-506-fall-2025-technical-midterm");
    assert_eq!(reviews.manifest.domain, Domain::Text);
    let note = reviews
        .manifest
        .import_notes
        .iter()
        .find(|n| n.starts_with("domain: text"))
        .unwrap();
    assert!(note.contains("`Text` (median"), "{note}");
    assert!(
        !note.contains("`Summary`"),
        "two-word summaries are no free text: {note}"
    );

    let s5e6 = get(&bench, "playground-series-s5e6");
    assert_eq!(s5e6.manifest.metric.name, "map@3");
    assert_eq!(s5e6.manifest.domain, Domain::Tabular);
    assert!(s5e6.manifest.source.format.is_default());
    assert!(!has_note(s5e6, "source: read as detected"));
}

/// The refusals of a `--json` import: (id, reason).
fn refused(out: &std::process::Output) -> Vec<(String, String)> {
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The competitions of the root, by id.
fn ids(ws: &Workspace) -> Vec<String> {
    let bench = Benchmark::load(ws.dir.path()).unwrap();
    let mut ids: Vec<String> = bench.competitions.iter().map(|c| c.id().to_string()).collect();
    ids.sort();
    ids
}

/// Everything the release imports when nothing is flawed.
const ALL: usize = SLUGGED.len() + PLAIN.len();

#[test]
fn an_empty_english_field_fails_only_its_competition() {
    let ws = Workspace::empty_root();
    let rel = release(Flaw::NoEnglishDescription);
    let out = import(&ws, rel.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let refused = refused(&out);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0].0, "porto-seguro-challenge");
    assert!(
        refused[0].1.starts_with("tasks/English.csv line ")
            && refused[0].1.contains("`description` is empty"),
        "{refused:?}"
    );
    assert!(
        stderr(&out).contains("refused `porto-seguro-challenge`: tasks/English.csv line "),
        "{}",
        stderr(&out)
    );
    let imported = ids(&ws);
    assert_eq!(imported.len(), ALL - 1);
    assert!(!imported.contains(&"porto-seguro-challenge".to_string()));
    assert!(
        left_behind(&ws)
            .iter()
            .all(|p| !p.contains("porto-seguro-challenge")),
        "nothing of the refused one"
    );
}

/// Issue 43, item 10: the release with a competition that needs a custom loader imports
/// the others, lists the refusal with its reason (stderr and `--json`) and exits 1;
/// `--allow-refused` exits 0; `--strict` imports nothing.
#[test]
fn a_refusal_is_listed_and_the_others_are_imported() {
    let ws = Workspace::empty_root();
    let rel = release(Flaw::CustomLoader);
    let out = import(&ws, rel.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let reason = "grader `biker_recommender` needs its own loader or grader, which ml2b does not import";
    assert_eq!(
        refused(&out),
        [("biker-tour-recommendation".to_string(), reason.to_string())]
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!("refused `biker-tour-recommendation`: {reason}")),
        "{err}"
    );
    assert!(
        err.contains(&format!("1 competition(s) refused, {ALL} imported")),
        "{err}"
    );
    assert_eq!(ids(&ws).len(), ALL);
    assert!(
        left_behind(&ws)
            .iter()
            .all(|p| !p.contains("biker") && !p.contains(".import-")),
        "{:?}",
        left_behind(&ws)
    );

    let ws = Workspace::empty_root();
    let allowed = ws
        .ml2b()
        .args(["import", "ml2b", "--allow-refused"])
        .arg(rel.path())
        .output()
        .unwrap();
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
    assert!(stderr(&allowed).contains("refused `biker-tour-recommendation`"));
    assert_eq!(ids(&ws).len(), ALL);

    let ws = Workspace::empty_root();
    let strict = ws
        .ml2b()
        .args(["--json", "import", "ml2b", "--strict"])
        .arg(rel.path())
        .output()
        .unwrap();
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));
    assert_eq!(refused(&strict).len(), 1);
    let report: serde_json::Value = serde_json::from_slice(&strict.stdout).unwrap();
    assert_eq!(report["imported"], serde_json::json!([]));
    assert!(
        stderr(&strict).contains("1 competition(s) refused, so nothing was imported (--strict)"),
        "{}",
        stderr(&strict)
    );
    assert_eq!(left_behind(&ws), Vec::<String>::new());
    let conflicting = ws
        .ml2b()
        .args(["import", "ml2b", "--strict", "--allow-refused"])
        .arg(rel.path())
        .output()
        .unwrap();
    assert_eq!(conflicting.status.code(), Some(2));

    let only = import(&ws, rel.path(), &["financial-engineering-1"]);
    assert!(only.status.success(), "{}", stderr(&only));
    // Importing again refuses what exists, and imports the rest.
    let again = import(&ws, rel.path(), &["financial-engineering-1", "she-hacks-2021"]);
    assert_eq!(again.status.code(), Some(1));
    let refused = refused(&again);
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0].0 == "financial-engineering-1" && refused[0].1.contains("already exists"),
        "{refused:?}"
    );
    assert_eq!(ids(&ws), ["financial-engineering-1", "she-hacks-2021"]);
}

/// A failure while staging (preparing) refuses that competition only, naming the release's
/// file; none of its files stays, nor the staging folder.
#[test]
fn a_failure_while_preparing_names_the_original_file() {
    let ws = Workspace::empty_root();
    let rel = release(Flaw::BadTarget);
    let out = import(&ws, rel.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let refused = refused(&out);
    assert_eq!(refused.len(), 1, "{refused:?}");
    let (id, reason) = &refused[0];
    assert_eq!(id, "she-hacks-2021");
    let original = rel.path().join("competitions/data/she-hacks-2021/train.csv");
    assert!(reason.contains(&format!("{}:", original.display())), "{reason}");
    assert!(
        reason.contains("`Unique Headcount` = `n/a` is not a finite number"),
        "{reason}"
    );
    assert!(!reason.contains(".import-"), "no staging path: {reason}");
    assert_eq!(ids(&ws).len(), ALL - 1);
    assert!(
        left_behind(&ws).iter().all(|p| !p.contains("she-hacks")),
        "{:?}",
        left_behind(&ws)
    );
    let dirs: Vec<_> = std::fs::read_dir(ws.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        dirs.iter().all(|d| !d.to_string_lossy().starts_with(".import-")),
        "no staging folder is left: {dirs:?}"
    );
}

#[test]
fn a_competition_without_english_text_says_what_the_rows_name() {
    let ws = Workspace::empty_root();
    let rel = release(Flaw::None);
    let english = rel.path().join("competitions/tasks/English.csv");
    let text = std::fs::read_to_string(&english).unwrap();
    // A row whose comp-id was not filled in, with a slug the competition_map lacks.
    let text = text
        .replace(",2020-10-29,", ",fe-one-unknown,")
        .replace(",financial-engineering-1\n", ",\n");
    std::fs::write(&english, text).unwrap();
    let out = import(&ws, rel.path(), &["financial-engineering-1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(
            "refused `financial-engineering-1`: no English task text: no row of tasks/English.csv resolves to it"
        ),
        "{err}"
    );
    assert!(
        err.contains("`fe-one-unknown`") && err.contains("`some-dropped-competition`"),
        "{err}"
    );
    assert_eq!(left_behind(&ws), Vec::<String>::new());
}
