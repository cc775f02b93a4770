//! `ml2b import mle-bench DATA_DIR --repo CHECKOUT`: MLE-bench's layouts, written here by
//! hand in their exact shapes (a checkout's `mlebench/competitions/<id>/{config.yaml,
//! description.md,leaderboard.csv,grade.py}` and `experiments/splits/`, and the data
//! `mlebench prepare` writes under `<id>/prepared/{public,private}`); the grading program
//! runs in the real sandbox.

use std::path::{Path, PathBuf};

use ml2b::competition::{Benchmark, Side};
use ml2b::manifest::competition::{Domain, TaskType};
use serde_json::Value;

use crate::common::{Workspace, stderr, write};

/// A checkout and a data directory side by side.
pub(crate) struct Mle {
    _dir: tempfile::TempDir,
    pub repo: PathBuf,
    pub data: PathBuf,
}

impl Mle {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("mle-bench");
        let data = dir.path().join("data");
        write(
            &repo.join("mlebench/competitions/utils.py"),
            "def select_id(df, col):\n    return df.sort_values(col).reset_index(drop=True)\n",
        );
        write(
            &repo.join("experiments/splits/low.txt"),
            "spooky-author-identification\ntabular-playground-series-may-2022\n",
        );
        write(&repo.join(".git/HEAD"), "ref: refs/heads/main\n");
        write(
            &repo.join(".git/refs/heads/main"),
            "783b15a0000000000000000000000000000000aa\n",
        );
        Self {
            _dir: dir,
            repo,
            data,
        }
    }

    /// One competition: its checkout folder and its prepared data.
    pub fn competition(&self, id: &str, grader: &str, files: &[(&str, impl AsRef<[u8]>)]) {
        self.competition_at(id, grader, "public/sample_submission.csv", files);
    }

    /// [`Mle::competition`] with the sample submission the config names (relative to
    /// `prepared/`).
    pub fn competition_at(&self, id: &str, grader: &str, sample: &str, files: &[(&str, impl AsRef<[u8]>)]) {
        let answers = if files.iter().any(|(n, _)| *n == "private/answers.csv") {
            "answers.csv"
        } else {
            "test.csv"
        };
        let config = format!(
            "id: {id}\nname: {id} (lite)\ncompetition_type: simple\nawards_medals: false\n\
             prizes:\n  - position: 1\n    value: 100\n\
             description: mlebench/competitions/{id}/description.md\n\n\
             dataset:\n  answers: {id}/prepared/private/{answers}\n  \
             sample_submission: {id}/prepared/{sample}\n\n\
             grader:\n  name: {grader}\n  grade_fn: mlebench.competitions.{id}.grade:grade\n\n\
             preparer: mlebench.competitions.{id}.prepare:prepare\n"
        );
        let comp = self.repo.join("mlebench/competitions").join(id);
        write(&comp.join("config.yaml"), &config);
        write(&comp.join("description.md"), format!("# {id}\n\nPredict it.\n"));
        write(
            &comp.join("prepare.py"),
            "raise SystemExit('never run by ml2b')\n",
        );
        for (name, text) in files {
            let path = match name.strip_prefix("checkout/") {
                Some(rel) => comp.join(rel),
                None => self.data.join(id).join("prepared").join(name),
            };
            write(&path, text);
        }
    }

    pub fn import(&self, ws: &Workspace, extra: &[&str]) -> std::process::Output {
        ws.ml2b()
            .args(["--json", "import", "mle-bench"])
            .arg(&self.data)
            .arg("--repo")
            .arg(&self.repo)
            .args(extra)
            .output()
            .unwrap()
    }
}

/// The score of the team at 1-based `position` of a leaderboard written by [`leaderboard`],
/// as Kaggle writes it (4 decimals, which pandas reads as the nearest double).
fn score_text(position: usize, higher_better: bool) -> String {
    let i = (position - 1) as f64;
    let score = if higher_better {
        0.99 - i * 0.0005
    } else {
        0.1 + i * 0.01
    };
    format!("{score:.4}")
}

fn score_at(position: usize, higher_better: bool) -> f64 {
    score_text(position, higher_better).parse().unwrap()
}

/// A leaderboard of `n` teams, best first (descending when `higher_better`).
pub(crate) fn leaderboard(n: usize, higher_better: bool) -> String {
    let mut s = String::from("scoreNullable,teamId,teamName,submissionDate,score\n");
    for i in 0..n {
        let score = score_text(i + 1, higher_better);
        s.push_str(&format!("{score},{i},team {i},2020-01-01,{score}\n"));
    }
    s
}

