//! `ml2b import mle-bench` of the competitions whose preparation lays its data out otherwise
//! than ml2b's harness reads it (`import::mle_layout`): each prepared folder is written here
//! as the competition's `prepare.py` writes it (MLE-bench revision 783b15a), its answers and
//! a submission taken from `tests/reference/mle_bench_grades.py`'s cases, and the imported
//! competition's grade of that submission is compared to the score grade.py's rules give
//! (`tests/fixtures/mle_bench_grades.json`), to 1e-9. A solution then runs on each through
//! the harness, on the files the import made.

use std::io::Write;
use std::path::Path;

use ml2b::competition::{Benchmark, Side};
use ml2b::manifest::competition::Domain;
use serde_json::Value;

use crate::common::{Workspace, stderr, write};
use crate::mle_bench::{Mle, grade_file, grade_sample, imported, leaderboard, solution};

const REFERENCE: &str = include_str!("../fixtures/mle_bench_grades.json");

/// The reference case of `competition`: its answers, a submission and grade.py's score.
fn case(competition: &str) -> Value {
    let doc: Value = serde_json::from_str(REFERENCE).unwrap();
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["competition"] == competition)
        .unwrap_or_else(|| panic!("no reference case for {competition}"))
        .clone()
}

/// A CSV text's header and rows.
fn table(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// Rows as CSV text (quotes where needed).
fn csv_text(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header).unwrap();
    for r in rows {
        w.write_record(r).unwrap();
    }
    String::from_utf8(w.into_inner().unwrap()).unwrap()
}

fn column(header: &[String], name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap()
}

/// A zip archive holding `member` (stored, as Python's zipfile writes by default).
fn zipped(member: &str, text: &str) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    w.start_file(member, stored).unwrap();
    w.write_all(text.as_bytes()).unwrap();
    w.finish().unwrap().into_inner()
}

/// detecting-insults: train.csv `Insult,Date,Comment`, test.csv `Date,Comment`, the sample
/// `sample_submission_null.csv` as `Insult,Date,Comment`, the answers test_with_solutions.csv.
fn insults(m: &Mle, id: &str) {
    let c = case("detecting-insults-in-social-commentary");
    let answers = c["answers_csv"].as_str().unwrap();
    let (h, rows) = table(answers);
    let (date, comment) = (column(&h, "Date"), column(&h, "Comment"));
    let train: Vec<Vec<String>> = (0..40)
        .map(|i| {
            vec![
                if i % 3 == 0 { "1" } else { "0" }.to_string(),
                if i % 4 == 0 {
                    String::new()
                } else {
                    format!("2012052{}120000Z", i % 10)
                },
                format!(
                    "\"you {} people, training comment {i}\"",
                    ["idiot", "nice", "sure"][i % 3]
                ),
            ]
        })
        .collect();
    let test: Vec<Vec<String>> = rows
        .iter()
        .map(|r| vec![r[date].clone(), r[comment].clone()])
        .collect();
    let sample: Vec<Vec<String>> = rows
        .iter()
        .map(|r| vec!["0".into(), r[date].clone(), r[comment].clone()])
        .collect();
    m.competition_at(
        id,
        "auc-roc",
        "public/sample_submission_null.csv",
        &[
            (
                "public/train.csv",
                csv_text(&["Insult", "Date", "Comment"], &train),
            ),
            ("public/test.csv", csv_text(&["Date", "Comment"], &test)),
            (
                "public/sample_submission_null.csv",
                csv_text(&["Insult", "Date", "Comment"], &sample),
            ),
            ("private/test.csv", answers.to_string()),
            ("checkout/leaderboard.csv", leaderboard(50, true)),
        ],
    );
}

