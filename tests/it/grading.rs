//! Untrusted predictions against the grader (issue 26, items 4, 5 and 16): whatever a
//! submission writes, grading ends in a valid score or an invalid grade with its reason, never
//! in a failure of the command or the stage, never in a non-finite "valid" score, and never
//! by decoding a file whose footer already says it does not fit.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use serde_json::Value;

use crate::common::Workspace;

fn repo() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

/// `ml2b --json score`: the exit code and the report (null when it printed none).
fn score(ws: &Workspace, metric: &str, answers: &str, predictions: &str) -> (i32, Value, String) {
    let out = ws
        .ml2b()
        .args(["--json", "score", "--metric", metric])
        .args(["--answers", answers, "--predictions", predictions])
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap(), v, stderr)
}

fn invalid_reason(v: &Value) -> &str {
    assert_eq!(v["valid"], Value::Bool(false), "{v}");
    v["reason"].as_str().unwrap()
}

/// A Parquet file of `columns`, each `rows` long, written in batches of repeated values.
fn parquet(path: &Path, names: &[&str], rows: usize, value: f64) {
    let fields: Vec<Field> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let dt = if i == 0 {
                DataType::Int64
            } else {
                DataType::Float64
            };
            Field::new(*n, dt, false)
        })
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let mut writer = ArrowWriter::try_new(fs::File::create(path).unwrap(), schema.clone(), None).unwrap();
    let chunk = rows.min(1 << 20);
    let columns: Vec<ArrayRef> = (0..names.len())
        .map(|i| -> ArrayRef {
            if i == 0 {
                Arc::new(Int64Array::from(vec![1; chunk]))
            } else {
                Arc::new(Float64Array::from(vec![value; chunk]))
            }
        })
        .collect();
    let mut left = rows;
    while left > 0 {
        let n = left.min(chunk);
        let batch: Vec<ArrayRef> = columns.iter().map(|c| c.slice(0, n)).collect();
        writer
            .write(&RecordBatch::try_new(schema.clone(), batch).unwrap())
            .unwrap();
        left -= n;
    }
    writer.close().unwrap();
}

#[test]
fn a_score_that_is_not_finite_is_invalid() {
    let ws = Workspace::new();
    let answers = ws.put("answers.csv", b"id,y\n1,1.5\n2,2.5\n3,0.5\n4,3.0\n");
    let huge = ws.put("huge.csv", b"id,y\n1,1e200\n2,1e200\n3,-1e200\n4,1e200\n");
    for metric in ["r2", "rmse", "mse"] {
        let (code, v, err) = score(&ws, metric, &answers, &huge);
        assert_eq!(code, 1, "{metric}: {v} {err}");
        assert!(
            invalid_reason(&v).contains("not a finite number"),
            "{metric}: {v}"
        );
    }
    let (code, v, _) = score(
        &ws,
        "r2",
        &answers,
        &ws.put("ok.csv", b"id,y\n1,1.4\n2,2.6\n3,0.5\n4,3.1\n"),
    );
    assert_eq!((code, v["valid"].as_bool()), (0, Some(true)), "{v}");
}