/// spooky-style: text, three authors, MLE-bench's one-hot answers, multi-class log loss.
fn spooky(m: &Mle) {
    let authors = ["EAP", "HPL", "MWS"];
    let (mut train, mut test, mut sample, mut answers) = (
        String::from("id,text,author\n"),
        String::from("id,text\n"),
        String::from("id,EAP,HPL,MWS\n"),
        String::from("id,EAP,HPL,MWS\n"),
    );
    for i in 0..40 {
        let a = authors[i % 3];
        let text = format!("\"words of {a}, line {i}\"");
        if i < 28 {
            train.push_str(&format!("id{i:03},{text},{a}\n"));
        } else {
            test.push_str(&format!("id{i:03},{text}\n"));
            sample.push_str(&format!(
                "id{i:03},0.403493538995863,0.287808366106543,0.308698094897594\n"
            ));
            let hot: Vec<&str> = authors.iter().map(|x| if *x == a { "1" } else { "0" }).collect();
            answers.push_str(&format!("id{i:03},{}\n", hot.join(",")));
        }
    }
    m.competition(
        "spooky-author-identification",
        "multi-class-log-loss",
        &[
            ("public/train.csv", train),
            ("public/test.csv", test),
            ("public/sample_submission.csv", sample),
            ("private/test.csv", answers),
            ("checkout/leaderboard.csv", leaderboard(150, false)),
        ],
    );
}

/// tabular-playground-may-2022-style: the answers are the whole test rows (features first).
fn tpsmay(m: &Mle) {
    let (mut train, mut test, mut sample, mut answers) = (
        String::from("id,f_00,f_01,target\n"),
        String::from("id,f_00,f_01\n"),
        String::from("id,target\n"),
        String::from("id,f_00,f_01,target\n"),
    );
    for i in 0..60 {
        let (f0, f1, y) = (i as f64 * 0.37 % 5.0, (i * 7 % 11) as f64, (i * 3 % 5 < 2) as u8);
        if i < 40 {
            train.push_str(&format!("{i},{f0},{f1},{y}\n"));
        } else {
            test.push_str(&format!("{i},{f0},{f1}\n"));
            sample.push_str(&format!("{i},0.5\n"));
            answers.push_str(&format!("{i},{f0},{f1},{y}\n"));
        }
    }
    m.competition(
        "tabular-playground-series-may-2022",
        "auc-roc",
        &[
            ("public/train.csv", train),
            ("public/test.csv", test),
            ("public/sample_submission.csv", sample),
            ("private/test.csv", answers),
            ("checkout/leaderboard.csv", leaderboard(500, true)),
        ],
    );
}

/// nomad2018-style: two targets, column-wise RMSLE, a geometry folder per row in public/.
fn nomad(m: &Mle) {
    let (mut train, mut test, mut sample, mut answers) = (
        String::from("id,spacegroup,formation_energy_ev_natom,bandgap_energy_ev\n"),
        String::from("id,spacegroup\n"),
        String::from("id,formation_energy_ev_natom,bandgap_energy_ev\n"),
        String::from("id,spacegroup,formation_energy_ev_natom,bandgap_energy_ev\n"),
    );
    let mut files = Vec::new();
    for i in 1..=30 {
        let (a, b) = (0.1 + i as f64 * 0.01, 1.5 + i as f64 * 0.1);
        if i <= 20 {
            train.push_str(&format!("{i},{},{a},{b}\n", 12 + i % 3));
            files.push((
                format!("public/train/{i}/geometry.xyz"),
                format!("lattice_vector {i} 0 0\n"),
            ));
        } else {
            test.push_str(&format!("{i},{}\n", 12 + i % 3));
            sample.push_str(&format!("{i},0.1779,1.8892\n"));
            answers.push_str(&format!("{i},{},{a},{b}\n", 12 + i % 3));
            files.push((
                format!("public/test/{i}/geometry.xyz"),
                format!("lattice_vector {i} 1 0\n"),
            ));
        }
    }
    let mut all: Vec<(&str, String)> = vec![
        ("public/train.csv", train),
        ("public/test.csv", test),
        ("public/sample_submission.csv", sample),
        ("private/test.csv", answers),
    ];
    all.extend(files.iter().map(|(n, t)| (n.as_str(), t.clone())));
    m.competition("nomad-lite", "mean-column-wise-rmsle", &all);
}

/// A grader no ml2b metric computes: the checkout's own grade.py (a mean absolute error
/// over `value` that needs the competition's helper module and the shared utils).
fn program(m: &Mle, id: &str, grade_py: &str) {
    let (mut train, mut test, mut sample, mut answers) = (
        String::from("id,x,value\n"),
        String::from("id,x\n"),
        String::from("id,value\n"),
        String::from("id,value\n"),
    );
    for i in 0..30 {
        let x = i as f64;
        if i < 20 {
            train.push_str(&format!("{i},{x},{}\n", 2.0 * x + 1.0));
        } else {
            test.push_str(&format!("{i},{x}\n"));
            sample.push_str(&format!("{i},0\n"));
            answers.push_str(&format!("{i},{}\n", 2.0 * x + 1.0));
        }
    }
    m.competition(
        id,
        "average-custom-distance",
        &[
            ("public/train.csv", train),
            ("public/test.csv", test),
            ("public/sample_submission.csv", sample),
            ("private/answers.csv", answers),
            ("checkout/leaderboard.csv", leaderboard(40, false)),
            ("checkout/grade.py", grade_py.to_string()),
            ("checkout/scale.py", "SCALE = 1.0\n".to_string()),
        ],
    );
}

const GRADE_PY: &str = "\
import numpy as np
import pandas as pd

