//! The react agent against scripted chat-completions servers on 127.0.0.1 that issue real
//! tool calls (and one that speaks only the text protocol): the path list → read → write →
//! run (an error) → write → validate → submit is followed, each observation is what the
//! tool really returned (the server is shown it in the next request), the submitted code
//! executes and grades in the real sandbox; bad arguments, an unknown tool, a turn without
//! a call and paths outside the allowed roots are answered with error observations; the
//! step budget ends a search without a submit; a re-run asks and runs nothing and commits
//! the same events.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::common::{Seen, Workspace, add_model, chat_server, completion, ml2b, query};
use crate::competitions::{TOY_MODULAR, toy};

/// The step a request is for: the low 32 bits of its seed.
fn step_of(request: &Value) -> usize {
    (request["seed"].as_u64().unwrap() & 0xffff_ffff) as usize
}

/// A chat-completions body whose message calls `tool` with `arguments`.
fn tool_call(step: usize, tool: &str, arguments: &Value) -> String {
    json!({
        "id": "cmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": format!("Step {step}."),
            "tool_calls": [{"id": format!("call_{step}"), "type": "function",
                "function": {"name": tool, "arguments": arguments.to_string()}}]},
            "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20}
    })
    .to_string()
}

/// A script that prints the training rows' count, then fails on a column that is not there.
const EXPLORE: &str = "import pandas as pd\ndf = pd.read_csv('/data/train.csv')\nprint('rows', len(df))\nprint(df['no_such_column'])\n";

/// The calls of the scripted search, one per step.
pub(crate) fn path_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("list_files", json!({"path": "/data"})),
        (
            "read_file",
            json!({"path": "/data/train.csv", "start_line": 1, "end_line": 3}),
        ),
        ("write_file", json!({"path": "explore.py", "content": EXPLORE})),
        ("run_python", json!({"path": "explore.py", "timeout": 120})),
        (
            "write_file",
            json!({"path": "solution.py", "content": TOY_MODULAR}),
        ),
        ("validate", json!({"path": "solution.py"})),
        ("submit", json!({"path": "solution.py"})),
    ]
}

/// A server that makes `calls[step]` at each step (and no call past the list).
pub(crate) fn scripted(calls: Vec<(&'static str, Value)>) -> (u16, Arc<Mutex<Seen>>) {
    chat_server(move |_, request| {
        let step = step_of(request);
        match calls.get(step) {
            Some((tool, args)) => (200, tool_call(step, tool, args)),
            None => (200, completion("I am done.")),
        }
    })
}

fn workspace(port: u16, extra_model: &str) -> Workspace {
    let ws = toy();
    add_model(&ws, port);
    if !extra_model.is_empty() {
        let path = ws.dir.path().join("manifests/models.toml");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(extra_model);
        std::fs::write(path, text).unwrap();
    }
    ml2b(&ws, &["stage", "translate-validate"]);
    ws
}

fn generate(ws: &Workspace, model: &str, extra: &[&str]) -> Value {
    let args = [
        &[
            "--json", "stage", "generate", "--langs", "en", "--format", "modular",
        ][..],
        &["--agent", "react", "--model", model],
        extra,
    ]
    .concat();
    ml2b(ws, &args).0
}

/// The trajectory in step order, with each observation read from the store.
fn trajectory(ws: &Workspace) -> Vec<Value> {
    let rows = query(
        ws,
        "SELECT step, protocol, tool, arguments, is_error, extra_calls, validation_score, submitted, observation_blake3, message_blake3, search, event_id FROM trajectory ORDER BY step",
    );
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r["observation"] = object(ws, r["observation_blake3"].as_str().unwrap());
            r["message"] = object(ws, r["message_blake3"].as_str().unwrap());
            r
        })
        .collect()
}

fn object(ws: &Workspace, hex: &str) -> Value {
    let hash: ml2b::store::Hash = hex.parse().unwrap();
    serde_json::from_slice(&ws.store().objects().get(&hash).unwrap()).unwrap()
}

