//! `queries/agents.sql` over real searches of the toy competition: an aide search and two
//! react searches (one that submits, one that a step budget ends before it validates),
//! each by a scripted server. Every column is checked against what the searches did, as
//! their `journal` and `trajectory` logs recorded it and as the scripts made them.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::common::{Workspace, add_model, ml2b, query};
use crate::competitions::toy;

/// The toy workspace with model `fake` (the aide script) and `tooler` (the react script,
/// OpenAI tool calling), after the aide search in `en` and react searches in `en` (the
/// whole path, submitted) and `kk` (3 steps: list, read, write; the toy's `kk` text is
/// not a translation, so the pair is forced).
pub(crate) fn searched() -> Workspace {
    let (aide_port, _) = crate::aide::scripted(Arc::new(Mutex::new(None)));
    let (react_port, _) = crate::react::scripted(crate::react::path_calls());
    let ws = toy();
    add_model(&ws, aide_port);
    let path = ws.dir.path().join("manifests/models.toml");
    let mut models = std::fs::read_to_string(&path).unwrap();
    models.push_str(&format!(
        "\n[[model]]\nname = \"tooler\"\nprovider = \"openai\"\nendpoint = \"http://127.0.0.1:{react_port}/v1\"\nmodel = \"tooler-2025-01-01\"\n"
    ));
    std::fs::write(path, models).unwrap();
    ml2b(&ws, &["stage", "translate-validate"]);
    let generate = ["--json", "stage", "generate", "--format", "modular"];
    ml2b(
        &ws,
        &[&generate[..], &["--langs", "en"], &crate::aide::SEARCH].concat(),
    );
    let react = ["--agent", "react", "--model", "tooler"];
    ml2b(&ws, &[&generate[..], &["--langs", "en"], &react].concat());
    ml2b(
        &ws,
        &[
            &generate[..],
            &["--langs", "kk", "--force", "--steps", "3"],
            &react,
        ]
        .concat(),
    );
    ws
}

fn agents(ws: &Workspace) -> Vec<Value> {
    let sql = concat!(env!("CARGO_MANIFEST_DIR"), "/queries/agents.sql");
    let rows = query(ws, sql);
    rows.as_array().unwrap().clone()
}

#[test]
fn the_agents_table_is_what_the_aide_and_react_searches_did() {
    let ws = searched();
    let rows = agents(&ws);
    let keys: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap();
            (s("model"), s("agent"), s("competition"), s("language"))
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("fake", "aide", "toy", "en"),
            ("tooler", "react", "toy", "en"),
            ("tooler", "react", "toy", "kk"),
        ],
        "{rows:#?}"
    );

    // aide: five attempts, each a validation run; the failed share and the best score are
    // the journal's (the buggy draft; the best metric, AUC is maximized).
    let journal = query(&ws, "SELECT is_buggy, metric FROM journal ORDER BY step");
    let journal = journal.as_array().unwrap();
    assert_eq!(journal.len(), 5);
    let buggy = journal.iter().filter(|r| r["is_buggy"] == true).count();
    assert_eq!(buggy, 1, "the script's first draft raises");
    let best = journal
        .iter()
        .filter_map(|r| r["metric"].as_f64())
        .fold(f64::NEG_INFINITY, f64::max);
    let aide = &rows[0];
    assert_eq!(aide["searches"], 1);
    assert_eq!(aide["mean_steps"], 5.0);
    assert_eq!(aide["validations"], 5);
    assert_eq!(aide["failed_share"], buggy as f64 / 5.0);
    assert_eq!(aide["best_score"], best);
    assert!(best > 0.5, "an improvement beats the base rate: {best}");
    assert_eq!(aide["submitted"], 1, "a good attempt is submitted");

    // react, en: list, read, write, run (fails), write, validate (AUC 0.5), submit.
    let react = &rows[1];
    assert_eq!(react["searches"], 1);
    assert_eq!(react["mean_steps"], 7.0);
    assert_eq!(react["validations"], 1);
    assert_eq!(react["failed_share"], 1.0 / 7.0);
    assert_eq!(react["best_score"], 0.5);
    assert_eq!(react["submitted"], 1);
    let logged = query(
        &ws,
        "SELECT count(*) AS steps, sum(CAST(is_error AS INT)) AS errors, max(validation_score) AS best FROM trajectory WHERE language = 'en'",
    );
    assert_eq!(logged, json!([{"steps": 7, "errors": 1, "best": 0.5}]));

    // react, kk: the step budget ends it before any validation or submit.
    let short = &rows[2];
    assert_eq!(short["mean_steps"], 3.0);
    assert_eq!(short["validations"], 0);
    assert_eq!(short["failed_share"], 0.0);
    assert_eq!(short["best_score"], Value::Null);
    assert_eq!(short["submitted"], 0);

    // The analyze stage computes it with the other tables.
    let (out, _) = ml2b(&ws, &["--json", "stage", "analyze"]);
    assert_eq!(out["summary"]["failed"], json!([]), "{out}");
    let analyzed = query(&ws, "SELECT rows FROM analyze WHERE name = 'agents'");
    assert_eq!(analyzed, json!([{"rows": 3}]));
}