/// new-york-city-taxi-fare-prediction: the training rows in `labels.csv`, `test.csv`
/// without the fare, the answers the whole test rows.
fn taxi(m: &Mle) {
    let c = case("new-york-city-taxi-fare-prediction");
    let answers = c["answers_csv"].as_str().unwrap();
    let (h, rows) = table(answers);
    let fare = column(&h, "fare_amount");
    let header: Vec<&str> = h.iter().map(String::as_str).collect();
    let train: Vec<Vec<String>> = rows
        .iter()
        .take(30)
        .enumerate()
        .map(|(i, r)| {
            let mut r = r.clone();
            r[0] = format!("2014-02-0{} 10:00:00.{i:07}", 1 + i % 9);
            r
        })
        .collect();
    let test: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .filter(|(k, _)| *k != fare)
                .map(|(_, v)| v.clone())
                .collect()
        })
        .collect();
    let test_header: Vec<&str> = header.iter().copied().filter(|c| *c != "fare_amount").collect();
    let sample: Vec<Vec<String>> = rows.iter().map(|r| vec![r[0].clone(), "11.35".into()]).collect();
    m.competition(
        "new-york-city-taxi-fare-prediction",
        "root-mean-squared-error",
        &[
            ("public/labels.csv", csv_text(&header, &train)),
            ("public/test.csv", csv_text(&test_header, &test)),
            (
                "public/sample_submission.csv",
                csv_text(&["key", "fare_amount"], &sample),
            ),
            ("public/GCP-Coupons-Instructions.rtf", "{\\rtf1 coupons}".into()),
            ("private/test.csv", answers.to_string()),
        ],
    );
}

/// dog-breed-identification: `labels.csv` (`id,breed`), the images in `train/` and `test/`,
/// one-hot answers and a uniform sample submission.
fn dogs(m: &Mle) {
    let c = case("dog-breed-identification");
    let answers = c["answers_csv"].as_str().unwrap();
    let (h, rows) = table(answers);
    let breeds = &h[1..];
    let mut files: Vec<(String, String)> = Vec::new();
    let train: Vec<Vec<String>> = (0..3 * breeds.len())
        .map(|i| vec![format!("{i:032x}"), breeds[i % breeds.len()].clone()])
        .collect();
    for r in &train {
        files.push((format!("public/train/{}.jpg", r[0]), "jpeg".into()));
    }
    for r in &rows {
        files.push((format!("public/test/{}.jpg", r[0]), "jpeg".into()));
    }
    let uniform = format!("{}", 1.0 / breeds.len() as f64);
    let sample: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            std::iter::once(r[0].clone())
                .chain(breeds.iter().map(|_| uniform.clone()))
                .collect()
        })
        .collect();
    let header: Vec<&str> = h.iter().map(String::as_str).collect();
    files.extend([
        ("public/labels.csv".into(), csv_text(&["id", "breed"], &train)),
        ("public/sample_submission.csv".into(), csv_text(&header, &sample)),
        ("private/test.csv".into(), answers.to_string()),
    ]);
    let files: Vec<(&str, String)> = files.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    m.competition("dog-breed-identification", "multi-class-log-loss", &files);
}

/// histopathologic-cancer-detection: `train_labels.csv` (`id,label`), `.tif` images in
/// `train/` and `test/`, the answers `answers.csv`.
fn histopathology(m: &Mle) {
    let c = case("histopathologic-cancer-detection");
    let answers = c["answers_csv"].as_str().unwrap();
    let (_, rows) = table(answers);
    let mut files: Vec<(String, String)> = Vec::new();
    let train: Vec<Vec<String>> = (0..30)
        .map(|i| vec![format!("{:040x}", 7919 * (i + 1)), (i % 2).to_string()])
        .collect();
    for r in &train {
        files.push((format!("public/train/{}.tif", r[0]), "tiff".into()));
    }
    for r in &rows {
        files.push((format!("public/test/{}.tif", r[0]), "tiff".into()));
    }
    let sample: Vec<Vec<String>> = rows.iter().map(|r| vec![r[0].clone(), "0".into()]).collect();
    files.extend([
        (
            "public/train_labels.csv".into(),
            csv_text(&["id", "label"], &train),
        ),
        (
            "public/sample_submission.csv".into(),
            csv_text(&["id", "label"], &sample),
        ),
        ("private/answers.csv".into(), answers.to_string()),
    ]);
    let files: Vec<(&str, String)> = files.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    m.competition("histopathologic-cancer-detection", "auc-roc", &files);
}