/// `ml2b --json grade-file` of a MONO_PREDICT `source` on concrete-strength: the exit code
/// and the report.
fn grade_file(ws: &Workspace, source: &str) -> (Option<i32>, Value) {
    let file = ws.dir.path().join("solution.py");
    fs::write(&file, source).unwrap();
    let out = ws
        .ml2b()
        .args([
            "--json",
            "grade-file",
            "--root",
            repo(),
            "--competition",
            "concrete-strength",
        ])
        .args(["--format", "mono"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (out.status.code(), r)
}

#[test]
fn a_solution_predicting_1e200_is_graded_invalid() {
    let ws = Workspace::new();
    let (code, r) = grade_file(
        &ws,
        "import numpy as np\n\ndef train_and_predict(data, X_val):\n    return np.full(len(X_val), 1e200)\n",
    );
    assert_eq!(r["outcome"], "bad_predictions", "{r}");
    assert!(r["score"].is_null(), "{r}");
    assert!(
        r["invalid_reason"]
            .as_str()
            .unwrap()
            .contains("not a finite number"),
        "{r}"
    );
    assert_eq!(code, Some(1));
}

#[test]
fn predictions_that_cannot_be_decoded_are_invalid_not_errors() {
    let ws = Workspace::new();
    let answers = ws.put("answers.csv", b"id,y\n1,1.5\n2,2.5\n3,0.5\n4,3.0\n");
    let garbage = ws.put("garbage.parquet", b"PAR1 this is not a parquet file PAR1");
    let (code, v, err) = score(&ws, "rmse", &answers, &garbage);
    assert_eq!(code, 1, "{v} {err}");
    assert!(
        !invalid_reason(&v).contains(ws.dir.path().to_str().unwrap()),
        "{v}"
    );
    // A duplicate column, which Arrow's schema allows and a grader must not choke on.
    let dup = ws.dir.path().join("dup.parquet");
    parquet(&dup, &["id", "y", "y"], 4, 1.0);
    let (code, v, err) = score(&ws, "rmse", &answers, "dup.parquet");
    assert_eq!(code, 1, "{v} {err}");
    assert_eq!(invalid_reason(&v), "column `y` appears twice");
    let empty = ws.put("empty.csv", b"");
    let (code, v, _) = score(&ws, "rmse", &answers, &empty);
    assert_eq!(
        (code, invalid_reason(&v)),
        (1, "the file cannot be read: the file is empty")
    );
    // An empty answers file is the caller's error, named as such.
    let (code, _, err) = score(&ws, "rmse", &empty, &answers);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("empty.csv is empty"), "{err}");
}

#[test]
fn a_solution_that_rewrites_its_predictions_at_exit_is_graded_invalid() {
    let ws = Workspace::new();
    let (code, r) = grade_file(
        &ws,
        "import atexit\nimport numpy as np\n\n\
         def clobber():\n    with open('/out/predictions.parquet', 'wb') as f:\n        f.write(b'PAR1 not parquet PAR1')\n\n\
         def train_and_predict(data, X_val):\n    atexit.register(clobber)\n    return np.full(len(X_val), 30.0)\n",
    );
    assert_eq!(r["outcome"], "bad_predictions", "{r}");
    assert!(
        r["invalid_reason"].as_str().unwrap().contains("cannot be read"),
        "{r}"
    );
    assert_eq!(code, Some(1));
}

#[test]
fn a_parquet_bomb_is_refused_from_its_footer() {
    let ws = Workspace::new();
    let answers = ws.put("answers.csv", b"id,y\n1,1.5\n2,2.5\n3,0.5\n4,3.0\n");
    // 10^8 identical rows: a few hundred kilobytes on disk, 1.6 GB decoded.
    let bomb = ws.dir.path().join("bomb.parquet");
    parquet(&bomb, &["id", "y"], 100_000_000, 1.0);
    assert!(fs::metadata(&bomb).unwrap().len() < 10 << 20);
    // Under a 1 GiB address-space limit, decoding it would abort the grader.
    let out = std::process::Command::new("prlimit")
        .arg(format!("--as={}", 1u64 << 30))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_ml2b"))
        .current_dir(ws.dir.path())
        .args(["--json", "score", "--metric", "rmse", "--answers", &answers])
        .args(["--predictions", "bomb.parquet"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{v} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(invalid_reason(&v), "expected 4 rows, got 100000000");
}

#[test]
fn a_csv_over_the_memory_limit_is_refused_by_name() {
    let ws = Workspace::new();
    let answers = ws.put("answers.csv", b"id,y\n1,1.5\n2,2.5\n3,0.5\n4,3.0\n");
    // A sparse file: 1.5 GiB long, nothing on disk.
    let big = ws.dir.path().join("big.csv");
    fs::write(&big, b"id,y\n").unwrap();
    fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(3 << 29)
        .unwrap();
    let (code, v, _) = score(&ws, "rmse", &answers, "big.csv");
    assert_eq!(code, 1, "{v}");
    assert_eq!(
        invalid_reason(&v),
        format!(
            "the predictions' CSV size in bytes is {}, over the grader's limit of {}",
            3u64 << 29,
            1u64 << 30
        )
    );
    let (code, _, err) = score(&ws, "rmse", "big.csv", &answers);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("over the 1073741824-byte limit"), "{err}");
    // `agreement` reads its ratings into memory too, under a limit of its own.
    let out = ws
        .ml2b()
        .args(["agreement", "--ratings", "big.csv"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("over the 536870912-byte limit"), "{err}");
}

#[test]
fn ids_in_another_script_are_named_not_a_parser_error() {
    let ws = Workspace::new();
    let answers = ws.put("answers.csv", b"id,y\n1,1.5\n2,2.5\n");
    // Arabic-Indic digits: CSV type inference takes them for integers, the decoder does not.
    let arabic = ws.put("arabic.csv", "id,y\n١,1.5\n٢,2.5\n".as_bytes());
    let (code, v, err) = score(&ws, "rmse", &answers, &arabic);
    assert_eq!(code, 1, "{v} {err}");
    assert!(invalid_reason(&v).contains("`١`"), "{v}");
}

/// A benchmark root holding only concrete-strength, copied from the repository.
fn concrete_root(ws: &Workspace) -> std::path::PathBuf {
    let root = ws.dir.path().join("root");
    let repo = Path::new(repo());
    fs::create_dir_all(root.join("manifests/competitions")).unwrap();
    for name in [
        "languages.toml",
        "models.toml",
        "competitions/concrete-strength.toml",
    ] {
        fs::copy(
            repo.join("manifests").join(name),
            root.join("manifests").join(name),
        )
        .unwrap();
    }
    crate::stages::copy_dir(
        &repo.join("data/concrete-strength"),
        &root.join("data/concrete-strength"),
    );
    root
}

fn grade_reference(ws: &Workspace, root: &Path) -> std::process::Output {
    ws.ml2b()
        .args([
            "grade-file",
            "--competition",
            "concrete-strength",
            "--format",
            "mono",
        ])
        .arg("--root")
        .arg(root)
        .arg(root.join("data/concrete-strength/solution/mono.py"))
        .output()
        .unwrap()
}

#[test]
fn data_files_that_differ_from_their_manifest_stop_grading() {
    let ws = Workspace::new();
    let root = concrete_root(&ws);
    let ok = grade_reference(&ws, &root);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    // One private answer changed: nothing is graded against it.
    let answers = root.join("data/concrete-strength/private/answers.csv");
    let text = fs::read_to_string(&answers).unwrap();
    fs::write(&answers, text.replacen("14,43.5\n", "14,43.6\n", 1)).unwrap();
    let out = grade_reference(&ws, &root);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("private/answers.csv does not match its manifest"),
        "{err}"
    );
    assert!(
        out.stdout.is_empty(),
        "nothing graded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The same through the pipeline: the reference's runs execute, none is graded.
    let run = ws
        .ml2b()
        .args([
            "run",
            "--models",
            "reference",
            "--langs",
            "en",
            "--format",
            "mono",
        ])
        .args(["--competitions", "concrete-strength", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_ne!(run.status.code(), Some(0), "{err}");
    assert!(err.contains("does not match its manifest"), "{err}");
    let grades = ws
        .ml2b()
        .args(["--json", "query", "SELECT count(*) AS n FROM grade"])
        .output()
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&grades.stdout).unwrap(),
        serde_json::json!([{"n": 0}])
    );
    // Answers restored, a wrong checksum in the manifest is caught the same way.
    fs::write(&answers, text).unwrap();
    let manifest = root.join("manifests/competitions/concrete-strength.toml");
    let toml = fs::read_to_string(&manifest).unwrap();
    let line = toml.lines().find(|l| l.starts_with("\"train.csv\"")).unwrap();
    let hash = line.split('"').nth(3).unwrap();
    let wrong = format!("{}{}", &hash[..63], if hash.ends_with('0') { '1' } else { '0' });
    fs::write(&manifest, toml.replace(hash, &wrong)).unwrap();
    let out = grade_reference(&ws, &root);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("public/train.csv does not match its manifest"),
        "{err}"
    );
    assert!(err.contains(&wrong), "{err}");
}

/// `ml2b --json score` with extra arguments: the exit code, the report and stderr.
fn score_with(
    ws: &Workspace,
    metric: &str,
    answers: &str,
    predictions: &str,
    extra: &[&str],
) -> (i32, Value, String) {
    let out = ws
        .ml2b()
        .args(["--json", "score", "--metric", metric])
        .args(["--answers", answers, "--predictions", predictions])
        .args(extra)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap(), v, stderr)
}

fn valid_score(v: &Value) -> f64 {
    assert_eq!(v["valid"], Value::Bool(true), "{v}");
    v["score"].as_f64().unwrap()
}

#[test]
fn integer_valued_float_ids_are_their_integers() {
    let ws = Workspace::new();
    let answers = ws.put("answers.csv", b"id,y\n311,1.5\n312,2.5\n313,0.5\n");
    let ints = ws.put("ints.csv", b"id,y\n313,0.4\n311,1.0\n312,2.5\n");
    let floats = ws.put("floats.csv", b"id,y\n313.0,0.4\n311.0,1.0\n312.0,2.5\n");
    let (code, expected, _) = score(&ws, "rmse", &answers, &ints);
    assert_eq!(code, 0, "{expected}");
    let (code, v, err) = score(&ws, "rmse", &answers, &floats);
    assert_eq!(code, 0, "{v} {err}");
    assert_eq!(valid_score(&v), valid_score(&expected));
    // Float ids in the answers and integers in the predictions, too.
    let (code, v, _) = score(&ws, "rmse", &floats, &answers);
    assert_eq!(code, 0, "{v}");
    // A fractional id is no integer: it is missing, and named.
    let half = ws.put("half.csv", b"id,y\n313.5,0.4\n311.0,1.0\n312.0,2.5\n");
    let (code, v, _) = score(&ws, "rmse", &answers, &half);
    assert_eq!(code, 1, "{v}");
    assert!(invalid_reason(&v).contains("unknown id `313.5`"), "{v}");
}

#[test]
fn unknown_prediction_columns_are_warned_about_and_ignored() {
    let ws = Workspace::new();
    let answers = ws.put("answers.csv", b"id,target\n1,0\n2,1\n3,1\n4,0\n");
    let plain = ws.put("plain.csv", b"id,target\n1,0.2\n2,0.7\n3,0.9\n4,0.4\n");
    let extra = ws.put(
        "extra.csv",
        b"Unnamed: 0,id,target\n0,1,0.2\n1,2,0.7\n2,3,0.9\n3,4,0.4\n",
    );
    let (_, expected, _) = score(&ws, "roc_auc", &answers, &plain);
    assert_eq!(expected["warnings"], serde_json::json!([]), "{expected}");
    for metric in ["roc_auc", "log_loss"] {
        let (code, v, err) = score(&ws, metric, &answers, &extra);
        assert_eq!(code, 0, "{metric}: {v} {err}");
        let warnings = v["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 1, "{v}");
        assert!(warnings[0].as_str().unwrap().contains("`Unnamed: 0`"), "{v}");
        assert!(err.contains("warning: predictions column `Unnamed: 0`"), "{err}");
    }
    let (_, v, _) = score(&ws, "roc_auc", &answers, &extra);
    assert_eq!(valid_score(&v), valid_score(&expected));
    // Multiclass class columns by name, the extra one ignored.
    let labels = ws.put("labels.csv", b"id,y\n1,a\n2,b\n3,c\n4,a\n");
    let classes = ws.put(
        "classes.csv",
        b"id,c,Unnamed: 0,b,a\n1,0.1,0,0.1,0.8\n2,0.2,1,0.6,0.2\n3,0.5,2,0.3,0.2\n4,0.3,3,0.3,0.4\n",
    );
    let (code, v, err) = score(&ws, "log_loss", &labels, &classes);
    assert_eq!(code, 0, "{v} {err}");
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1, "{v}");
    // A value metric: the column named as the target is read, the other one is not.
    let values = ws.put("values.csv", b"id,y\n1,1.5\n2,2.5\n");
    let with_extra = ws.put("with_extra.csv", b"id,y,note\n1,1.0,x\n2,2.0,y\n");
    let (code, v, _) = score(&ws, "rmse", &values, &with_extra);
    assert_eq!((code, valid_score(&v)), (0, 0.5));
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1, "{v}");
}