from mlebench.competitions.utils import select_id
from mlebench.grade_helpers import InvalidSubmissionError

from .scale import SCALE


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    if len(submission) != len(answers):
        raise InvalidSubmissionError(f'expected {len(answers)} rows, got {len(submission)}')
    s, a = select_id(submission, 'id'), select_id(answers, 'id')
    return float(np.mean(np.abs(s['value'] - a['value']))) * SCALE
";

/// spaceship-titanic-style: boolean labels, accuracy, a leaderboard of 1,200 teams.
fn spaceship(m: &Mle) {
    let (mut train, mut test, mut sample, mut answers) = (
        String::from("PassengerId,HomePlanet,Age,Transported\n"),
        String::from("PassengerId,HomePlanet,Age\n"),
        String::from("PassengerId,Transported\n"),
        String::from("PassengerId,Transported\n"),
    );
    for i in 0..40 {
        let (planet, age) = (["Earth", "Mars", "Europa"][i % 3], 18 + i % 30);
        let y = if (i * 7) % 5 < 2 { "True" } else { "False" };
        let id = format!("{:04}_01", i);
        if i < 28 {
            train.push_str(&format!("{id},{planet},{age},{y}\n"));
        } else {
            test.push_str(&format!("{id},{planet},{age}\n"));
            sample.push_str(&format!("{id},False\n"));
            answers.push_str(&format!("{id},{y}\n"));
        }
    }
    m.competition(
        "spaceship-titanic",
        "accuracy",
        &[
            ("public/train.csv", train),
            ("public/test.csv", test),
            ("public/sample_submission.csv", sample),
            ("private/test.csv", answers),
            ("checkout/leaderboard.csv", leaderboard(1200, true)),
        ],
    );
}

/// automated-essay-scoring-style: free text, scores 1–6, quadratic weighted kappa; the
/// answers also hold the essays.
fn essays(m: &Mle) {
    let (mut train, mut test, mut sample, mut answers) = (
        String::from("essay_id,full_text,score\n"),
        String::from("essay_id,full_text\n"),
        String::from("essay_id,score\n"),
        String::from("essay_id,full_text,score\n"),
    );
    for i in 0..36 {
        let score = 1 + i % 6;
        let text = format!("\"essay {i} argues that cars should be limited in {score} ways\"");
        if i < 24 {
            train.push_str(&format!("e{i},{text},{score}\n"));
        } else {
            test.push_str(&format!("e{i},{text}\n"));
            sample.push_str(&format!("e{i},3\n"));
            answers.push_str(&format!("e{i},{text},{score}\n"));
        }
    }
    m.competition(
        "learning-agency-lab-automated-essay-scoring-2",
        "quadratic-weighted-kappa",
        &[
            ("public/train.csv", train),
            ("public/test.csv", test),
            ("public/sample_submission.csv", sample),
            ("private/test.csv", answers),
        ],
    );
}

/// A regression (taxi-fare-style, RMSE, in train.csv unlike the real one's labels.csv), a correlation (patent-phrase-style, Pearson) and a
/// multi-class macro F1: one numeric target each, the answers beside the features.
fn small_tabular(m: &Mle, id: &str, grader: &str, target: &str, value: fn(usize) -> String) {
    let (mut train, mut test, mut sample, mut answers) = (
        format!("key,a,b,{target}\n"),
        String::from("key,a,b\n"),
        format!("key,{target}\n"),
        format!("key,{target}\n"),
    );
    for i in 0..40 {
        let (a, b) = (i % 7, (i * 3) % 11);
        if i < 25 {
            train.push_str(&format!("k{i},{a},{b},{}\n", value(i)));
        } else {
            test.push_str(&format!("k{i},{a},{b}\n"));
            sample.push_str(&format!("k{i},{}\n", value(0)));
            answers.push_str(&format!("k{i},{}\n", value(i)));
        }
    }
    m.competition(
        id,
        grader,
        &[
            ("public/train.csv", train),
            ("public/test.csv", test),
            ("public/sample_submission.csv", sample),
            ("private/test.csv", answers),
        ],
    );
}

/// leaf-classification-style one-hot answers where one class (`D`) is in no test row.
fn leaves(m: &Mle) {
    let species = ["A", "B", "C", "D"];
    let (mut train, mut test, mut sample, mut answers) = (
        String::from("id,margin1,margin2,species\n"),
        String::from("id,margin1,margin2\n"),
        String::from("id,A,B,C,D\n"),
        String::from("id,A,B,C,D\n"),
    );
    for i in 0..30 {
        let (m1, m2) = (i as f64 * 0.01, (i % 4) as f64 * 0.02);
        if i < 18 {
            train.push_str(&format!("{i},{m1},{m2},{}\n", species[i % 4]));
        } else {
            let class = i % 3;
            test.push_str(&format!("{i},{m1},{m2}\n"));
            sample.push_str(&format!("{i},0.25,0.25,0.25,0.25\n"));
            let hot: Vec<&str> = (0..4).map(|k| if k == class { "1" } else { "0" }).collect();
            answers.push_str(&format!("{i},{}\n", hot.join(",")));
        }
    }
    m.competition(
        "leaf-classification",
        "multi-class-log-loss",
        &[
            ("public/train.csv", train),
            ("public/test.csv", test),
            ("public/sample_submission.csv", sample),
            ("private/test.csv", answers),
        ],
    );
}