/// The content of the message that answered step `step`'s call, as the server saw it in
/// the next request.
fn answer_seen(seen: &Seen, step: usize) -> String {
    let (_, request) = seen
        .requests
        .iter()
        .find(|(_, r)| step_of(r) == step + 1)
        .unwrap();
    let messages = request["messages"].as_array().unwrap();
    let answer = messages
        .iter()
        .find(|m| m["tool_call_id"] == format!("call_{step}"))
        .unwrap_or_else(|| panic!("no answer to call_{step} in {request}"));
    assert_eq!(answer["role"], "tool");
    answer["content"].as_str().unwrap().to_string()
}

#[test]
fn a_tool_calling_model_explores_runs_validates_and_submits_and_the_submission_grades() {
    let (port, seen) = scripted(path_calls());
    let ws = workspace(port, "");
    let first = generate(&ws, "fake", &[]);
    assert_eq!(first["summary"]["ran"], 1, "{first}");
    assert_eq!(
        seen.lock().unwrap().requests.len(),
        7,
        "one request per step, none after the submit"
    );

    let steps = trajectory(&ws);
    let tools: Vec<&str> = steps.iter().map(|s| s["tool"].as_str().unwrap()).collect();
    assert_eq!(
        tools,
        [
            "list_files",
            "read_file",
            "write_file",
            "run_python",
            "write_file",
            "validate",
            "submit"
        ]
    );
    let errors: Vec<bool> = steps.iter().map(|s| s["is_error"].as_bool().unwrap()).collect();
    assert_eq!(
        errors,
        [false, false, false, true, false, false, false],
        "only the run failed"
    );
    for s in &steps {
        assert_eq!(s["protocol"], "openai");
        assert_eq!(s["search"], steps[0]["search"]);
        assert_eq!(s["extra_calls"], 0);
    }

    // What the tools returned, as recorded and as the model was shown it.
    let public = ws.dir.path().join("data/toy/public");
    let listed = steps[0]["observation"]["ok"].as_str().unwrap();
    let train = std::fs::read_to_string(public.join("train.csv")).unwrap();
    assert!(
        listed.contains(&format!("train.csv ({} bytes)", train.len())) && listed.contains("test.csv ("),
        "{listed}"
    );
    assert!(
        !listed.contains("answers"),
        "the private side is not listed: {listed}"
    );
    let head: String = train.lines().take(3).map(|l| format!("{l}\n")).collect();
    assert_eq!(
        steps[1]["observation"]["ok"],
        head.as_str(),
        "the file's first lines"
    );
    let ran = &steps[3]["observation"]["error"];
    let rows = train.lines().count() - 1;
    assert_eq!(ran["exit_status"], 1, "{ran}");
    assert!(
        ran["stdout"].as_str().unwrap().contains(&format!("rows {rows}")),
        "{ran}"
    );
    assert!(
        ran["stderr"]
            .as_str()
            .unwrap()
            .contains("KeyError: 'no_such_column'"),
        "{ran}"
    );
    let validated = &steps[5]["observation"]["ok"];
    assert_eq!(validated["outcome"], "ok", "{validated}");
    assert_eq!(
        validated["validation_score"], 0.5,
        "a constant has AUC 0.5: {validated}"
    );
    assert_eq!(steps[5]["validation_score"], 0.5);
    assert_eq!(steps[6]["submitted"], true);
    {
        let s = seen.lock().unwrap();
        for (i, step) in steps.iter().enumerate().take(6) {
            assert_eq!(
                answer_seen(&s, i),
                step["observation"]["shown"].as_str().unwrap(),
                "step {i}: the model is shown what the tool returned"
            );
        }
        let first = &s.requests[0].1;
        let names: Vec<&str> = first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "list_files",
                "read_file",
                "write_file",
                "run_python",
                "validate",
                "submit"
            ]
        );
        let user = first["messages"][1]["content"].as_str().unwrap();
        assert!(user.contains("Toy en") && user.contains("`/data`"), "{user}");
        assert_eq!(
            steps[2]["message"]["tool_calls"][0]["function"]["name"],
            "write_file"
        );
    }

    // The submission is the submitted file; it executes and grades like any submission.
    let g = query(
        &ws,
        "SELECT agent, code_blake3, unit_key, attempts, input_tokens, extraction FROM generate",
    );
    assert_eq!(g[0]["agent"], "react");
    assert_eq!(
        g[0]["code_blake3"],
        blake3::hash(TOY_MODULAR.as_bytes()).to_hex().as_str()
    );
    assert_eq!(g[0]["unit_key"], steps[0]["search"]);
    assert_eq!(g[0]["attempts"], 7);
    assert_eq!(g[0]["input_tokens"], 700);
    assert_eq!(g[0]["extraction"], r#"{"react":"submitted"}"#);
    ml2b(&ws, &["stage", "execute"]);
    ml2b(&ws, &["stage", "grade"]);
    let runs = query(&ws, "SELECT model, valid FROM runs");
    assert_eq!(runs, json!([{"model": "fake+react", "valid": true}]));
    let cost = query(&ws, concat!(env!("CARGO_MANIFEST_DIR"), "/queries/cost.sql"));
    assert_eq!(cost[0]["model"], "fake+react", "{cost}");
    assert_eq!(cost[0]["input_tokens"], 700, "every step is paid for");

    // Again: nothing is asked or run. After losing both logs (a crash before the commits),
    // the same events are re-derived from the caches without a call.
    let again = generate(&ws, "fake", &[]);
    assert_eq!(again["summary"]["ran"], 0, "{again}");
    let ids = || query(&ws, "SELECT event_id FROM trajectory ORDER BY step");
    let before = ids();
    for log in ["generate", "trajectory"] {
        std::fs::remove_dir_all(ws.dir.path().join("store/log").join(log)).unwrap();
        let _ = std::fs::remove_dir_all(ws.dir.path().join("store/index").join(log));
    }
    let replayed = generate(&ws, "fake", &[]);
    assert_eq!(replayed["summary"]["ran"], 1);
    assert_eq!(ids(), before, "bit-identical trajectory events");
    assert_eq!(
        seen.lock().unwrap().requests.len(),
        7,
        "answered from the request cache"
    );
}