/// A random-acts-of-pizza request as JSON: the test records lack the outcome and the
/// `_at_retrieval` fields, as in prepare.py (the keys in alphabetical order, as Kaggle's
/// files have them).
fn pizza_record(id: &str, i: usize, with_outcome: bool) -> Value {
    let subreddits = &["AskReddit", "pizza"][..(i % 3).min(2)];
    let mut r = serde_json::json!({
        "giver_username_if_known": "N/A",
        "request_id": id,
        "request_text_edit_aware": format!("I am hungry, \"really\"\nrequest {i}: pizza for {} kids", i % 4),
        "request_title": format!("[Request] pizza {i}"),
        "requester_number_of_posts_at_request": i % 17,
        "requester_subreddits_at_request": subreddits,
        "unix_timestamp_of_request": 1_300_000_000.0 + i as f64 * 3600.5,
    });
    if with_outcome {
        r["requester_received_pizza"] = Value::Bool(i.is_multiple_of(3));
        r["number_of_upvotes_of_request_at_retrieval"] = Value::from(i % 5);
        r["requester_user_flair"] = if i.is_multiple_of(3) {
            Value::from("shroom")
        } else {
            Value::Null
        };
    }
    r
}

/// random-acts-of-pizza: `train.json` and `test.json` (and their zips), the answers
/// `test.csv` of `request_id,requester_received_pizza`, `sampleSubmission.csv`.
fn pizza(m: &Mle) {
    let c = case("random-acts-of-pizza");
    let answers = c["answers_csv"].as_str().unwrap();
    let (_, rows) = table(answers);
    let train: Vec<Value> = (0..40)
        .map(|i| pizza_record(&format!("t3_tr{i}"), i, true))
        .collect();
    let test: Vec<Value> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| pizza_record(&r[0], i, false))
        .collect();
    let train = serde_json::to_string_pretty(&train).unwrap();
    let test = serde_json::to_string_pretty(&test).unwrap();
    let sample: Vec<Vec<String>> = rows.iter().map(|r| vec![r[0].clone(), "0".into()]).collect();
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("public/train.json", train.clone().into_bytes()),
        ("public/test.json", test.clone().into_bytes()),
        ("public/train.zip", zipped("train.json", &train)),
        ("public/test.zip", zipped("test.json", &test)),
        (
            "public/sampleSubmission.csv",
            csv_text(&["request_id", "requester_received_pizza"], &sample).into_bytes(),
        ),
        ("private/test.csv", answers.as_bytes().to_vec()),
    ];
    m.competition_at(
        "random-acts-of-pizza",
        "auc-roc",
        "public/sampleSubmission.csv",
        &files,
    );
}

/// text-normalization-challenge-{english,russian}-language: the train and test CSVs zipped
/// (written with QUOTE_NONNUMERIC), the answers keyed by `{sentence_id}_{token_id}`, the
/// sample submission in `private/`.
fn text_normalization(m: &Mle, competition: &str, lang: &str) {
    let c = case(competition);
    let answers = c["answers_csv"].as_str().unwrap();
    let (_, rows) = table(answers);
    let quoted = |v: &str| format!("\"{}\"", v.replace('"', "\"\""));
    let mut train = String::from("\"sentence_id\",\"token_id\",\"class\",\"before\",\"after\"\n");
    for s in 0..12 {
        for t in 0..4 {
            let (class, before, after) = [
                ("PLAIN", "the", "the"),
                ("PUNCT", ",", ","),
                ("CARDINAL", "12", "twelve"),
                ("PLAIN", "Zelkova", "Zelkova"),
            ][(s + t) % 4];
            train.push_str(&format!(
                "{s},{t},{},{},{}\n",
                quoted(class),
                quoted(before),
                quoted(after)
            ));
        }
    }
    let mut test = String::from("\"sentence_id\",\"token_id\",\"before\"\n");
    let mut sample = String::from("\"id\",\"after\"\n");
    for r in &rows {
        let (s, t) = r[0].split_once('_').unwrap();
        // Half the tokens are written as they are said: the answer itself.
        let before = if s.len() % 2 == 0 {
            r[1].clone()
        } else {
            format!("{}1", r[1])
        };
        test.push_str(&format!("{s},{t},{}\n", quoted(&before)));
        sample.push_str(&format!("{},{}\n", quoted(&r[0]), quoted(&before)));
    }
    let files: Vec<(String, Vec<u8>)> = vec![
        (
            format!("public/{lang}_train.csv.zip"),
            zipped(&format!("{lang}_train.csv"), &train),
        ),
        (
            format!("public/{lang}_test_2.csv.zip"),
            zipped(&format!("{lang}_test_2.csv"), &test),
        ),
        (
            format!("public/{lang}_sample_submission_2.csv.zip"),
            zipped(&format!("{lang}_sample_submission_2.csv"), &sample),
        ),
        ("private/answers.csv".into(), answers.as_bytes().to_vec()),
        (
            "private/sample_submission.csv".into(),
            sample.clone().into_bytes(),
        ),
    ];
    let files: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    m.competition_at(competition, "accuracy", "private/sample_submission.csv", &files);
}

