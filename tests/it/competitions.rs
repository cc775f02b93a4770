//! The bundled competitions, `ml2b prepare`, bad manifests, the reference solutions and
//! `ml2b import` of both foreign layouts (fixtures built here).

use std::path::{Path, PathBuf};
use std::process::Command;

use ml2b::competition::spec::Spec;
use ml2b::competition::{Benchmark, Side};
use ml2b::manifest::competition::Translation;
use ml2b::metrics::grading::{Score, score_files_with};

use crate::common::{Workspace, stderr, write};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

// ---------------------------------------------------------------- the bundled benchmark

#[test]
fn the_bundled_benchmark_is_complete_in_fourteen_languages() {
    let bench = Benchmark::load(repo()).unwrap();
    assert!(
        bench.competitions.len() >= 10,
        "{} competitions",
        bench.competitions.len()
    );
    let codes: Vec<&str> = bench.languages.all().iter().map(|l| l.code.as_str()).collect();
    assert_eq!(codes.len(), 14);
    let mut metrics = Vec::new();
    for c in &bench.competitions {
        assert_eq!(c.manifest.translation, Translation::Machine, "{}", c.id());
        assert_eq!(c.languages(&bench.languages), codes, "{}", c.id());
        for code in &codes {
            c.task(code).unwrap();
            if *code != "en" {
                assert!(
                    c.back_translation(code).unwrap().is_some(),
                    "{} lacks back/{code}.toml",
                    c.id()
                );
            }
        }
        for mode in ["modular", "mono"] {
            assert!(c.solution(mode).is_file(), "{} lacks solution/{mode}.py", c.id());
        }
        assert!(c.manifest.baseline.is_some(), "{} has no baseline", c.id());
        assert!(
            c.dir.join("source/SOURCE.md").is_file(),
            "{} has no SOURCE.md",
            c.id()
        );
        metrics.push(c.manifest.metric.name.clone());
    }
    for need in [
        "roc_auc",
        "log_loss",
        "rmse",
        "rmsle",
        "mae",
        "wmae",
        "r2",
        "accuracy",
        "f1_macro",
        "map@3",
        "rmse_multi",
    ] {
        assert!(
            metrics.iter().any(|m| m == need),
            "no competition is graded with {need}"
        );
    }
    let size: u64 = walkdir::WalkDir::new(repo().join("data"))
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    assert!(size < 40 * 1024 * 1024, "data/ holds {size} bytes");
}

#[test]
fn prepare_check_reproduces_every_committed_split_bit_for_bit() {
    let out = Command::new(env!("CARGO_BIN_EXE_ml2b"))
        .args(["--json", "prepare", "--check", "--root"])
        .arg(repo())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = report.as_array().unwrap();
    assert!(list.len() >= 10);
    for c in list {
        assert_eq!(c["ok"], true, "{c}");
        assert_eq!(c["files"].as_array().unwrap().len(), 4, "{c}");
    }
}