#[test]
fn target_names_the_answers_target_columns() {
    let ws = Workspace::new();
    // tabular-playground-series-may-2022's layout: features before the target.
    let answers = ws.put(
        "answers.csv",
        b"id,f_00,f_27,target\n1,0.5,ABC,0\n2,-1.2,BCD,1\n3,0.1,CDE,1\n4,2.0,DEF,0\n",
    );
    let predictions = ws.put("predictions.csv", b"id,target\n1,0.2\n2,0.7\n3,0.9\n4,0.4\n");
    let (code, v, err) = score(&ws, "roc_auc", &answers, &predictions);
    assert_eq!(code, 2, "{v} {err}");
    assert!(err.contains("answers file answers.csv is unusable"), "{err}");
    assert!(err.contains("--target"), "{err}");
    assert!(!err.contains("invalid submission"), "{err}");
    let (code, v, err) = score_with(&ws, "roc_auc", &answers, &predictions, &["--target", "target"]);
    assert_eq!((code, valid_score(&v)), (0, 1.0), "{err}");
    // A target the answers lack is the answers' problem, by name.
    let (code, _, err) = score_with(&ws, "roc_auc", &answers, &predictions, &["--target", "label"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("answers file answers.csv") && err.contains("`label`"),
        "{err}"
    );
}

#[test]
fn nomad2018_answers_with_features_blame_the_answers_not_the_submission() {
    let ws = Workspace::new();
    let answers = ws.put(
        "answers.csv",
        b"id,spacegroup,number_of_total_atoms,formation_energy_ev_natom,bandgap_energy_ev\n\
          1,33,80.0,0.068,3.44\n2,194,80.0,0.249,2.96\n3,227,40.0,0.182,2.75\n",
    );
    let predictions = ws.put("predictions.csv",
        b"id,formation_energy_ev_natom,bandgap_energy_ev\n1,0.1779,1.8892\n2,0.1779,1.8892\n3,0.1779,1.8892\n",
    );
    let (code, v, err) = score(&ws, "rmsle_multi", &answers, &predictions);
    assert_eq!(code, 2, "{v} {err}");
    assert!(v.is_null(), "{v}");
    assert!(err.contains("answers file answers.csv"), "{err}");
    assert!(err.contains("`spacegroup`, `number_of_total_atoms`"), "{err}");
    assert!(err.contains("--target"), "{err}");
    assert!(!err.contains("invalid submission"), "{err}");
    let targets = ["formation_energy_ev_natom", "bandgap_energy_ev"];
    let comma = targets.join(",");
    let (code, a, err) = score_with(&ws, "rmsle_multi", &answers, &predictions, &["--target", &comma]);
    assert_eq!(code, 0, "{a} {err}");
    let repeated = ["--target", targets[0], "--target", targets[1]];
    let (code, b, _) = score_with(&ws, "rmsle_multi", &answers, &predictions, &repeated);
    assert_eq!((code, valid_score(&a)), (0, valid_score(&b)));
    // With the targets named, a missing target column is the submission's fault.
    let short = ws.put(
        "short.csv",
        b"id,formation_energy_ev_natom\n1,0.1\n2,0.1\n3,0.1\n",
    );
    let (code, v, _) = score_with(&ws, "rmsle_multi", &answers, &short, &["--target", &comma]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(invalid_reason(&v), "missing column `bandgap_energy_ev`");
}

#[test]
fn one_hot_answers_grade_log_loss_like_a_label_column() {
    let ws = Workspace::new();
    // spooky-author-identification's layout: one 0/1 column per class.
    let one_hot = ws.put(
        "one_hot.csv",
        b"id,EAP,HPL,MWS\nid1,1,0,0\nid2,0,0,1\nid3,0,1,0\nid4,1,0,0\n",
    );
    let labels = ws.put("labels.csv", b"id,author\nid1,EAP\nid2,MWS\nid3,HPL\nid4,EAP\n");
    let predictions = ws.put(
        "predictions.csv",
        b"id,EAP,HPL,MWS\nid4,0.5,0.25,0.25\nid1,0.7,0.2,0.1\nid2,0.1,0.1,0.8\nid3,0.3,0.4,0.3\n",
    );
    let (code, a, err) = score(&ws, "log_loss", &one_hot, &predictions);
    assert_eq!(code, 0, "{a} {err}");
    let (code, b, _) = score(&ws, "log_loss", &labels, &predictions);
    assert_eq!(code, 0, "{b}");
    let expected = -(0.7f64.ln() + 0.8f64.ln() + 0.4f64.ln() + 0.5f64.ln()) / 4.0;
    assert!((valid_score(&a) - expected).abs() < 1e-15, "{a}");
    assert!((valid_score(&b) - expected).abs() < 1e-15, "{b}");
    // A class no answer row holds is still a class of one-hot answers.
    let absent = ws.put(
        "absent.csv",
        b"id,EAP,HPL,MWS\nid1,1,0,0\nid2,0,0,1\nid3,1,0,0\nid4,1,0,0\n",
    );
    let (code, v, _) = score(&ws, "log_loss", &absent, &predictions);
    assert_eq!(code, 0, "{v}");
    // Answers that are not one-hot are the answers' problem, named.
    let features = ws.put(
        "features.csv",
        b"id,f1,f2\nid1,0.5,1\nid2,1,0\nid3,0,1\nid4,1,0\n",
    );
    let (code, _, err) = score(&ws, "log_loss", &features, &predictions);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("answers file features.csv") && err.contains("one-hot"),
        "{err}"
    );
    // A class column missing from the predictions, with the targets named: invalid.
    let two = ws.put(
        "two.csv",
        b"id,EAP,HPL\nid1,0.5,0.5\nid2,0.5,0.5\nid3,0.5,0.5\nid4,0.5,0.5\n",
    );
    let (code, v, _) = score_with(&ws, "log_loss", &one_hot, &two, &["--target", "EAP,HPL,MWS"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(invalid_reason(&v), "missing column `MWS`");
}

#[test]
fn an_invalid_submission_names_the_predictions_file() {
    let ws = Workspace::new();
    let answers = ws.put("answers.csv", b"id,y\n1,1.5\n2,2.5\n");
    let short = ws.put("short.csv", b"id,y\n1,1.5\n");
    let out = ws
        .ml2b()
        .args([
            "score",
            "--metric",
            "rmse",
            "--answers",
            &answers,
            "--predictions",
            &short,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "invalid submission (predictions file short.csv): expected 2 rows, got 1\n"
    );
}