/// The six whose data is not in `train.csv`/`test.csv`.
const SIX: [&str; 6] = [
    "dog-breed-identification",
    "histopathologic-cancer-detection",
    "new-york-city-taxi-fare-prediction",
    "random-acts-of-pizza",
    "text-normalization-challenge-english-language",
    "text-normalization-challenge-russian-language",
];

fn six(m: &Mle) {
    taxi(m);
    dogs(m);
    histopathology(m);
    pizza(m);
    text_normalization(m, "text-normalization-challenge-english-language", "en");
    text_normalization(m, "text-normalization-challenge-russian-language", "ru");
}

/// Grades the reference case's submission in the imported competition and compares the
/// exact score with grade.py's, to 1e-9.
fn grades_as_grade_py(ws: &Workspace, competition: &str) {
    let c = case(competition);
    let path = ws.dir.path().join(format!("{competition}-submission.csv"));
    write(&path, c["predictions_csv"].as_str().unwrap());
    let r = grade_sample(ws, competition, &path);
    assert_eq!(r["valid_submission"], true, "{competition}: {r}");
    let (got, expected) = (
        r["exact_score"].as_f64().unwrap(),
        c["expected"].as_f64().unwrap(),
    );
    assert!(
        (got - expected).abs() <= 1e-9 * expected.abs().max(1.0),
        "{competition}: {got} vs grade.py's {expected}"
    );
}