/// The Python that runs the harness: `ML2B_PYTHON`, else `python3`.
fn python() -> String {
    let python = std::env::var("ML2B_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&python)
        .args(["-c", "import pandas, sklearn, numpy"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "`{python}` lacks pandas/scikit-learn: run scripts/python-env (or set ML2B_PYTHON to a Python with assets/execute/requirements.txt)"
    );
    python
}

fn run_solution(python: &str, c: &ml2b::competition::Competition, mode: &str, tmp: &Path) -> f64 {
    let spec = tmp.join(format!("{}-spec.json", c.id()));
    std::fs::write(&spec, Spec::of(&c.manifest).to_json()).unwrap();
    let pred = tmp.join(format!("{}-{mode}.csv", c.id()));
    // Two of these run at once on 2 cores: one thread each, waiting without spinning, as
    // the sandbox's runs do, so neither starves the other.
    let out = Command::new(python)
        .envs([
            ("OMP_NUM_THREADS", "1"),
            ("OPENBLAS_NUM_THREADS", "1"),
            ("MKL_NUM_THREADS", "1"),
        ])
        .env("OMP_WAIT_POLICY", "PASSIVE")
        .arg(repo().join("assets/execute/harness.py"))
        .args(["--code".as_ref(), c.solution(mode).as_os_str()])
        .args(["--mode", mode])
        .args(["--spec".as_ref(), spec.as_os_str()])
        .args(["--train".as_ref(), c.file(Side::Public, "train.csv").as_os_str()])
        .args(["--test".as_ref(), c.file(Side::Public, "test.csv").as_os_str()])
        .args(["--out".as_ref(), pred.as_os_str()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{} {mode}: {}", c.id(), stderr(&out));
    let m = &c.manifest;
    match score_files_with(
        &m.metric.name,
        &c.file(Side::Private, "answers.csv"),
        &pred,
        &c.grade_options(),
    )
    .unwrap()
    {
        Score::Valid { score, .. } => score,
        Score::Invalid { reason } => panic!("{} {mode}: invalid submission: {reason}", c.id()),
    }
}

#[test]
fn every_reference_solution_scores_in_its_expected_range_in_both_modes() {
    let python = python();
    let bench = Benchmark::load(repo()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let halves: Vec<Vec<&ml2b::competition::Competition>> =
        bench
            .competitions
            .iter()
            .enumerate()
            .fold(vec![Vec::new(), Vec::new()], |mut acc, (i, c)| {
                acc[i % 2].push(c);
                acc
            });
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = halves
            .iter()
            .map(|half| {
                let (python, tmp) = (&python, tmp.path());
                s.spawn(move || {
                    let mut bad = Vec::new();
                    for c in half {
                        let modular = run_solution(python, c, "modular", tmp);
                        let mono = run_solution(python, c, "mono", tmp);
                        let b = c.manifest.baseline.as_ref().unwrap();
                        let [lo, hi] = b.expected;
                        if !(lo..=hi).contains(&modular) || modular != mono {
                            bad.push(format!(
                                "{}: modular {modular}, mono {mono}, expected [{lo}, {hi}]",
                                c.id()
                            ));
                        }
                    }
                    bad
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{failures:#?}");
}

// ---------------------------------------------------------------- a toy root

const TOY_MANIFEST: &str = r#"id = "toy"
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
blake3 = ""
origin = "generated by the test"
licence = "CC0-1.0"

[split]
rule = "holdout"
stratify = true

[characteristics]
domain_terms = ["widgets"]
"#;

/// The toy competition's reference solutions (a constant: the share of `yes`).
pub(crate) const TOY_MODULAR: &str = "import numpy as np\n\ndef train(data):\n    return float((data['y'] == 'yes').mean())\n\ndef prepare_val(train_output, X_val):\n    return len(X_val)\n\ndef predict(train_output, prepare_val_output):\n    return np.full(prepare_val_output, train_output)\n";
pub(crate) const TOY_MONO: &str = "import numpy as np\n\ndef train_and_predict(data, X_val):\n    return np.full(len(X_val), float((data['y'] == 'yes').mean()))\n";

/// A benchmark root with one small competition, prepared.
pub(crate) fn toy() -> Workspace {
    toy_in(Workspace::new())
}

/// The toy competition, prepared, in the root `ws`.
pub(crate) fn toy_in(ws: Workspace) -> Workspace {
    toys_in(ws, &["toy"])
}

/// Toy competitions with the ids `ids` (the first one's data is the toy's; each next one
/// shifts its rows), prepared, in the root `ws`.
pub(crate) fn toys_in(ws: Workspace, ids: &[&str]) -> Workspace {
    let root = ws.dir.path();
    std::fs::create_dir_all(root.join("manifests/competitions")).unwrap();
    for name in ["languages.toml", "models.toml"] {
        std::fs::copy(
            repo().join("manifests").join(name),
            root.join("manifests").join(name),
        )
        .unwrap();
    }
    let bench = Benchmark::load(repo()).unwrap();
    for (n, id) in ids.iter().enumerate() {
        add_toy(root, id, n, &bench);
    }
    let out = ws.ml2b().arg("prepare").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    ws
}

/// Writes the unprepared toy competition `id`, its rows shifted by `shift`.
fn add_toy(root: &Path, id: &str, shift: usize, bench: &Benchmark) {
    let manifest = TOY_MANIFEST
        .replace("id = \"toy\"", &format!("id = \"{id}\""))
        .replace("source/toy.csv", &format!("source/{id}.csv"));
    write(&root.join(format!("manifests/competitions/{id}.toml")), &manifest);
    let mut csv = String::from("x,note,y\n");
    for i in 0..40 {
        csv.push_str(&format!(
            "{},\"a, b\",{}\n",
            (i + shift) * 7 % 13,
            if (i + shift).is_multiple_of(3) {
                "yes"
            } else {
                "no"
            }
        ));
    }
    write(&root.join(format!("data/{id}/source/{id}.csv")), &csv);
    for lang in bench.languages.all() {
        let text = format!(
            "title = \"Toy {0}\"\ndomain = \"d\"\nmetric = \"m\"\ndescription = \"Predict widgets ({0}).\"\ndata_card = \"c\"\n",
            lang.code
        );
        write(&root.join(format!("data/{id}/tasks/{}.toml", lang.code)), &text);
    }
    write(&root.join(format!("data/{id}/solution/modular.py")), TOY_MODULAR);
    write(&root.join(format!("data/{id}/solution/mono.py")), TOY_MONO);
}

fn manifest(ws: &Workspace) -> PathBuf {
    ws.dir.path().join("manifests/competitions/toy.toml")
}

#[test]
fn prepare_records_checksums_then_checks_and_restores_files() {
    let ws = toy();
    let text = std::fs::read_to_string(manifest(&ws)).unwrap();
    assert!(
        text.contains("[files.private]") && text.contains("\"answers.csv\" = "),
        "{text}"
    );
    assert!(
        text.contains("rows = 40") && text.contains("domain_term_density = 0.3333333333333333"),
        "{text}"
    );
    assert!(ws.ml2b().args(["prepare", "--check"]).status().unwrap().success());

    let train = ws.dir.path().join("data/toy/public/train.csv");
    let original = std::fs::read(&train).unwrap();
    std::fs::write(&train, b"id,x\n").unwrap();
    let out = ws.ml2b().args(["prepare", "--check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("public/train.csv"));
    assert!(ws.ml2b().arg("prepare").status().unwrap().success());
    assert_eq!(std::fs::read(&train).unwrap(), original);

    let answers = std::fs::read_to_string(ws.dir.path().join("data/toy/private/answers.csv")).unwrap();
    assert_eq!(answers.lines().next(), Some("id,y"));
    assert_eq!(answers.lines().count(), 1 + 8, "20% of 40 rows held out");
    let test = std::fs::read_to_string(ws.dir.path().join("data/toy/public/test.csv")).unwrap();
    assert_eq!(
        test.lines().next(),
        Some("id,x,note"),
        "no target in the public test file"
    );
    assert!(test.contains("\"a, b\""), "quoted fields survive");
}

#[test]
fn a_changed_source_is_refused_and_nothing_is_written() {
    let ws = toy();
    let root = ws.dir.path();
    let train = std::fs::read(root.join("data/toy/public/train.csv")).unwrap();
    let source = root.join("data/toy/source/toy.csv");
    let mut text = std::fs::read_to_string(&source).unwrap();
    text.push_str("99,x,yes\n");
    std::fs::write(&source, text).unwrap();
    let out = ws.ml2b().arg("prepare").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("toy.toml") && stderr(&out).contains("nothing was written"));
    assert_eq!(
        std::fs::read(root.join("data/toy/public/train.csv")).unwrap(),
        train
    );
    let out = ws.ml2b().args(["prepare", "--check"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("source/toy.csv: blake3"));
    assert!(
        ws.ml2b()
            .args(["prepare", "--update-manifest"])
            .status()
            .unwrap()
            .success()
    );
    assert!(ws.ml2b().args(["prepare", "--check"]).status().unwrap().success());
}

#[test]
fn bad_manifests_name_the_file_and_field() {
    let cases: [(&str, &str, &[&str]); 5] = [
        ("name = \"roc_auc\"\n", "", &["toy.toml", "missing field `name`"]),
        (
            "[split]",
            "[baseline]\nscore = nan\nexpected = [0.5, 0.9]\n\n[split]",
            &["toy.toml", "baseline.score: NaN is not a finite score"],
        ),
        (
            "\"maximize\"",
            "\"upward\"",
            &["toy.toml", "unknown variant `upward`"],
        ),
        ("\"maximize\"", "\"minimize\"", &["toy.toml", "metric.direction"]),
        ("\"roc_auc\"", "\"roc_auk\"", &["toy.toml", "metric.name"]),
    ];
    for (from, to, wants) in cases {
        let ws = toy();
        let text = std::fs::read_to_string(manifest(&ws)).unwrap();
        std::fs::write(manifest(&ws), text.replacen(from, to, 1)).unwrap();
        let out = ws.ml2b().args(["prepare", "--check"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        for want in wants {
            assert!(stderr(&out).contains(want), "{} lacks {want}", stderr(&out));
        }
    }
}

#[test]
fn a_checksum_mismatch_fails_the_check_naming_the_file() {
    let ws = toy();
    let text = std::fs::read_to_string(manifest(&ws)).unwrap();
    let start = text.find("\"test.csv\" = \"").unwrap() + "\"test.csv\" = \"".len();
    let mut broken = text.clone();
    broken.replace_range(start..start + 64, &"0".repeat(64));
    std::fs::write(manifest(&ws), broken).unwrap();
    let out = ws.ml2b().args(["prepare", "--check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("public/test.csv") && stdout.contains(&"0".repeat(64)),
        "{stdout}"
    );
    let out = ws.ml2b().arg("prepare").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "plain prepare refuses too");
    assert!(stderr(&out).contains("public/test.csv"));
}

#[test]
fn a_language_without_a_description_is_named() {
    let ws = toy();
    std::fs::remove_file(ws.dir.path().join("data/toy/tasks/kk.toml")).unwrap();
    let out = ws.ml2b().args(["prepare", "--check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("toy.toml: languages: `kk` has no task text") && err.contains("kk.toml"),
        "{err}"
    );
    write(
        &ws.dir.path().join("data/toy/tasks/kk.toml"),
        "title = \"T\"\ndomain = \"d\"\nmetric = \"m\"\ndescription = \"\"\ndata_card = \"c\"\n",
    );
    let err = stderr(&ws.ml2b().args(["prepare", "--check"]).output().unwrap());
    assert!(err.contains("kk.toml: description: is empty"), "{err}");
}

// ---------------------------------------------------------------- import

/// A root with the languages manifest only.
fn task_csv(rows: &[(&str, &str)]) -> String {
    let mut csv = String::from("comp_name,competition,data_card,description,domain,metric\n");
    for (slug, lang) in rows {
        csv.push_str(&format!(
            "\"{slug} ({lang})\",{slug},\"Files: train.csv, with \"\"quotes\"\"\",\"Predict the target, {lang}.\nSecond line.\",Finance,Metric\n"
        ));
    }
    csv
}

/// The original release's layout with three importable competitions and, if `bad`, one
/// that needs a custom loader.
fn release(bad: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("competitions");
    let mut json = String::from(
        r#"{
 "thapar-summer-school-2025-hack-iii": {"metric": "r2_score", "target_col": "target", "direction": "minimize", "cv_folds": 1},
 "playground-series-s5e6": {"metric": "mean_average_precision", "target_col": "Fertilizer", "direction": "maximize", "cv_folds": 1, "stratified_split": true},
 "alfa-university-income-prediction": {"metric": "wmae", "target_col": "target", "exclude_cols": ["w"], "weight_col": "w", "direction": "minimize", "cv_folds": 1,
   "files": {"train": {"type": "data", "required": true, "extensions": [".csv"]}},
   "file_mapping": {"train": {"filename": "train_clean.csv", "type": "data", "required": true}}}"#,
    );
    if bad {
        json.push_str(r#", "biker-tour-recommendation": {"metric": "mean_average_precision", "target_col": "x", "direction": "maximize", "grader": "biker_recommender"}"#);
    }
    json.push_str("\n}\n");
    write(&c.join("competitions.json"), &json);
    let all = [
        ("thapar-summer-school-2025-hack-iii", "en"),
        ("playground-series-s5e6", "en"),
        ("alfa-university-income-prediction", "en"),
        ("biker-tour-recommendation", "en"),
    ];
    write(&c.join("tasks/English.csv"), task_csv(&all));
    write(
        &c.join("tasks/Arab.csv"),
        task_csv(&[("thapar-summer-school-2025-hack-iii", "ar")]),
    );
    write(
        &c.join("tasks/Ukranian.csv"),
        task_csv(&[
            ("thapar-summer-school-2025-hack-iii", "uk"),
            ("playground-series-s5e6", "uk"),
        ]),
    );
    let mut thapar = String::from("id,f1,target\n");
    let mut fert = String::from("id,soil,Fertilizer\n");
    let mut alfa = String::from("f,w,target\n");
    for i in 0..50 {
        thapar.push_str(&format!("{i},{},{}\n", i % 7, i as f64 * 0.5));
        fert.push_str(&format!("{i},{},{}\n", i % 3, ["DAP", "Urea", "14-35-14"][i % 3]));
        alfa.push_str(&format!("{},{},{}\n", i % 5, 1 + i % 2, i * 10));
    }
    write(
        &c.join("data/thapar-summer-school-2025-hack-iii/train.csv"),
        &thapar,
    );
    write(&c.join("data/playground-series-s5e6/train.csv"), &fert);
    write(
        &c.join("data/alfa-university-income-prediction/train_clean.csv"),
        &alfa,
    );
    dir
}

#[test]
fn import_of_the_original_release_fixes_its_quirks_explicitly() {
    let ws = Workspace::empty_root();
    let rel = release(false);
    let out = ws
        .ml2b()
        .args(["--json", "import", "ml2b"])
        .arg(rel.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["imported"].as_array().unwrap().len(), 3);

    let bench = Benchmark::load(ws.dir.path()).unwrap();
    let get = |id: &str| bench.competitions.iter().find(|c| c.id() == id).unwrap();
    let thapar = get("thapar-summer-school-2025-hack-iii");
    assert_eq!(thapar.manifest.metric.name, "r2");
    assert_eq!(format!("{:?}", thapar.manifest.metric.direction), "Maximize");
    assert!(
        thapar.manifest.import_notes[0].contains("said `minimize`"),
        "{:?}",
        thapar.manifest.import_notes
    );
    assert_eq!(thapar.manifest.languages, ["en", "ar", "uk"]);
    assert_eq!(
        thapar.manifest.columns.id, "ml2b_id",
        "the data's own `id` is kept as a feature"
    );
    assert_eq!(
        thapar.task("ar").unwrap().description,
        "Predict the target, ar.\nSecond line."
    );
    let s5e6 = get("playground-series-s5e6");
    assert_eq!(s5e6.manifest.metric.name, "map@3");
    assert!(s5e6.manifest.split.stratify);
    let alfa = get("alfa-university-income-prediction");
    assert_eq!(
        (
            alfa.manifest.metric.name.as_str(),
            alfa.manifest.columns.weight.as_deref()
        ),
        ("wmae", Some("w"))
    );
    let test = std::fs::read_to_string(alfa.file(Side::Public, "test.csv")).unwrap();
    assert_eq!(
        test.lines().next(),
        Some("id,f,w"),
        "the weight stays a feature, as in the original's X_val"
    );
    assert!(ws.ml2b().args(["prepare", "--check"]).status().unwrap().success());

    let again = ws
        .ml2b()
        .args(["import", "ml2b"])
        .arg(rel.path())
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("already exists"), "{}", stderr(&again));
}

#[test]
fn an_unsupported_competition_is_refused_and_with_strict_nothing_is_written() {
    let ws = Workspace::empty_root();
    let rel = release(true);
    let out = ws
        .ml2b()
        .args(["import", "ml2b", "--strict"])
        .arg(rel.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("refused `biker-tour-recommendation`: grader `biker_recommender`"),
        "{}",
        stderr(&out)
    );
    let left: Vec<_> = std::fs::read_dir(ws.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["manifests"], "nothing but the manifests folder");
    let manifests: Vec<_> = std::fs::read_dir(ws.dir.path().join("manifests"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(manifests, ["languages.toml"], "no manifest was written");
    let partial = ws
        .ml2b()
        .args(["import", "ml2b"])
        .arg(rel.path())
        .output()
        .unwrap();
    assert_eq!(partial.status.code(), Some(1));
    assert_eq!(Benchmark::load(ws.dir.path()).unwrap().competitions.len(), 3);
}

#[test]
fn import_of_mle_bench_folders_keeps_the_given_split() {
    let dir = tempfile::tempdir().unwrap();
    let comp = dir.path().join("spaceship-lite/prepared");
    let (mut train, mut test, mut sample, mut answers) = (
        String::from("PassengerId,Age,Transported\n"),
        String::from("PassengerId,Age\n"),
        String::from("PassengerId,Transported\n"),
        String::from("PassengerId,Transported\n"),
    );
    for i in 0..30 {
        let label = if i % 2 == 0 { "True" } else { "False" };
        if i < 20 {
            train.push_str(&format!("p{i},{},{label}\n", 20 + i));
        } else {
            test.push_str(&format!("p{i},{}\n", 20 + i));
            sample.push_str(&format!("p{i},False\n"));
            answers.push_str(&format!("p{i},{label}\n"));
        }
    }
    write(&comp.join("public/train.csv"), &train);
    write(&comp.join("public/test.csv"), &test);
    write(&comp.join("public/sample_submission.csv"), &sample);
    write(
        &comp.join("public/description.md"),
        "# Spaceship Lite\n\nPredict `Transported`.\n",
    );
    write(&comp.join("private/test.csv"), &answers);
    write(
        &dir.path().join("spaceship-lite/config.yaml"),
        "id: spaceship-lite\ngrader:\n  name: accuracy\n",
    );

    let ws = Workspace::empty_root();
    let out = ws
        .ml2b()
        .args(["import", "mle-bench"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let bench = Benchmark::load(ws.dir.path()).unwrap();
    let c = &bench.competitions[0];
    assert_eq!(
        (
            c.id(),
            c.manifest.metric.name.as_str(),
            c.manifest.columns.id.as_str()
        ),
        ("spaceship-lite", "accuracy", "PassengerId")
    );
    assert_eq!(c.manifest.translation, Translation::None);
    assert_eq!(c.task("en").unwrap().title, "Spaceship Lite");
    assert_eq!(
        std::fs::read_to_string(c.file(Side::Private, "answers.csv")).unwrap(),
        answers
    );
    assert!(ws.ml2b().args(["prepare", "--check"]).status().unwrap().success());

    write(
        &dir.path().join("spaceship-lite/config.yaml"),
        "grader:\n  name: spaceship-metric\n",
    );
    let ws = Workspace::empty_root();
    let out = ws
        .ml2b()
        .args(["import", "mle-bench"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("MLE-bench's own grade.py") && stderr(&out).contains("pass --repo"),
        "{}",
        stderr(&out)
    );
}