/// Every competition of the fixture: nine MLE-bench grader names, leaderboards in the four
/// team-count bands (40, 150, 500 and 1,200 teams).
fn all(m: &Mle) {
    spooky(m);
    tpsmay(m);
    nomad(m);
    program(m, "custom-lite", GRADE_PY);
    spaceship(m);
    essays(m);
    leaves(m);
    small_tabular(
        m,
        "taxi-fare-lite",
        "root-mean-squared-error",
        "fare_amount",
        |i| format!("{}", 4.5 + i as f64 * 0.75),
    );
    small_tabular(
        m,
        "us-patent-phrase-to-phrase-matching",
        "pearson-correlation-coefficient",
        "score",
        |i| format!("{}", [0.0, 0.25, 0.5, 0.75, 1.0][i % 5]),
    );
    small_tabular(m, "macro-f1-lite", "macro-f1-score", "label", |i| {
        format!("{}", i % 3)
    });
}

/// The imported competitions of a `--json` import that refused none.
pub(crate) fn imported(out: &std::process::Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", stderr(out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["refused"], serde_json::json!([]), "{report}");
    report["imported"].as_array().unwrap().clone()
}

#[test]
fn a_checkout_and_its_prepared_data_import_with_columns_by_name() {
    let m = Mle::new();
    all(&m);
    let ws = Workspace::empty_root();
    let report = imported(&m.import(&ws, &[]));
    let grading: Vec<(&str, &str, &str)> = report
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap(),
                c["grading"].as_str().unwrap(),
                c["metric"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        grading,
        [
            ("custom-lite", "program", "program"),
            ("leaf-classification", "native", "log_loss"),
            (
                "learning-agency-lab-automated-essay-scoring-2",
                "native",
                "qwk_sklearn"
            ),
            ("macro-f1-lite", "native", "f1_macro"),
            ("nomad-lite", "native", "rmsle_multi"),
            ("spaceship-titanic", "native", "accuracy"),
            ("spooky-author-identification", "native", "log_loss"),
            ("tabular-playground-series-may-2022", "native", "roc_auc"),
            ("taxi-fare-lite", "native", "rmse"),
            ("us-patent-phrase-to-phrase-matching", "native", "pearson"),
        ]
    );
    let bench = Benchmark::load(ws.dir.path()).unwrap();
    let get = |id: &str| bench.select(&[id.to_string()]).unwrap()[0];

    // One-hot answers stay one-hot; the solution learns the label column train.csv has and
    // test.csv lacks.
    let spooky = get("spooky-author-identification");
    assert_eq!(spooky.manifest.columns.targets, ["author"]);
    assert_eq!(spooky.manifest.columns.one_hot, ["EAP", "HPL", "MWS"]);
    assert_eq!(spooky.manifest.task, TaskType::Multiclass);
    let answers = std::fs::read_to_string(spooky.file(Side::Private, "answers.csv")).unwrap();
    assert!(
        answers.starts_with("id,EAP,HPL,MWS\nid028,0,1,0\nid029,0,0,1\nid030,1,0,0\n"),
        "{answers}"
    );
    assert!(
        spooky
            .manifest
            .import_notes
            .iter()
            .any(|n| n.contains("kept and graded one-hot (0 of them set in no row)")),
        "{:?}",
        spooky.manifest.import_notes
    );
    let leaf = get("leaf-classification");
    assert_eq!(leaf.manifest.columns.one_hot, ["A", "B", "C", "D"]);
    assert!(
        leaf.manifest
            .import_notes
            .iter()
            .any(|n| n.contains("(1 of them set in no row)")),
        "{:?}",
        leaf.manifest.import_notes
    );

    // The domain comes from the data: free text in train.csv, never in the target.
    for (id, domain) in [
        ("spooky-author-identification", Domain::Text),
        ("learning-agency-lab-automated-essay-scoring-2", Domain::Text),
        ("spaceship-titanic", Domain::Tabular),
        ("nomad-lite", Domain::Tabular),
    ] {
        let c = get(id);
        assert_eq!(c.manifest.domain, domain, "{id}");
        assert!(
            c.manifest.import_notes.iter().any(|n| n.starts_with("domain: ")),
            "{id}"
        );
    }
    assert!(
        get("learning-agency-lab-automated-essay-scoring-2")
            .manifest
            .import_notes
            .iter()
            .any(|n| n.starts_with("domain: text, from its free-text column(s) `full_text`")),
    );
    let mle = spooky.manifest.mle_bench.as_ref().unwrap();
    assert_eq!(mle.grader, "multi-class-log-loss");
    assert_eq!(mle.revision, "783b15a0000000000000000000000000000000aa");
    assert_eq!(mle.leaderboard, "mle-bench/leaderboard.csv");
    assert_eq!(
        mle.leaderboard_blake3,
        blake3::hash(leaderboard(150, false).as_bytes())
            .to_hex()
            .to_string()
    );

    // The target is the sample submission's column found by name, not the first feature.
    let tps = get("tabular-playground-series-may-2022");
    assert_eq!(tps.manifest.columns.targets, ["target"]);
    let answers = std::fs::read_to_string(tps.file(Side::Private, "answers.csv")).unwrap();
    assert!(answers.starts_with("id,target\n40,"), "{answers}");

    // Every folder of public/ is copied and checksummed.
    let nomad = get("nomad-lite");
    assert_eq!(
        nomad.manifest.columns.targets,
        ["formation_energy_ev_natom", "bandgap_energy_ev"]
    );
    for rel in ["train/3/geometry.xyz", "test/25/geometry.xyz"] {
        assert!(nomad.manifest.files.public.contains_key(rel), "{rel}");
        assert!(nomad.file(Side::Public, rel).is_file(), "{rel}");
    }
    assert!(
        nomad
            .manifest
            .import_notes
            .iter()
            .any(|n| n.contains("no leaderboard"))
    );

    // The program: its files and a direction read from the leaderboard.
    let custom = get("custom-lite");
    let program: Vec<&String> = custom
        .manifest
        .mle_bench
        .as_ref()
        .unwrap()
        .program
        .keys()
        .collect();
    assert_eq!(
        program,
        [
            "mle-bench/grader/mlebench/competitions/custom-lite/grade.py",
            "mle-bench/grader/mlebench/competitions/custom-lite/scale.py",
            "mle-bench/grader/mlebench/competitions/utils.py",
        ]
    );
    assert_eq!(
        custom.manifest.metric.direction,
        ml2b::metrics::grading::Direction::Minimize
    );
    let prepared = ws.ml2b().args(["prepare", "--check"]).output().unwrap();
    assert!(prepared.status.success(), "{}", stderr(&prepared));
}