fn header_of(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn detecting_insults_is_keyed_on_comment_and_grades_as_grade_py() {
    let m = Mle::new();
    insults(&m, "detecting-insults-in-social-commentary");
    let ws = Workspace::empty_root();
    let report = imported(&m.import(&ws, &[]));
    assert_eq!(report[0]["metric"], "roc_auc");
    let bench = Benchmark::load(ws.dir.path()).unwrap();
    let c = &bench.competitions[0];
    assert_eq!(c.manifest.columns.id, "Comment");
    assert_eq!(c.manifest.columns.targets, ["Insult"]);
    assert_eq!(c.manifest.domain, Domain::Text);
    assert!(
        c.manifest
            .import_notes
            .iter()
            .any(|n| n.starts_with("domain: text, from its free-text column(s) `Comment`")),
        "{:?}",
        c.manifest.import_notes
    );
    assert!(
        c.manifest
            .import_notes
            .iter()
            .any(|n| n.contains("also holds `Date` of test.csv, echoed, not predicted")),
        "{:?}",
        c.manifest.import_notes
    );
    let answers = std::fs::read_to_string(c.file(Side::Private, "answers.csv")).unwrap();
    assert!(
        answers.starts_with("Comment,Insult\n\"\"\"thanks great #0\"\"\",0\n"),
        "{answers}"
    );
    grades_as_grade_py(&ws, "detecting-insults-in-social-commentary");

    // A solution learns from the comments and predicts P(insult) per test comment.
    let run = grade_file(
        &ws,
        "detecting-insults-in-social-commentary",
        &solution(
            &ws,
            "def train_and_predict(data, X_val):\n    \
                 return X_val['Comment'].str.contains('idiot|moron|troll').astype(float) * 0.8 + 0.1\n",
        ),
    );
    assert_eq!(run["outcome"], "ok", "{run}");
    assert!((0.0..=1.0).contains(&run["score"].as_f64().unwrap()), "{run}");
}

/// Without grade.py's id (a competition the layouts do not know), the sample submission's
/// first column is the id: nothing is left to predict, and the refusal names the files.
#[test]
fn a_refusal_names_the_files_it_comes_from_and_an_id_that_repeats() {
    let m = Mle::new();
    insults(&m, "insults-lite");
    tpsmay_with_repeated_id(&m);
    let ws = Workspace::empty_root();
    let out = m.import(&ws, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let refused = report["refused"].as_array().unwrap();
    let reason = |id: &str| {
        refused
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{id} not refused: {report}"))["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let insults = reason("insults-lite");
    let sample = m
        .data
        .join("insults-lite/prepared/public/sample_submission_null.csv");
    assert_eq!(
        insults,
        format!(
            "{} has no column to predict besides the id `Insult` (test.csv holds every other)",
            sample.display()
        )
    );
    let repeated = reason("repeated-lite");
    let answers = m.data.join("repeated-lite/prepared/private/test.csv");
    assert_eq!(
        repeated,
        format!(
            "{}: rows 2 and 5 have the same id `id` = `40`; rows are graded by their id",
            answers.display()
        )
    );
    for r in [&insults, &repeated] {
        assert!(!r.contains(".toml"), "{r}");
    }
    assert!(
        stderr(&out).contains("refused `insults-lite`: "),
        "{}",
        stderr(&out)
    );
    assert!(!ws.dir.path().join("data").exists());
}

fn tpsmay_with_repeated_id(m: &Mle) {
    let mut answers = String::from("id,target\n");
    for i in [40, 41, 42, 40, 43] {
        answers.push_str(&format!("{i},{}\n", i % 2));
    }
    m.competition(
        "repeated-lite",
        "auc-roc",
        &[
            ("public/train.csv", "id,f,target\n1,0.5,1\n2,0.1,0\n"),
            ("public/test.csv", "id,f\n40,1\n41,2\n42,3\n43,4\n"),
            (
                "public/sample_submission.csv",
                "id,target\n40,0.5\n41,0.5\n42,0.5\n43,0.5\n",
            ),
            ("private/test.csv", &answers),
        ],
    );
}

#[test]
fn six_layouts_import_with_the_harness_files_and_grade_as_grade_py() {
    let m = Mle::new();
    six(&m);
    let ws = Workspace::empty_root();
    let report = imported(&m.import(&ws, &[]));
    let ids: Vec<&str> = report.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, SIX);
    let bench = Benchmark::load(ws.dir.path()).unwrap();
    let get = |id: &str| bench.select(&[id.to_string()]).unwrap()[0];
    let public = |id: &str, name: &str| get(id).file(Side::Public, name);

    // The preparation's files stay; the harness's are added, each with its note.
    let taxi = "new-york-city-taxi-fare-prediction";
    assert_eq!(
        std::fs::read(public(taxi, "train.csv")).unwrap(),
        std::fs::read(public(taxi, "labels.csv")).unwrap()
    );
    assert!(public(taxi, "GCP-Coupons-Instructions.rtf").is_file());
    for (id, name, header) in [
        ("dog-breed-identification", "train.csv", "id,breed"),
        ("dog-breed-identification", "test.csv", "id"),
        ("histopathologic-cancer-detection", "train.csv", "id,label"),
        ("histopathologic-cancer-detection", "test.csv", "id"),
        (
            "text-normalization-challenge-english-language",
            "train.csv",
            "id,sentence_id,token_id,class,before,after",
        ),
        (
            "text-normalization-challenge-russian-language",
            "test.csv",
            "id,sentence_id,token_id,before",
        ),
    ] {
        assert_eq!(header_of(&public(id, name)), header, "{id} {name}");
    }
    let pizza_train = std::fs::read_to_string(public("random-acts-of-pizza", "train.csv")).unwrap();
    assert!(
        pizza_train.starts_with(
            "giver_username_if_known,number_of_upvotes_of_request_at_retrieval,request_id,\
             request_text_edit_aware,request_title,requester_number_of_posts_at_request,\
             requester_received_pizza,requester_subreddits_at_request,requester_user_flair,\
             unix_timestamp_of_request\n\
             N/A,0,t3_tr0,\"I am hungry, \"\"really\"\"\nrequest 0: pizza for 0 kids\",\
             [Request] pizza 0,0,true,[],shroom,1300000000.0\n"
        ),
        "{pizza_train}"
    );
    assert!(public("random-acts-of-pizza", "train.json").is_file());
    let ru_test = std::fs::read_to_string(public(
        "text-normalization-challenge-russian-language",
        "test.csv",
    ))
    .unwrap();
    assert!(
        ru_test.lines().nth(1).unwrap().starts_with("0_0,0,0,"),
        "{ru_test}"
    );
    for (id, needle) in [
        (taxi, "the harness's train.csv is labels.csv"),
        (
            "dog-breed-identification",
            "the harness's test.csv is the id column `id`",
        ),
        (
            "random-acts-of-pizza",
            "the harness's test.csv holds the records of test.json",
        ),
        (
            "text-normalization-challenge-english-language",
            "the harness's train.csv is the CSV inside en_train.csv.zip, with the column `id` = `sentence_id` `_` `token_id` in front",
        ),
    ] {
        let notes = &get(id).manifest.import_notes;
        assert!(notes.iter().any(|n| n.contains(needle)), "{id}: {notes:?}");
    }
    for (id, domain) in [
        ("random-acts-of-pizza", Domain::Text),
        ("dog-breed-identification", Domain::Image),
        ("histopathologic-cancer-detection", Domain::Image),
        (taxi, Domain::Tabular),
    ] {
        assert_eq!(get(id).manifest.domain, domain, "{id}");
    }
    let prepared = ws.ml2b().args(["prepare", "--check"]).output().unwrap();
    assert!(prepared.status.success(), "{}", stderr(&prepared));

    for id in SIX {
        grades_as_grade_py(&ws, id);
    }
}

/// Solutions run through the harness on the files the import made: it reads them as
/// `data` and `X_val`, and writes each prediction's id from `test.csv`.
#[test]
fn solutions_see_the_harness_files_of_the_six() {
    let m = Mle::new();
    six(&m);
    let ws = Workspace::empty_root();
    imported(&m.import(&ws, &[]));
    let run = |id: &str, body: &str| {
        let r = grade_file(&ws, id, &solution(&ws, body));
        assert_eq!(r["outcome"], "ok", "{id}: {r}");
        assert_eq!(r["invalid_reason"], Value::Null, "{id}: {r}");
        r["score"].as_f64().unwrap()
    };
    // Said as written: right for the half of the test tokens the fixture wrote so.
    for id in [
        "text-normalization-challenge-english-language",
        "text-normalization-challenge-russian-language",
    ] {
        let score = run(
            id,
            "def train_and_predict(data, X_val):\n    return X_val['before'].astype(str)\n",
        );
        assert!(score > 0.0 && score < 1.0, "{id}: {score}");
    }
    let uniform = run(
        "dog-breed-identification",
        "import numpy as np\n\ndef train_and_predict(data, X_val):\n    \
             k = data['breed'].nunique()\n    return np.full((len(X_val), k), 1.0 / k)\n",
    );
    assert!((uniform - 8f64.ln()).abs() < 1e-9, "{uniform}");
    let constant = run(
        "histopathologic-cancer-detection",
        "import numpy as np\n\ndef train_and_predict(data, X_val):\n    return np.full(len(X_val), data['label'].mean())\n",
    );
    assert_eq!(constant, 0.5);
    run(
        "random-acts-of-pizza",
        "def train_and_predict(data, X_val):\n    \
             assert data['requester_received_pizza'].dtype == bool\n    \
             return X_val['requester_number_of_posts_at_request'] / 20.0\n",
    );
}

/// aerial-cactus-identification: `train.csv` (`id,has_cactus`), the images zipped in
/// `train.zip` and `test.zip`, no `test.csv`.
fn cactus(m: &Mle) {
    let c = case("aerial-cactus-identification");
    let answers = c["answers_csv"].as_str().unwrap();
    let (_, rows) = table(answers);
    let train: Vec<Vec<String>> = (0..30)
        .map(|i| vec![format!("{:032x}.jpg", 104_729 * (i + 1)), (i % 2).to_string()])
        .collect();
    let sample: Vec<Vec<String>> = rows.iter().map(|r| vec![r[0].clone(), "0.5".into()]).collect();
    let files: Vec<(&str, Vec<u8>)> = vec![
        (
            "public/train.csv",
            csv_text(&["id", "has_cactus"], &train).into_bytes(),
        ),
        (
            "public/train.zip",
            zipped(&format!("train/{}", train[0][0]), "jpeg"),
        ),
        ("public/test.zip", zipped(&format!("test/{}", rows[0][0]), "jpeg")),
        (
            "public/sample_submission.csv",
            csv_text(&["id", "has_cactus"], &sample).into_bytes(),
        ),
        ("private/test.csv", answers.as_bytes().to_vec()),
    ];
    m.competition("aerial-cactus-identification", "auc-roc", &files);
}

/// ranzcr-clip-catheter-line-classification: `train.csv` with the 11 class columns and
/// PatientID, `train_annotations.csv`, the images in `train/` and `test/`, no `test.csv`;
/// the sample submission holds the 9 classes grade.py scores.
fn ranzcr(m: &Mle) {
    let c = case("ranzcr-clip-catheter-line-classification");
    let answers = c["answers_csv"].as_str().unwrap();
    let (h, rows) = table(answers);
    let header: Vec<&str> = h.iter().map(String::as_str).collect();
    let scored: Vec<String> = c["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    let mut files: Vec<(String, String)> = Vec::new();
    let train: Vec<Vec<String>> = (0..24)
        .map(|i| {
            let mut r = vec![format!("1.2.826.0.1.3680043.8.498.{}", 1000 + i)];
            r.extend((1..h.len() - 1).map(|k| if (i + k).is_multiple_of(3) { "1" } else { "0" }.to_string()));
            r.push(format!("ec{i:07}"));
            r
        })
        .collect();
    for r in &train {
        files.push((format!("public/train/{}.jpg", r[0]), "jpeg".into()));
    }
    for r in &rows {
        files.push((format!("public/test/{}.jpg", r[0]), "jpeg".into()));
    }
    let sample_header: Vec<&str> = std::iter::once("StudyInstanceUID")
        .chain(scored.iter().map(String::as_str))
        .collect();
    let sample: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            std::iter::once(r[0].clone())
                .chain(scored.iter().map(|_| "0".into()))
                .collect()
        })
        .collect();
    files.extend([
        ("public/train.csv".into(), csv_text(&header, &train)),
        (
            "public/train_annotations.csv".into(),
            format!(
                "StudyInstanceUID,label,data\n{},CVC - Normal,\"[[1, 2]]\"\n",
                train[0][0]
            ),
        ),
        (
            "public/sample_submission.csv".into(),
            csv_text(&sample_header, &sample),
        ),
        ("private/test.csv".into(), answers.to_string()),
    ]);
    let files: Vec<(&str, String)> = files.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    m.competition("ranzcr-clip-catheter-line-classification", "auc-roc", &files);
}

/// Two lite competitions whose test rows are images and whose preparation writes no
/// `test.csv`: the harness's `test.csv` is the sample submission's ids.
#[test]
fn image_competitions_without_test_csv_take_the_sample_submissions_ids() {
    let m = Mle::new();
    cactus(&m);
    ranzcr(&m);
    let ws = Workspace::empty_root();
    let report = imported(&m.import(&ws, &[]));
    let ids: Vec<&str> = report.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "aerial-cactus-identification",
            "ranzcr-clip-catheter-line-classification"
        ]
    );
    let bench = Benchmark::load(ws.dir.path()).unwrap();
    for (id, column) in [
        ("aerial-cactus-identification", "id"),
        ("ranzcr-clip-catheter-line-classification", "StudyInstanceUID"),
    ] {
        let c = bench.select(&[id.to_string()]).unwrap()[0];
        let test = std::fs::read_to_string(c.file(Side::Public, "test.csv")).unwrap();
        let (_, answers) = table(case(id)["answers_csv"].as_str().unwrap());
        let expected: String = std::iter::once(format!("{column}\n"))
            .chain(answers.iter().map(|r| format!("{}\n", r[0])))
            .collect();
        assert_eq!(test, expected, "{id}");
        grades_as_grade_py(&ws, id);
    }
    let ranzcr = bench
        .select(&["ranzcr-clip-catheter-line-classification".to_string()])
        .unwrap()[0];
    assert_eq!(ranzcr.manifest.columns.targets.len(), 9);
    assert_eq!(ranzcr.manifest.domain, Domain::Image);
    let prepared = ws.ml2b().args(["prepare", "--check"]).output().unwrap();
    assert!(prepared.status.success(), "{}", stderr(&prepared));
}