/// The text-protocol reply of a step.
fn text_reply(tool: &str, arguments: &Value) -> String {
    completion(&format!(
        "Thought: next, {tool}.\nAction: {tool}\nAction Input: {arguments}\n"
    ))
}

#[test]
fn a_model_without_tool_calling_works_through_the_text_protocol() {
    let calls = [
        (
            "write_file",
            json!({"path": "solution.py", "content": TOY_MODULAR}),
        ),
        ("validate", json!({"path": "solution.py"})),
        ("submit", json!({"path": "solution.py"})),
    ];
    let (port, seen) = chat_server(move |_, request| {
        let (tool, args) = &calls[step_of(request).min(2)];
        (200, text_reply(tool, args))
    });
    let text_model = format!(
        "\n[[model]]\nname = \"plain\"\nprovider = \"openai\"\nendpoint = \"http://127.0.0.1:{port}/v1\"\nmodel = \"plain-2025-01-01\"\ntool_protocol = \"text\"\n"
    );
    let ws = workspace(port, &text_model);
    generate(&ws, "plain", &[]);
    let steps = trajectory(&ws);
    let tools: Vec<&str> = steps.iter().map(|s| s["tool"].as_str().unwrap()).collect();
    assert_eq!(tools, ["write_file", "validate", "submit"]);
    assert_eq!(steps[0]["protocol"], "text");
    assert_eq!(steps[1]["validation_score"], 0.5);
    assert_eq!(steps[2]["submitted"], true);
    let s = seen.lock().unwrap();
    let first = &s.requests[0].1;
    assert!(first.get("tools").is_none(), "no tools are sent: {first}");
    let user = first["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("Action Input:") && user.contains("- validate {"),
        "{user}"
    );
    let last = s.requests[2].1["messages"].as_array().unwrap();
    let observation = last.last().unwrap();
    assert_eq!(observation["role"], "user");
    assert_eq!(
        observation["content"].as_str().unwrap(),
        format!(
            "Observation: {}",
            steps[1]["observation"]["shown"].as_str().unwrap()
        )
    );
    let g = query(&ws, "SELECT code_blake3 FROM generate");
    assert_eq!(
        g[0]["code_blake3"],
        blake3::hash(TOY_MODULAR.as_bytes()).to_hex().as_str()
    );
}

#[test]
fn bad_calls_and_paths_outside_the_roots_are_error_observations_and_the_step_budget_ends_the_search() {
    let calls = vec![
        ("rm_rf", json!({"path": "/"})),
        ("read_file", json!({"pathh": "/data/train.csv"})),
        ("read_file", json!({"path": "../private/answers.csv"})),
        ("read_file", json!({"path": "/data/../private/answers.csv"})),
        ("read_file", json!({"path": "/data/answers.csv"})),
        ("list_files", json!({"path": "/etc"})),
        ("write_file", json!({"path": "/data/train.csv", "content": "x"})),
        ("validate", json!({"path": "missing.py"})),
    ];
    let (port, seen) = scripted(calls);
    let ws = workspace(port, "");
    // A link in the public folder to the private answers.
    let public = ws.dir.path().join("data/toy/public");
    std::os::unix::fs::symlink("../private/answers.csv", public.join("answers.csv")).unwrap();
    generate(&ws, "fake", &["--steps", "9"]);
    assert_eq!(
        seen.lock().unwrap().requests.len(),
        9,
        "the budget's steps, no more"
    );
    let steps = trajectory(&ws);
    assert_eq!(steps.len(), 9);
    let errors: Vec<String> = steps
        .iter()
        .map(|s| {
            assert_eq!(s["is_error"], true, "{s}");
            s["observation"]["error"].as_str().unwrap().to_string()
        })
        .collect();
    let expect = [
        "unknown tool `rm_rf`",
        "read_file: unknown field `pathh`",
        "`../private/answers.csv` is refused: `..` is not allowed",
        "`/data/../private/answers.csv` is refused: `..` is not allowed",
        "`/data/answers.csv` is refused: it goes through a symbolic link",
        "`/etc` is refused: only /data",
        "`/data/train.csv` is refused: /data is read-only",
        "`missing.py` is not a file of the workspace",
        "no tool was called",
    ];
    for (got, want) in errors.iter().zip(expect) {
        assert!(got.contains(want), "{got:?} should say {want:?}");
    }
    let answers = std::fs::read_to_string(ws.dir.path().join("data/toy/private/answers.csv")).unwrap();
    let second_row = answers.lines().nth(1).unwrap();
    for s in &steps {
        assert!(
            !s["observation"]["shown"].as_str().unwrap().contains(second_row),
            "{s}"
        );
    }
    assert_eq!(steps[8]["tool"], Value::Null, "the last turn called nothing");
    // Nothing was submitted or validated: the unit's code is empty, an honest failure.
    let g = query(&ws, "SELECT code_bytes, extraction FROM generate");
    assert_eq!(g[0]["code_bytes"], 0);
    assert_eq!(g[0]["extraction"], r#"{"react":"none"}"#);
}

#[test]
fn a_search_that_fails_at_step_3_resumes_at_step_3_and_ends_as_an_uninterrupted_one() {
    let fail = Arc::new(Mutex::new(true));
    let calls = path_calls();
    let failing = fail.clone();
    let (port, seen) = chat_server(move |_, request| {
        let step = step_of(request);
        if step == 3 && *failing.lock().unwrap() {
            return (400, "{\"error\": {\"message\": \"bad request\"}}".into());
        }
        let (tool, args) = &calls[step];
        (200, tool_call(step, tool, args))
    });
    let ws = workspace(port, "");
    let args = [
        &[
            "--json", "stage", "generate", "--langs", "en", "--format", "modular",
        ][..],
        &["--agent", "react", "--model", "fake"],
    ]
    .concat();
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
        query(&ws, "SELECT count(*) AS n FROM trajectory")[0]["n"],
        0,
        "nothing committed"
    );
    let asked = |seen: &Arc<Mutex<Seen>>| -> Vec<usize> {
        seen.lock()
            .unwrap()
            .requests
            .iter()
            .map(|(_, r)| step_of(r))
            .collect()
    };
    assert_eq!(asked(&seen), [0, 1, 2, 3]);

    *fail.lock().unwrap() = false;
    generate(&ws, "fake", &[]);
    assert_eq!(
        asked(&seen),
        [0, 1, 2, 3, 3, 4, 5, 6],
        "steps 0-2 came from the cache"
    );

    // The same search in a fresh store, uninterrupted, makes the same steps.
    let (port2, _) = scripted(path_calls());
    let fresh = workspace(port2, "");
    generate(&fresh, "fake", &[]);
    let path = |ws: &Workspace| {
        trajectory(ws)
            .into_iter()
            .map(|s| {
                (
                    s["tool"].clone(),
                    s["arguments"].clone(),
                    s["observation"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(path(&ws), path(&fresh));
}

#[test]
fn the_time_budget_ends_the_search_after_the_step_that_crosses_it_and_the_last_validated_file_is_the_code() {
    let (port, _) = scripted(path_calls());
    let ws = workspace(port, "");
    generate(&ws, "fake", &["--time-budget", "1"]);
    let rows = query(
        &ws,
        "SELECT step, tool, validation_score, elapsed_seconds FROM trajectory ORDER BY step",
    );
    let rows = rows.as_array().unwrap();
    let elapsed: Vec<f64> = rows
        .iter()
        .map(|r| r["elapsed_seconds"].as_f64().unwrap())
        .collect();
    // Each step starts under the budget; the search ends at the budget or at the submit.
    assert!(
        elapsed[..elapsed.len() - 1].iter().all(|&e| e < 1.0),
        "{elapsed:?}"
    );
    let submitted = rows.len() == 7;
    assert!(submitted || *elapsed.last().unwrap() >= 1.0, "{elapsed:?}");
    assert!(elapsed.windows(2).all(|w| w[0] <= w[1]));
    // Without a submit, the code is the last file whose validation scored, else nothing.
    let validated = rows.iter().any(|r| r["validation_score"].is_f64());
    let how = match (submitted, validated) {
        (true, _) => "submitted",
        (false, true) => "last_validated",
        (false, false) => "none",
    };
    let g = query(&ws, "SELECT code_blake3, extraction FROM generate");
    assert_eq!(g[0]["extraction"], format!(r#"{{"react":"{how}"}}"#), "{rows:?}");
    let code = if how == "none" { "" } else { TOY_MODULAR };
    assert_eq!(
        g[0]["code_blake3"],
        blake3::hash(code.as_bytes()).to_hex().as_str()
    );
}

/// A workspace whose model `plain` speaks the text protocol and writes, validates and
/// submits the toy's solution (the server and what it saw).
fn text_workspace() -> (Workspace, Arc<Mutex<Seen>>) {
    let calls = [
        (
            "write_file",
            json!({"path": "solution.py", "content": TOY_MODULAR}),
        ),
        ("validate", json!({"path": "solution.py"})),
        ("submit", json!({"path": "solution.py"})),
    ];
    let (port, seen) = chat_server(move |_, request| {
        let (tool, args) = &calls[step_of(request).min(2)];
        (200, text_reply(tool, args))
    });
    let text_model = format!(
        "\n[[model]]\nname = \"plain\"\nprovider = \"openai\"\nendpoint = \"http://127.0.0.1:{port}/v1\"\nmodel = \"plain-2025-01-01\"\ntool_protocol = \"text\"\n"
    );
    (workspace(port, &text_model), seen)
}

#[test]
fn the_instructions_are_in_the_pairs_language_and_the_text_protocol_still_parses() {
    let (ws, seen) = text_workspace();
    let args = [
        "--json", "stage", "generate", "--langs", "en,ja", "--format", "modular", "--agent", "react",
        "--model", "plain", "--force",
    ];
    ml2b(&ws, &args);
    let s = seen.lock().unwrap();
    let opening = |language: &str| -> String {
        let (_, r) = s
            .requests
            .iter()
            .find(|(_, r)| {
                step_of(r) == 0
                    && r["messages"][1]["content"]
                        .as_str()
                        .unwrap()
                        .contains(&format!("Toy {language}"))
            })
            .unwrap_or_else(|| panic!("no opening request in {language}"));
        r["messages"][1]["content"].as_str().unwrap().to_string()
    };
    let (en, ja) = (opening("en"), opening("ja"));
    assert!(
        en.contains("# Working as an agent") && en.contains("You have 100 steps"),
        "{en}"
    );
    // The direction is the metric's (AUC: higher), in the language's words.
    assert!(en.contains("(higher is better)"), "{en}");
    assert!(
        ja.contains("# エージェントとして作業する")
            && ja.contains("使えるステップは 100 です")
            && ja.contains("（高いほど良い）"),
        "{ja}"
    );
    assert!(!ja.contains("Working as an agent"), "{ja}");
    for keyword in [
        "Thought:",
        "Action:",
        "Action Input:",
        "Observation: …",
        "- validate {\"path\"}",
    ] {
        assert!(ja.contains(keyword), "{keyword} in {ja}");
    }
    drop(s);
    // Both searches follow the path and submit; they are different units.
    let rows = query(
        &ws,
        "SELECT language, count(*) AS steps, bool_or(submitted) AS submitted, count(DISTINCT search) AS searches FROM trajectory GROUP BY language ORDER BY language",
    );
    assert_eq!(
        rows,
        json!([
            {"language": "en", "steps": 3, "submitted": true, "searches": 1},
            {"language": "ja", "steps": 3, "submitted": true, "searches": 1},
        ])
    );
    let keys = query(&ws, "SELECT count(DISTINCT unit_key) AS n FROM generate");
    assert_eq!(keys[0]["n"], 2);
}

#[test]
fn trajectory_lists_the_react_searches_and_prints_one_as_text_and_json() {
    let (ws, _) = text_workspace();
    generate(&ws, "plain", &[]);
    insta::assert_snapshot!("trajectory_list", ws.run(&["trajectory"]));
    let g = query(&ws, "SELECT unit_key FROM generate");
    let key = g[0]["unit_key"].as_str().unwrap().to_string();
    insta::assert_snapshot!("trajectory_text", ws.run(&["trajectory", &key[..10]]));

    // --json: every step with its message and observation as stored.
    let (listed, _) = ml2b(&ws, &["--json", "trajectory"]);
    assert_eq!(listed[0]["search"], key.as_str());
    assert_eq!(listed[0]["steps"], 3);
    assert_eq!(listed[0]["ended"], "submitted");
    let (search, _) = ml2b(&ws, &["--json", "trajectory", &key]);
    let exported = search["trajectory"].as_array().unwrap();
    let logged = trajectory(&ws);
    assert_eq!(exported.len(), logged.len());
    for (e, l) in exported.iter().zip(&logged) {
        for k in [
            "step",
            "tool",
            "arguments",
            "is_error",
            "validation_score",
            "submitted",
            "observation",
            "message",
        ] {
            assert_eq!(e[k], l[k], "{k}: {e}");
        }
    }
    assert_eq!(exported[1]["observation"]["ok"]["validation_score"], 0.5);
    let thought = exported[0]["thought"].as_str().unwrap();
    assert!(
        thought.starts_with("Thought: next, write_file.\nAction: write_file"),
        "{thought}"
    );

    let unknown = ws.ml2b().args(["trajectory", "00000000"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no search of the trajectory has this key"));
}

/// An Anthropic Messages body whose content is a text block and a `tool_use` block.
fn tool_use(step: usize, tool: &str, arguments: &Value) -> String {
    json!({
        "id": format!("msg_{step}"), "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": format!("Step {step}.")},
            {"type": "tool_use", "id": format!("toolu_{step}"), "name": tool, "input": arguments}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 100, "output_tokens": 20}
    })
    .to_string()
}

#[test]
fn an_anthropic_model_works_through_tool_use_blocks() {
    // The Messages API has no seed: a request's step is the number of turns the model took.
    let calls = path_calls();
    let (port, seen) = chat_server(move |_, request| {
        let messages = request["messages"].as_array().unwrap();
        let step = messages.iter().filter(|m| m["role"] == "assistant").count();
        let (tool, args) = &calls[step];
        (200, tool_use(step, tool, args))
    });
    let model = format!(
        "\n[[model]]\nname = \"claude\"\nprovider = \"anthropic\"\nendpoint = \"http://127.0.0.1:{port}\"\nmodel = \"claude-test\"\napi_key_env = \"ML2B_TEST_KEY\"\n"
    );
    let ws = workspace(port, &model);
    generate(&ws, "claude", &[]);
    let steps = trajectory(&ws);
    let tools: Vec<&str> = steps.iter().map(|s| s["tool"].as_str().unwrap()).collect();
    assert_eq!(
        tools,
        [
            "list_files",
            "read_file",
            "write_file",
            "run_python",
            "write_file",
            "validate",
            "submit"
        ]
    );
    assert!(steps.iter().all(|s| s["protocol"] == "anthropic"));
    assert_eq!(steps[5]["validation_score"], 0.5);
    assert_eq!(steps[6]["submitted"], true);
    assert_eq!(
        steps[0]["arguments"], r#"{"path":"/data"}"#,
        "the input as JSON text"
    );

    let s = seen.lock().unwrap();
    assert_eq!(s.requests.len(), 7);
    let first = &s.requests[0].1;
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert!(t["input_schema"]["properties"].is_object(), "{t}");
            t["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        offered,
        [
            "list_files",
            "read_file",
            "write_file",
            "run_python",
            "validate",
            "submit"
        ]
    );
    assert!(
        first["system"].is_string() && first.get("seed").is_none(),
        "{first}"
    );
    // Each answer goes back as a tool_result block for its tool_use, in the next request.
    for (i, step) in steps.iter().enumerate().take(6) {
        let messages = s.requests[i + 1].1["messages"].as_array().unwrap();
        let call = &messages[messages.len() - 2];
        assert_eq!(call["role"], "assistant");
        assert_eq!(
            call["content"][0],
            json!({"type": "text", "text": format!("Step {i}.")})
        );
        assert_eq!(call["content"][1]["type"], "tool_use");
        assert_eq!(call["content"][1]["id"], format!("toolu_{i}"));
        assert_eq!(call["content"][1]["input"], path_calls()[i].1);
        let answer = &messages[messages.len() - 1];
        assert_eq!(answer["role"], "user");
        assert_eq!(
            answer["content"],
            json!([{"type": "tool_result", "tool_use_id": format!("toolu_{i}"),
                "content": step["observation"]["shown"]}]),
            "step {i}"
        );
    }
    drop(s);
    let g = query(&ws, "SELECT code_blake3, extraction FROM generate");
    assert_eq!(
        g[0]["code_blake3"],
        blake3::hash(TOY_MODULAR.as_bytes()).to_hex().as_str()
    );
    assert_eq!(g[0]["extraction"], r#"{"react":"submitted"}"#);
    ml2b(&ws, &["stage", "execute"]);
    ml2b(&ws, &["stage", "grade"]);
    let runs = query(&ws, "SELECT model, valid FROM runs");
    assert_eq!(runs, json!([{"model": "claude+react", "valid": true}]));
}

/// The demo model embedded in ml2b runs the agent end to end on a bundled competition
/// through the text protocol: every step is its real reply (a model this small seldom
/// names a tool right, and such a turn is an error observation, never a crash), the step
/// budget ends the search, and the unit's generate event is committed; a re-run asks
/// nothing and commits nothing.
#[test]
fn the_embedded_model_runs_the_agent_through_the_text_protocol() {
    let ws = Workspace::new();
    let root = env!("CARGO_MANIFEST_DIR");
    let select = [
        "--root",
        root,
        "--competition",
        "concrete-strength",
        "--language",
        "en",
    ];
    let run = |args: &[&str]| crate::local_model::ml2b_with_models(&ws, args);
    run(&[&["stage", "translate-validate"][..], &select].concat());
    let generate = [
        &[
            "--json",
            "stage",
            "generate",
            "--agent",
            "react",
            "--model",
            "smollm2-135m",
            "--format",
            "modular",
            "--max-tokens",
            "48",
            "--steps",
            "2",
        ][..],
        &select,
    ]
    .concat();
    let first: Value = serde_json::from_str(&run(&generate)).unwrap();
    assert_eq!(first["summary"]["ran"], 1, "{first}");
    let q = |sql: &str| -> Value { serde_json::from_str(&run(&["--json", "query", sql])).unwrap() };
    let steps = q("SELECT step, protocol, output_tokens FROM trajectory ORDER BY step");
    let steps = steps.as_array().unwrap();
    assert_eq!(steps.len(), 2, "the budget's steps: {steps:?}");
    for s in steps {
        assert_eq!(s["protocol"], "text", "{s}");
        assert!(s["output_tokens"].as_u64().unwrap() > 0, "a real reply: {s}");
    }
    let g = q("SELECT provider, model FROM generate");
    assert_eq!(g[0]["provider"], "local", "{g}");
    let again: Value = serde_json::from_str(&run(&generate)).unwrap();
    assert_eq!(again["summary"]["ran"], 0, "{again}");
}

#[test]
fn the_viewer_shows_a_react_search_step_by_step_and_picks_up_the_next_one() {
    let (ws, _) = text_workspace();
    generate(&ws, "plain", &[]);
    let server = crate::viewer::Server::spawn(&ws, &["view", "--port", "0"]);
    let mut browser = crate::cdp::Browser::launch(&ws.dir.path().join("chromium"));
    browser.open(&server.page("/trajectory"));
    let searches = browser.eval("document.querySelectorAll('tr.trajectory').length");
    assert_eq!(searches, 1);
    browser.click("tr.trajectory td.c-search a", true);
    let steps = trajectory(&ws);
    let shown: Vec<Value> = serde_json::from_value(browser.eval(
        "[...document.querySelectorAll('li.step')].map(s => ({step: s.dataset.step, tool: s.querySelector('code.tool')?.innerText, text: s.innerText, class: s.className}))",
    ))
    .unwrap();
    assert_eq!(shown.len(), steps.len());
    for (s, logged) in shown.iter().zip(&steps) {
        assert_eq!(s["step"], logged["step"].to_string());
        assert_eq!(s["tool"], logged["tool"]);
        let observation = logged["observation"]["shown"].as_str().unwrap();
        let first = observation.lines().next().unwrap_or_default();
        assert!(s["text"].as_str().unwrap().contains(first), "{s}: {first}");
    }
    assert!(
        shown[1]["text"].as_str().unwrap().contains("validation 0.5000"),
        "{}",
        shown[1]
    );
    assert_eq!(shown.last().unwrap()["class"], "step submitted");
    assert_eq!(
        browser.eval("document.getElementById('ended').innerText"),
        "submitted"
    );
    let at = browser.eval("location.href").as_str().unwrap().to_string();
    crate::viewer_pages::shoot(&ws, &at, "viewer-trajectory.png");

    // A second search, committed while the viewer runs, is listed on the next load.
    let out = generate(&ws, "plain", &["--langs", "ja", "--force"]);
    let searches = query(&ws, "SELECT count(DISTINCT search) AS n FROM trajectory");
    assert_eq!(searches[0]["n"], 2, "the second search: {out}");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    browser.open(&server.page("/trajectory"));
    let searches = browser.eval("document.querySelectorAll('tr.trajectory').length");
    assert_eq!(searches, 2);
}