/// `ml2b --json grade-sample FILE --competition ID` in `ws`.
pub(crate) fn grade_sample(ws: &Workspace, id: &str, submission: &Path) -> Value {
    let out = ws
        .ml2b()
        .args(["--json", "grade-sample"])
        .arg(submission)
        .args(["--competition", id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{id}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)))
}

#[test]
fn each_competition_grades_a_perfect_submission_and_ranks_it_in_its_band() {
    let m = Mle::new();
    all(&m);
    let ws = Workspace::empty_root();
    imported(&m.import(&ws, &[]));
    let bench = Benchmark::load(ws.dir.path()).unwrap();
    // The kept answers are a submission in the sample submission's shape.
    let perfect = |id: &str| {
        let c = bench.select(&[id.to_string()]).unwrap()[0];
        let path = ws.dir.path().join(format!("{id}.csv"));
        std::fs::copy(c.file(Side::Private, "answers.csv"), &path).unwrap();
        grade_sample(&ws, id, &path)
    };
    let best = [
        ("custom-lite", 0.0),
        ("leaf-classification", 0.0),
        ("learning-agency-lab-automated-essay-scoring-2", 1.0),
        ("macro-f1-lite", 1.0),
        ("taxi-fare-lite", 0.0),
        ("nomad-lite", 0.0),
        ("spaceship-titanic", 1.0),
        ("spooky-author-identification", 0.0),
        ("tabular-playground-series-may-2022", 1.0),
        ("us-patent-phrase-to-phrase-matching", 1.0),
    ];
    for (id, score) in best {
        let r = perfect(id);
        assert_eq!(r["valid_submission"], true, "{id}: {r}");
        assert_eq!(r["score"], score, "{id}: {r}");
    }

    // MLE-bench's positions (1-based) of gold, silver and bronze, worked out by hand from
    // grade_helpers.py for each band: < 100 teams: 10%, 20%, 40%; 100–249: 10, 20%, 40%;
    // 250–999: 10 + 0.2%, 50, 100; ≥ 1000: 10 + 0.2%, 5%, 10%.
    let bands = [
        ("custom-lite", 40, false, [4, 8, 16]),
        ("spooky-author-identification", 150, false, [10, 30, 60]),
        ("tabular-playground-series-may-2022", 500, true, [11, 50, 100]),
        ("spaceship-titanic", 1200, true, [12, 60, 120]),
    ];
    for (id, teams, higher_better, [gold, silver, bronze]) in bands {
        let r = perfect(id);
        assert_eq!(r["is_lower_better"], !higher_better, "{id}: {r}");
        assert_eq!(r["gold_threshold"], score_at(gold, higher_better), "{id}: {r}");
        assert_eq!(
            r["silver_threshold"],
            score_at(silver, higher_better),
            "{id}: {r}"
        );
        assert_eq!(
            r["bronze_threshold"],
            score_at(bronze, higher_better),
            "{id}: {r}"
        );
        // pandas' median of an even count: the mean of the two middle scores.
        let median = (score_at(teams / 2, higher_better) + score_at(teams / 2 + 1, higher_better)) / 2.0;
        assert_eq!(r["median_threshold"], median, "{id}: {r}");
        assert_eq!(r["medal"], "gold", "{id}: {r}");
        assert_eq!(r["any_medal"], true, "{id}: {r}");
    }
    assert_eq!(
        perfect("nomad-lite")["medal"],
        Value::Null,
        "no leaderboard, no medal"
    );
}

