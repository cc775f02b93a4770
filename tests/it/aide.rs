//! The aide agent against a scripted chat-completions server on 127.0.0.1: the search takes
//! AIDE's path (drafts, a debug of the buggy draft, improvements of the best), each attempt
//! runs in the sandbox on the validation split and is recorded in `journal` with its
//! parent, stage, plan, code, run and metric; the best attempt is the submission and flows
//! through execute and grade; a re-run asks and runs nothing; a search that fails midway
//! resumes without asking again for the finished steps.

use std::sync::{Arc, Mutex};

use crate::common::Workspace;
use crate::common::{Seen, add_model, chat_server_on, completion, ml2b, query};
use crate::competitions::{TOY_MODULAR, toy};

/// Draft 0: raises in `train`.
const BUGGY: &str = "import numpy as np\n\ndef train(data):\n    raise ValueError('boom: no model')\n\ndef prepare_val(train_output, X_val):\n    return len(X_val)\n\ndef predict(train_output, prepare_val_output):\n    return np.full(prepare_val_output, 0.5)\n";

/// The debug answer: scores rows by `x`.
const BY_X: &str = "import numpy as np\n\ndef train(data):\n    return 13.0\n\ndef prepare_val(train_output, X_val):\n    return X_val['x'].to_numpy(dtype=float)\n\ndef predict(train_output, prepare_val_output):\n    return prepare_val_output / train_output\n";

/// The improve answer: scores rows by `-x`.
const BY_MINUS_X: &str = "import numpy as np\n\ndef train(data):\n    return 13.0\n\ndef prepare_val(train_output, X_val):\n    return X_val['x'].to_numpy(dtype=float)\n\ndef predict(train_output, prepare_val_output):\n    return 1.0 - prepare_val_output / train_output\n";

pub(crate) const SEARCH: [&str; 12] = [
    "--steps",
    "5",
    "--drafts",
    "2",
    "--debug-prob",
    "1",
    "--agent",
    "aide",
    "--format",
    "modular",
    "--model",
    "fake",
];

/// The step a request is for: the low 32 bits of its seed.
fn step_of(request: &serde_json::Value) -> u64 {
    request["seed"].as_u64().unwrap() & 0xffff_ffff
}

fn user(request: &serde_json::Value) -> &str {
    request["messages"][1]["content"].as_str().unwrap()
}

/// Answers by the step's kind (read from the English prompt): draft 0 is buggy, later
/// drafts the base rate; a debug scores by `x`, an improvement by `-x`. While `fail_step`
/// holds a step, that step gets a 400.
pub(crate) fn scripted(fail_step: Arc<Mutex<Option<u64>>>) -> (u16, Arc<Mutex<Seen>>) {
    scripted_on("127.0.0.1", fail_step)
}

/// [`scripted`], listening on `host`.
pub(crate) fn scripted_on(host: &str, fail_step: Arc<Mutex<Option<u64>>>) -> (u16, Arc<Mutex<Seen>>) {
    chat_server_on(host, move |_, request| {
        let step = step_of(request);
        if *fail_step.lock().unwrap() == Some(step) {
            return (400, "{\"error\": {\"message\": \"bad request\"}}".into());
        }
        let text = user(request);
        let (plan, code) = if text.contains("## Output of the run") {
            ("The draft raised in train; score rows by x instead.", BY_X)
        } else if text.contains("On a validation split of the training data it scored") {
            ("Reverse the ranking: score rows by minus x.", BY_MINUS_X)
        } else if step == 0 {
            ("Fit nothing yet.", BUGGY)
        } else {
            ("Predict the base rate of yes.", TOY_MODULAR)
        };
        (200, completion(&format!("{plan}\n\n```python\n{code}```\n")))
    })
}

/// The index of the highest metric, the earliest of equals (buggy rows have none).
fn best_of(rows: &[serde_json::Value]) -> usize {
    let mut best: Option<(usize, f64)> = None;
    for (i, r) in rows.iter().enumerate() {
        if let Some(m) = r["metric"].as_f64()
            && best.is_none_or(|(_, b)| m > b)
        {
            best = Some((i, m));
        }
    }
    best.unwrap().0
}

