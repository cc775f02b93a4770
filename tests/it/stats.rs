//! The statistics commands end to end: `bleu`, `agreement`, `score`, `aup`.
//!
//! Exactness against the reference implementations is tested in the metric
//! modules; here: the JSON shapes, exit codes and error messages of the CLI.

use insta::assert_snapshot;

use crate::common::Workspace;

fn json(ws: &Workspace, args: &[&str]) -> (i32, serde_json::Value) {
    let out = ws.ml2b().arg("--json").args(args).output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap(), v)
}

#[test]
fn bleu_json_has_the_documented_fields() {
    let ws = Workspace::new();
    let hyp = ws.put(
        "hyp.txt",
        "The cat sat on the mat.\nPredict the house price.\n".as_bytes(),
    );
    let r1 = ws.put(
        "ref1.txt",
        "The cat is on the mat.\nPredict the price of the house.\n".as_bytes(),
    );
    let r2 = ws.put(
        "ref2.txt",
        "There is a cat on the mat.\nPredict the sale price.\n".as_bytes(),
    );
    let (code, v) = json(
        &ws,
        &["bleu", "--hyp", &hyp, "--ref", &r1, "--ref", &r2, "--chrf"],
    );
    assert_eq!(code, 0);
    for key in [
        "score",
        "counts",
        "totals",
        "precisions",
        "bp",
        "sys_len",
        "ref_len",
    ] {
        assert!(!v["bleu"][key].is_null(), "bleu.{key} missing in {v}");
    }
    assert!(v["chrf"]["score"].is_f64());
    let (_, s) = json(&ws, &["bleu", "--hyp", &hyp, "--ref", &r1, "--sentence"]);
    assert_eq!(s["sentences"].as_array().unwrap().len(), 2);
}

#[test]
fn bleu_line_count_mismatch_is_an_input_error() {
    let ws = Workspace::new();
    let hyp = ws.put("hyp.txt", b"a\nb\nc\n");
    let r = ws.put("ref.txt", b"a\nb\n");
    assert_snapshot!(ws.run(&["bleu", "--hyp", &hyp, "--ref", &r]));
}

#[test]
fn bleu_invalid_utf8_names_the_line() {
    let ws = Workspace::new();
    let hyp = ws.put("hyp.txt", b"fine\nbad \xff byte\n");
    let r = ws.put("ref.txt", b"fine\nok\n");
    assert_snapshot!(ws.run(&["bleu", "--hyp", &hyp, "--ref", &r]));
}

#[test]
fn bleu_rejects_an_unknown_tokenizer() {
    let ws = Workspace::new();
    let f = ws.put("x.txt", b"a\n");
    let out = ws
        .ml2b()
        .args(["bleu", "--hyp", &f, "--ref", &f, "--tokenize", "moses"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

const RATINGS: &str = "subject,r1,r2,r3\ns1,5,5,4\ns2,4,4,4\ns3,3,,3\ns4,5,5,5\ns5,2,3,2\n";

#[test]
fn agreement_json_has_every_coefficient() {
    let ws = Workspace::new();
    let f = ws.put("ratings.csv", RATINGS.as_bytes());
    let (code, v) = json(&ws, &["agreement", "--ratings", &f, "--categories", "1,2,3,4,5"]);
    assert_eq!(code, 0);
    for key in ["ac1", "fleiss", "krippendorff", "brennan_prediger"] {
        for field in ["coefficient", "pa", "pe", "se", "ci"] {
            assert!(v[key].get(field).is_some(), "{key}.{field} missing in {v}");
        }
    }
    assert!(v.get("cohen").is_none(), "cohen only with two raters");
    let two = ws.put("two.csv", b"subject,a,b\n1,1,1\n2,2,2\n3,1,2\n");
    let (_, v) = json(&ws, &["agreement", "--ratings", &two]);
    assert!(v["cohen"]["coefficient"].is_f64());
}

#[test]
fn agreement_bad_inputs_name_file_and_line() {
    let ws = Workspace::new();
    let ragged = ws.put("ragged.csv", b"subject,r1,r2\ns1,1,2\ns2,1\n");
    assert_snapshot!("agreement_ragged", ws.run(&["agreement", "--ratings", &ragged]));
    let outside = ws.put("outside.csv", b"subject,r1,r2\ns1,1,2\ns2,1,7\n");
    assert_snapshot!(
        "agreement_outside",
        ws.run(&["agreement", "--ratings", &outside, "--categories", "1,2,3"])
    );
    let empty = ws.put("empty.csv", b"");
    assert_snapshot!("agreement_empty", ws.run(&["agreement", "--ratings", &empty]));
}

#[test]
fn score_valid_and_invalid_submissions() {
    let ws = Workspace::new();
    let answers = ws.put("answers.csv", b"id,target\n1,0\n2,1\n3,1\n4,0\n");
    let good = ws.put("good.csv", b"id,target\n4,0.2\n3,0.7\n2,0.9\n1,0.4\n");
    let (code, v) = json(
        &ws,
        &[
            "score",
            "--metric",
            "roc_auc",
            "--answers",
            &answers,
            "--predictions",
            &good,
        ],
    );
    assert_eq!(
        (code, v),
        (
            0,
            serde_json::json!({"metric": "roc_auc", "score": 1.0, "valid": true, "warnings": []})
        )
    );
    let short = ws.put("short.csv", b"id,target\n1,0.2\n2,0.9\n");
    let (code, v) = json(
        &ws,
        &[
            "score",
            "--metric",
            "roc_auc",
            "--answers",
            &answers,
            "--predictions",
            &short,
        ],
    );
    assert_eq!((code, v["valid"].as_bool()), (1, Some(false)));
    assert!(v["reason"].as_str().unwrap().contains("row"), "{v}");
    assert_snapshot!(ws.run(&[
        "score",
        "--metric",
        "roc_auc",
        "--answers",
        &answers,
        "--predictions",
        &short
    ]));
}

#[test]
fn score_unknown_metric_and_missing_file_are_input_errors() {
    let ws = Workspace::new();
    let answers = ws.put("answers.csv", b"id,target\n1,0\n");
    let out = ws
        .ml2b()
        .args([
            "score",
            "--metric",
            "nope",
            "--answers",
            &answers,
            "--predictions",
            &answers,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_snapshot!(ws.run(&[
        "score",
        "--metric",
        "rmse",
        "--answers",
        &answers,
        "--predictions",
        "missing.csv"
    ]));
}

#[test]
fn aup_reports_per_model_and_language() {
    let ws = Workspace::new();
    let ratios = ws.put(
        "ratios.csv",
        b"model,language,competition,r\nm,en,a,1.0\nm,en,b,0.5\nm,kk,a,0.8\nm,kk,b,0.0\n",
    );
    let (code, v) = json(&ws, &["aup", "--ratios", &ratios]);
    assert_eq!(code, 0, "{v}");
    assert_snapshot!(serde_json::to_string_pretty(&v).unwrap());
    let bad = ws.put("bad.csv", b"model,language,competition,r\nm,en,a,abc\n");
    let out = ws.ml2b().args(["aup", "--ratios", &bad]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