/// MLE-bench's log loss over one-hot answers counts every class column, also one that no
/// answer row holds: the score is −mean(ln p(true class)) of rows that sum to 1.
#[test]
fn a_class_no_answer_holds_counts_in_the_one_hot_log_loss() {
    let m = Mle::new();
    leaves(&m);
    let ws = Workspace::empty_root();
    imported(&m.import(&ws, &[]));
    let mut submission = String::from("id,A,B,C,D\n");
    let mut expected = 0.0;
    for (k, i) in (18..30).enumerate() {
        let p = 0.4 + 0.04 * k as f64;
        let rest = (1.0 - p) / 3.0;
        let row: Vec<String> = (0..4)
            .map(|c| if c == i % 3 { p } else { rest }.to_string())
            .collect();
        submission.push_str(&format!("{i},{}\n", row.join(",")));
        expected -= p.ln();
    }
    expected /= 12.0;
    let path = ws.dir.path().join("leaf.csv");
    write(&path, &submission);
    let r = grade_sample(&ws, "leaf-classification", &path);
    let exact = r["exact_score"].as_f64().unwrap();
    assert!((exact - expected).abs() < 1e-12, "{exact} vs {expected}: {r}");

    // A solution learns the label column and predicts a probability per class; its
    // predictions are graded against the one-hot answers.
    let code = solution(
        &ws,
        "\
from sklearn.linear_model import LogisticRegression

def train_and_predict(data, X_val):
    model = LogisticRegression(max_iter=500).fit(data[['margin1', 'margin2']], data['species'])
    return model.predict_proba(X_val[['margin1', 'margin2']])
",
    );
    let run = grade_file(&ws, "leaf-classification", &code);
    assert_eq!(run["outcome"], "ok", "{run}");
    assert_eq!(run["invalid_reason"], Value::Null, "{run}");
    assert!(run["score"].as_f64().unwrap() > 0.0, "{run}");
}

#[test]
fn a_split_or_only_selects_and_metric_overrides_one() {
    let m = Mle::new();
    spooky(&m);
    tpsmay(&m);
    nomad(&m);
    let ws = Workspace::empty_root();
    let lite = imported(&m.import(&ws, &["--split", "lite"]));
    let ids: Vec<&str> = lite.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "spooky-author-identification",
            "tabular-playground-series-may-2022"
        ]
    );

    let ws = Workspace::empty_root();
    let out = m.import(&ws, &["--metric", "rmse"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--metric overrides the grader of one competition"),
        "{}",
        stderr(&out)
    );
    let one = imported(&m.import(&ws, &["--only", "nomad-lite", "--metric", "rmse_multi"]));
    assert_eq!(one[0]["metric"], "rmse_multi");
    assert!(
        one[0]["notes"]
            .to_string()
            .contains("--metric rmse_multi (MLE-bench's grader: mean-column-wise-rmsle)")
    );
}