fn workspace(port: u16) -> Workspace {
    workspace_with(port, Vec::new())
}

/// The toy root, the scripted model and translate-validate, with `env` on every command.
fn workspace_with(port: u16, env: Vec<(String, String)>) -> Workspace {
    let mut ws = toy();
    ws.env = env;
    add_model(&ws, port);
    ml2b(&ws, &["stage", "translate-validate"]);
    ws
}

fn generate(ws: &Workspace, extra: &[&str]) -> serde_json::Value {
    let args = [
        &["--json", "stage", "generate", "--langs", "en"][..],
        &SEARCH,
        extra,
    ]
    .concat();
    ml2b(ws, &args).0
}

/// The journal, in step order, without the recorded times.
fn journal(ws: &Workspace) -> serde_json::Value {
    query(
        ws,
        "SELECT step, stage, parent, node, debug_depth, plan, code_blake3, outcome, exc_type, metric, maximize, is_buggy, search FROM journal ORDER BY step",
    )
}

#[test]
fn the_search_drafts_debugs_improves_and_submits_the_best_attempt() {
    let (port, seen) = scripted(Arc::new(Mutex::new(None)));
    let ws = workspace(port);
    let first = generate(&ws, &[]);
    assert_eq!(first["summary"]["ran"], 1, "{first}");
    assert_eq!(seen.lock().unwrap().requests.len(), 5, "one request per step");

    let j = journal(&ws);
    let rows = j.as_array().unwrap();
    let stages: Vec<&str> = rows.iter().map(|r| r["stage"].as_str().unwrap()).collect();
    assert_eq!(stages, ["draft", "draft", "debug", "improve", "improve"], "{j}");
    // The buggy draft is debugged once (its fix is a leaf that is not buggy), then the best
    // attempt is improved.
    assert_eq!(rows[0]["is_buggy"], true);
    assert_eq!(rows[0]["outcome"], "runtime_error");
    assert_eq!(rows[0]["exc_type"], "ValueError");
    assert_eq!(rows[0]["parent"], serde_json::Value::Null);
    assert_eq!(rows[2]["parent"], rows[0]["node"], "the debug revises draft 0");
    assert_eq!(rows[2]["debug_depth"], 1);
    assert_eq!(rows[1]["metric"], 0.5, "a constant has AUC 0.5: {j}");
    assert_eq!(
        rows[2]["plan"],
        "The draft raised in train; score rows by x instead."
    );
    let by_x = rows[2]["metric"].as_f64().unwrap();
    let by_minus_x = rows[3]["metric"].as_f64().unwrap();
    assert!(
        (by_x + by_minus_x - 1.0).abs() < 1e-12,
        "AUC of -x is 1 - AUC of x: {j}"
    );
    // Each improvement revises the best attempt before it (the earliest of equals).
    assert_eq!(rows[3]["parent"], rows[best_of(&rows[..3])]["node"], "{j}");
    assert_eq!(rows[4]["parent"], rows[best_of(&rows[..4])]["node"], "{j}");
    let best = best_of(rows);
    for r in rows {
        assert_eq!(r["maximize"], true);
        assert_eq!(r["search"], rows[0]["search"]);
    }

    // What each step was shown.
    {
        let s = seen.lock().unwrap();
        let debug = user(&s.requests[2].1);
        assert!(
            debug.contains("ValueError: boom: no model"),
            "the run's error is shown:\n{debug}"
        );
        assert!(debug.contains("raise ValueError"), "with the buggy code");
        let improve = user(&s.requests[3].1);
        assert!(improve.contains("## Earlier attempts"), "{improve}");
        assert!(
            improve.contains("Predict the base rate of yes. (validation score: 0.500000)"),
            "{improve}"
        );
    }

    // The submission is the best attempt's code, and the unit's costs are the search's.
    let g = query(
        &ws,
        "SELECT agent, code_blake3, unit_key, attempts, input_tokens, cost_usd FROM generate",
    );
    assert_eq!(g[0]["agent"], "aide");
    assert_eq!(g[0]["code_blake3"], rows[best]["code_blake3"], "{g}\n{j}");
    assert_eq!(g[0]["unit_key"], rows[0]["search"]);
    assert_eq!(g[0]["attempts"], 5);
    assert_eq!(g[0]["input_tokens"], 5 * 1200);
    // It executes and grades on the private answers like any submission.
    ml2b(&ws, &["stage", "execute"]);
    ml2b(&ws, &["stage", "grade"]);
    let graded = query(&ws, "SELECT valid FROM grade");
    assert_eq!(graded[0]["valid"], true, "{graded}");
    // In the paper's tables the searched model is its own entrant.
    let runs = query(&ws, "SELECT model, valid FROM runs");
    assert_eq!(runs, serde_json::json!([{"model": "fake+aide", "valid": true}]));
    let cost = query(&ws, concat!(env!("CARGO_MANIFEST_DIR"), "/queries/cost.sql"));
    assert_eq!(cost[0]["model"], "fake+aide", "{cost}");
    assert_eq!(cost[0]["input_tokens"], 5 * 1200, "every step is paid for");

    // The search as AIDE's journal.json, and its best solution.
    let (listed, _) = ml2b(&ws, &["--json", "journal"]);
    assert_eq!(listed[0]["attempts"], 5, "{listed}");
    assert_eq!(listed[0]["buggy"], 1);
    assert_eq!(listed[0]["best_step"], best);
    let out = ws.dir.path().join("aide-run");
    let search = rows[0]["search"].as_str().unwrap();
    ml2b(&ws, &["journal", &search[..10], "--out", out.to_str().unwrap()]);
    let dump: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("journal.json")).unwrap()).unwrap();
    assert_eq!(dump["__version"], "2");
    let nodes = dump["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 5);
    assert_eq!(nodes[0]["code"], BUGGY);
    assert_eq!(
        nodes[0]["metric"],
        serde_json::json!({"value": null, "maximize": null})
    );
    assert_eq!(
        nodes[1]["metric"],
        serde_json::json!({"value": 0.5, "maximize": true})
    );
    assert!(nodes[0]["_term_out"][0].as_str().unwrap().contains("boom"));
    assert_eq!(dump["node2parent"].as_object().unwrap().len(), 3, "{dump}");
    assert_eq!(
        dump["node2parent"][nodes[2]["id"].as_str().unwrap()],
        nodes[0]["id"]
    );
    let best_code = std::fs::read_to_string(out.join("best_solution.py")).unwrap();
    assert_eq!(best_code, nodes[best]["code"].as_str().unwrap());
    let unknown = ws.ml2b().args(["journal", "00000000"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no search of the journal"));

    // Again: nothing is asked, run or appended. After losing both logs (a crash before the
    // commits), the same events are re-derived from the caches without a call.
    let again = generate(&ws, &[]);
    assert_eq!(again["summary"]["ran"], 0, "{again}");
    let ids = || query(&ws, "SELECT event_id FROM journal ORDER BY step");
    let before = ids();
    for log in ["generate", "journal"] {
        std::fs::remove_dir_all(ws.dir.path().join("store/log").join(log)).unwrap();
        let _ = std::fs::remove_dir_all(ws.dir.path().join("store/index").join(log));
    }
    let replayed = generate(&ws, &[]);
    assert_eq!(replayed["summary"]["ran"], 1);
    assert_eq!(ids(), before, "bit-identical journal events");
    assert_eq!(
        seen.lock().unwrap().requests.len(),
        5,
        "answered from the request cache"
    );
}

#[test]
fn a_search_that_fails_midway_resumes_without_asking_again_and_ends_as_an_uninterrupted_one() {
    fails_midway_and_resumes(Vec::new());
}

/// The same, on an S3 store: the request and trial caches are keys there, and trials are
/// graded from a temporary copy of their predictions.
#[test]
fn a_search_on_an_s3_store_resumes_from_its_caches_there() {
    let server = crate::s3::Server::start();
    let mut env = server.endpoint().env();
    env.push(("ML2B_STORE".into(), crate::s3::URL.into()));
    fails_midway_and_resumes(env);
}

fn fails_midway_and_resumes(env: Vec<(String, String)>) {
    let fail = Arc::new(Mutex::new(Some(3)));
    let (port, seen) = scripted(fail.clone());
    let ws = workspace_with(port, env);
    let args = [&["--json", "stage", "generate", "--language", "en"][..], &SEARCH].concat();
    let out = ws
        .ml2b()
        .env("ML2B_TEST_KEY", crate::common::KEY)
        .args(&args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        query(&ws, "SELECT count(*) AS n FROM journal")[0]["n"],
        0,
        "nothing committed"
    );
    let asked: Vec<u64> = seen
        .lock()
        .unwrap()
        .requests
        .iter()
        .map(|(_, r)| step_of(r))
        .collect();
    assert_eq!(asked, [0, 1, 2, 3]);

    *fail.lock().unwrap() = None;
    generate(&ws, &[]);
    let asked: Vec<u64> = seen
        .lock()
        .unwrap()
        .requests
        .iter()
        .map(|(_, r)| step_of(r))
        .collect();
    assert_eq!(asked, [0, 1, 2, 3, 3, 4], "steps 0-2 came from the cache");

    // The same search in a fresh store, uninterrupted, takes the same path to the same code
    // (ids differ: the endpoint, with its port, is part of every request's key).
    let (port2, _) = scripted(Arc::new(Mutex::new(None)));
    let fresh = workspace(port2);
    generate(&fresh, &[]);
    assert_eq!(path(&ws), path(&fresh));
    assert_eq!(path(&ws).as_array().unwrap().len(), 5);
    let elsewhere = ws.env.iter().any(|(k, _)| k == "ML2B_STORE");
    assert_eq!(
        !ws.store_path().exists(),
        elsewhere,
        "the store is where ML2B_STORE says"
    );
}

/// The search's path: each step's stage, parent step, plan, code and verdict.
fn path(ws: &Workspace) -> serde_json::Value {
    query(
        ws,
        "SELECT j.step, j.stage, p.step AS parent_step, j.plan, j.code_blake3, j.outcome, j.metric, j.is_buggy, j.is_best_so_far FROM journal j LEFT JOIN journal p ON j.parent = p.node ORDER BY j.step",
    )
}

#[test]
fn the_time_budget_stops_the_search_after_the_step_that_crosses_it() {
    let (port, _) = scripted(Arc::new(Mutex::new(None)));
    let ws = workspace(port);
    generate(&ws, &["--time-budget", "1"]);
    let rows = query(&ws, "SELECT step, elapsed_seconds FROM journal ORDER BY step");
    let rows = rows.as_array().unwrap();
    assert!(!rows.is_empty());
    let elapsed: Vec<f64> = rows
        .iter()
        .map(|r| r["elapsed_seconds"].as_f64().unwrap())
        .collect();
    // Each step starts under the budget; the search ends at the budget or at 5 steps.
    assert!(
        elapsed[..elapsed.len() - 1].iter().all(|&e| e < 1.0),
        "{elapsed:?}"
    );
    assert!(rows.len() == 5 || *elapsed.last().unwrap() >= 1.0, "{elapsed:?}");
    assert!(elapsed.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_replay_model_is_refused_by_the_aide_agent_with_the_reason() {
    let ws = toy();
    let path = ws.dir.path().join("manifests/models.toml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(
        "\n[[model]]\nname = \"again\"\nprovider = \"replay\"\nmodel = \"fake\"\nstore = \"elsewhere\"\n",
    );
    std::fs::write(path, text).unwrap();
    ml2b(&ws, &["stage", "translate-validate"]);
    let out = ws
        .ml2b()
        .args(["stage", "generate", "--model", "again", "--agent", "aide"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the aide agent cannot replay"), "{stderr}");
}