/// Issue 43, item 10: `--split lite` with a competition that cannot be imported imports the
/// others, lists the refusals with their reasons (stderr and `--json`), exits 1; nothing of
/// a refused competition is written. `--strict` imports nothing, `--allow-refused` exits 0.
#[test]
fn what_cannot_be_imported_is_refused_naming_why_and_the_rest_imported() {
    let m = Mle::new();
    tpsmay(&m);
    // One-hot answers with a row that is not one-hot.
    spooky(&m);
    let answers = m
        .data
        .join("spooky-author-identification/prepared/private/test.csv");
    let text = std::fs::read_to_string(&answers)
        .unwrap()
        .replacen("1,0,0", "1,1,0", 1);
    std::fs::write(&answers, text).unwrap();
    // A competition whose data is images with no train.csv, listed in the lite split.
    m.competition(
        "images-lite",
        "accuracy",
        &[
            ("public/train/0.png", "png"),
            ("public/sample_submission.csv", "id,label\n0,1\n"),
            ("private/test.csv", "id,label\n0,1\n"),
        ],
    );
    write(
        &m.repo.join("experiments/splits/low.txt"),
        "images-lite\nspooky-author-identification\ntabular-playground-series-may-2022\n",
    );
    let ws = Workspace::empty_root();
    let out = m.import(&ws, &["--split", "lite"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids = |key: &str| -> Vec<String> {
        report[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids("imported"), ["tabular-playground-series-may-2022"]);
    assert_eq!(ids("refused"), ["images-lite", "spooky-author-identification"]);
    let reasons = report["refused"].to_string();
    assert!(
        reasons.contains("has no train.csv") && reasons.contains("custom loader"),
        "{reasons}"
    );
    assert!(
        reasons.contains("test.csv: row") && reasons.contains("not one-hot"),
        "{reasons}"
    );
    let err = stderr(&out);
    assert!(
        err.contains("refused `images-lite`: ") && err.contains("refused `spooky-author-identification`: "),
        "{err}"
    );
    assert!(err.contains("2 competition(s) refused, 1 imported"), "{err}");
    let mut manifests: Vec<_> = std::fs::read_dir(ws.dir.path().join("manifests/competitions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    manifests.sort();
    assert_eq!(manifests, ["tabular-playground-series-may-2022.toml"]);
    let data: Vec<_> = std::fs::read_dir(ws.dir.path().join("data"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        data,
        ["tabular-playground-series-may-2022"],
        "nothing of the refused"
    );
    assert!(ws.ml2b().args(["prepare", "--check"]).status().unwrap().success());

    let ws = Workspace::empty_root();
    let allowed = m.import(&ws, &["--split", "lite", "--allow-refused"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
    let ws = Workspace::empty_root();
    let strict = m.import(&ws, &["--split", "lite", "--strict"]);
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));
    let manifests: Vec<_> = std::fs::read_dir(ws.dir.path().join("manifests"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(manifests, ["languages.toml"], "nothing is written");
    assert!(!ws.dir.path().join("data").exists());

    // Without the checkout there is no config to read the grader from.
    let out = ws
        .ml2b()
        .args(["import", "mle-bench"])
        .arg(&m.data)
        .args(["--only", "tabular-playground-series-may-2022"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("pass --repo MLEBENCH_CHECKOUT"),
        "{}",
        stderr(&out)
    );
}

pub(crate) fn solution(ws: &Workspace, body: &str) -> PathBuf {
    let path = ws.dir.path().join("solution.py");
    std::fs::write(&path, body).unwrap();
    path
}

pub(crate) fn grade_file(ws: &Workspace, id: &str, code: &Path) -> Value {
    let out = ws
        .ml2b()
        .args(["--json", "grade-file"])
        .arg(code)
        .args(["--competition", id, "--format", "mono"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)))
}

const LINEAR: &str = "\
import numpy as np

def train_and_predict(data, X_val):
    slope, intercept = np.polyfit(data['x'], data['value'], 1)
    return X_val['x'] * slope + intercept + OFFSET
";

#[test]
fn a_grading_program_scores_in_the_sandbox_and_is_contained() {
    let m = Mle::new();
    program(&m, "custom-lite", GRADE_PY);
    let hostile = "\
import os, socket
import pandas as pd

def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    notes = []
    try:
        socket.create_connection(('1.1.1.1', 80), timeout=3)
        notes.append('network reached')
    except OSError as e:
        notes.append(f'no network ({e.errno})')
    for path in ['/data/answers.csv', '/tmp/../data/leak.txt', '/sandbox/x']:
        try:
            open(path, 'w').write('x')
            notes.append(f'wrote {path}')
        except OSError as e:
            notes.append(f'cannot write {path}')
    raise RuntimeError('; '.join(notes))
";
    program(&m, "hostile-lite", hostile);
    let ws = Workspace::empty_root();
    imported(&m.import(&ws, &[]));

    let exact = grade_file(
        &ws,
        "custom-lite",
        &solution(&ws, &format!("OFFSET = 0.0\n{LINEAR}")),
    );
    assert_eq!(exact["outcome"], "ok", "{exact}");
    assert!(exact["score"].as_f64().unwrap() < 1e-9, "{exact}");
    let off = grade_file(
        &ws,
        "custom-lite",
        &solution(&ws, &format!("OFFSET = 0.25\n{LINEAR}")),
    );
    assert!((off["score"].as_f64().unwrap() - 0.25).abs() < 1e-9, "{off}");

    let report = grade_file(
        &ws,
        "hostile-lite",
        &solution(&ws, &format!("OFFSET = 0.0\n{LINEAR}")),
    );
    let reason = report["invalid_reason"].as_str().unwrap_or_default();
    assert_eq!(report["outcome"], "bad_predictions", "{report}");
    assert!(
        reason.starts_with("grade.py raised RuntimeError: no network"),
        "{reason}"
    );
    for path in ["/data/answers.csv", "/tmp/../data/leak.txt", "/sandbox/x"] {
        assert!(reason.contains(&format!("cannot write {path}")), "{reason}");
    }
    let bench = Benchmark::load(ws.dir.path()).unwrap();
    let c = bench.select(&["hostile-lite".to_string()]).unwrap()[0];
    c.verify_files(Side::Private).unwrap();
}

/// `ml2b --json grade-sample FILE --competition ID` in `ws`, valid or not: exit code and report.
fn grade_sample_any(ws: &Workspace, id: &str, submission: &Path) -> (i32, Value) {
    let out = ws
        .ml2b()
        .args(["--json", "grade-sample"])
        .arg(submission)
        .args(["--competition", id])
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    (out.status.code().unwrap(), report)
}

/// Issue 43, items 3, 6 and 7: on an MLE-bench competition `grade-sample` gives its
/// `grade.py`'s verdict. spooky's compares the column set, so the perfect file with one
/// extra column is invalid (it won gold); every class at 1 does not sum to 1 (it scored ε
/// and won gold); spaceship's boolean answers against a cell `high` are scikit-learn's mix
/// of label types (it scored a valid accuracy). Where `grade.py` is demonstrably wrong
/// (new-york-city-taxi pairs rows sorted by key without comparing the keys) ml2b keeps its
/// verdict and says so, in the text report too; where they agree it says nothing.
#[test]
fn grade_sample_gives_mle_bench_verdicts_and_flags_where_it_departs() {
    let m = Mle::new();
    spooky(&m);
    spaceship(&m);
    small_tabular(
        &m,
        "new-york-city-taxi-fare-prediction",
        "root-mean-squared-error",
        "fare_amount",
        |i| format!("{}", 4.5 + i as f64 * 0.75),
    );
    // taxi's prepare.py writes its training rows as `labels.csv` (src/competition/import/mle_layout.rs).
    let public = m.data.join("new-york-city-taxi-fare-prediction/prepared/public");
    std::fs::rename(public.join("train.csv"), public.join("labels.csv")).unwrap();
    let ws = Workspace::empty_root();
    imported(&m.import(&ws, &[]));
    let bench = Benchmark::load(ws.dir.path()).unwrap();
    let answers = |id: &str| {
        let c = bench.select(&[id.to_string()]).unwrap()[0];
        std::fs::read_to_string(c.file(Side::Private, "answers.csv")).unwrap()
    };
    let file = |name: &str, text: String| {
        let path = ws.dir.path().join(name);
        write(&path, text);
        path
    };
    let spooky = "spooky-author-identification";
    let perfect = answers(spooky);
    let (code, r) = grade_sample_any(&ws, spooky, &file("perfect.csv", perfect.clone()));
    assert_eq!(
        (code, &r["medal"], &r["mle_bench_departure"]),
        (0, &Value::from("gold"), &Value::Null),
        "{r}"
    );

    let extra: String = perfect
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{l},{}\n", if i == 0 { "extra" } else { "0" }))
        .collect();
    let (code, r) = grade_sample_any(&ws, spooky, &file("extra.csv", extra));
    assert_eq!(
        (code, &r["valid_submission"], &r["medal"]),
        (1, &Value::from(false), &Value::from("none")),
        "{r}"
    );
    assert!(
        r["reason"].as_str().unwrap().contains("exactly the columns"),
        "{r}"
    );

    let ones: String = perfect
        .lines()
        .enumerate()
        .map(|(i, l)| match i {
            0 => format!("{l}\n"),
            _ => format!("{},1,1,1\n", l.split(',').next().unwrap()),
        })
        .collect();
    let (code, r) = grade_sample_any(&ws, spooky, &file("ones.csv", ones));
    assert_eq!(
        (code, &r["valid_submission"], &r["any_medal"]),
        (1, &Value::from(false), &Value::from(false)),
        "{r}"
    );
    assert!(r["reason"].as_str().unwrap().contains("sum to 3"), "{r}");

    let spaceship = answers("spaceship-titanic");
    let high = spaceship.replacen(",True\n", ",high\n", 1);
    assert_ne!(high, spaceship);
    let (code, r) = grade_sample_any(&ws, "spaceship-titanic", &file("high.csv", high));
    assert_eq!((code, &r["valid_submission"]), (1, &Value::from(false)), "{r}");
    assert!(
        r["reason"].as_str().unwrap().contains("mix of label types"),
        "{r}"
    );

    let taxi = "new-york-city-taxi-fare-prediction";
    let wrong_key = answers(taxi).replacen("\nk25,", "\nk99,", 1);
    let path = file("taxi.csv", wrong_key);
    let (code, r) = grade_sample_any(&ws, taxi, &path);
    assert_eq!((code, &r["valid_submission"]), (1, &Value::from(false)), "{r}");
    let departure = r["mle_bench_departure"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(departure.contains("without comparing the ids"), "{r}");
    let text = ws
        .ml2b()
        .arg("grade-sample")
        .arg(&path)
        .args(["--competition", taxi])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("departs from MLE-bench: MLE-bench's grade.py sorts"),
        "{text}"
    );
}

/// A grader that cannot load (its grade.py imports a library the grading environment
/// lacks) is a fault of the grading environment: nothing is called invalid for it.
/// Before, every submission was invalid ("grade.py raised ModuleNotFoundError").
#[test]
fn a_grader_that_cannot_load_grades_nothing_and_says_why() {
    let m = Mle::new();
    program(
        &m,
        "broken-lite",
        &format!("import not_installed_anywhere\n{GRADE_PY}"),
    );
    let ws = Workspace::empty_root();
    imported(&m.import(&ws, &[]));
    let code = solution(&ws, &format!("OFFSET = 0.0\n{LINEAR}"));
    let out = ws
        .ml2b()
        .args(["--json", "grade-file"])
        .arg(&code)
        .args(["--competition", "broken-lite", "--format", "mono"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the grading program of `broken-lite` could not grade: it ended sandbox_error")
            && err.contains("not_installed_anywhere"),
        "{err}"
    );
    let mut sub = String::from("id,value\n");
    for i in 20..30 {
        sub.push_str(&format!("{i},{}\n", 2.0 * i as f64 + 1.0));
    }
    write(&ws.dir.path().join("sub.csv"), sub);
    let out = ws
        .ml2b()
        .args([
            "--json",
            "grade-sample",
            "sub.csv",
            "--competition",
            "broken-lite",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("could not grade"), "{}", stderr(&out));
}
