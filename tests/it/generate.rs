//! generate with an HTTP model, against a chat-completions server on 127.0.0.1 that the
//! test runs: prompts in the pair's language, code extracted from the answer and run
//! through execute and grade, the request cache (no call is ever made twice, even after a
//! crash before the commit), a 429 with Retry-After recorded, and the API key nowhere.

use std::sync::{Arc, Mutex};

use crate::common::{KEY, Seen, Workspace, add_model, chat_server, completion, ml2b, query};
use crate::competitions::{TOY_MODULAR, toy};

/// A chat-completions server: answers 429 (Retry-After: 1) to the first request when
/// `throttle_first`, then a fenced solution with usage.
fn server(throttle_first: bool) -> (u16, Arc<Mutex<Seen>>) {
    chat_server(move |n, _| {
        if throttle_first && n == 1 {
            (429, "{\"error\": {\"message\": \"slow down\"}}".into())
        } else {
            let content =
                format!("Here is a solution.\n\n```python\n{TOY_MODULAR}```\n\nIt predicts the base rate.");
            (200, completion(&content))
        }
    })
}

#[test]
fn an_http_model_generates_code_that_executes_and_grades_and_nothing_is_asked_twice() {
    let ws = toy();
    let (port, seen) = server(true);
    add_model(&ws, port);
    ml2b(&ws, &["stage", "translate-validate"]);
    let (first, _) = ml2b(&ws, &["--json", "stage", "generate", "--model", "fake"]);
    assert_eq!(first["summary"]["ran"], 2, "English passed, two formats: {first}");
    {
        let s = seen.lock().unwrap();
        assert_eq!(s.requests.len(), 3, "the 429 and two answers");
        for (auth, req) in &s.requests {
            assert_eq!(auth, &format!("Bearer {KEY}"));
            assert_eq!(req["model"], "fake-coder-2025-01-01");
            let user = req["messages"][1]["content"].as_str().unwrap();
            assert!(user.contains("Toy en"), "the task text is in the prompt");
        }
    }
    let rows = query(
        &ws,
        "SELECT format, attempts, input_tokens, output_tokens, cost_usd, extraction, floating_alias FROM generate ORDER BY format",
    );
    let attempts: u64 = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["attempts"].as_u64().unwrap())
        .sum();
    assert_eq!(
        attempts, 3,
        "the 429 is recorded with the unit it delayed: {rows}"
    );
    assert_eq!(rows[0]["input_tokens"], 1200);
    assert!((rows[0]["cost_usd"].as_f64().unwrap() - (1200.0 + 600.0) / 1e6).abs() < 1e-15);
    assert_eq!(rows[0]["floating_alias"], false);
    assert!(
        rows[0]["extraction"].as_str().unwrap().contains("fenced"),
        "{rows}"
    );

    // The modular answer is a working solution: it executes and grades.
    ml2b(&ws, &["stage", "execute"]);
    ml2b(&ws, &["stage", "grade"]);
    let graded = query(&ws, "SELECT format, valid FROM grade ORDER BY format");
    assert_eq!(graded[0]["format"], "modular");
    assert_eq!(graded[0]["valid"], true, "{graded}");
    assert_eq!(
        graded[1]["valid"], false,
        "the mono prompt got modular code: {graded}"
    );

    // A re-run asks nothing; nor does one after losing the log (a crash before the commit).
    ml2b(&ws, &["stage", "generate", "--model", "fake"]);
    std::fs::remove_dir_all(ws.dir.path().join("store/log/generate")).unwrap();
    let _ = std::fs::remove_dir_all(ws.dir.path().join("store/index/generate"));
    let (again, _) = ml2b(&ws, &["--json", "stage", "generate", "--model", "fake"]);
    assert_eq!(again["summary"]["ran"], 2);
    assert_eq!(
        seen.lock().unwrap().requests.len(),
        3,
        "answered from the request cache"
    );

    // The key is in no file of the store.
    for entry in walkdir::WalkDir::new(ws.dir.path().join("store")) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            let hit = bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes());
            assert!(!hit, "the key is in {}", entry.path().display());
        }
    }
}

/// Grade ids with the execution each grades, in the latest grade per execution.
fn latest_grades(ws: &Workspace) -> serde_json::Value {
    query(
        ws,
        "SELECT array_element(upstream, 1) AS execution, \
         last_value(event_id ORDER BY created_at, event_id) AS grade \
         FROM grade GROUP BY 1 ORDER BY 1",
    )
}

#[test]
fn a_baseline_run_that_arrives_late_regrades_earlier_runs_and_since_steps_equal_once() {
    // The fake model's run is graded first, with no baseline anywhere (the toy manifest
    // records none); then the reference solution runs. `grade --since` the first execute
    // segment regrades the fake run against it, as grading everything once does.
    let ws = toy();
    let (port, _) = server(false);
    add_model(&ws, port);
    // The reference solution: the fake model's code plus a comment (other bytes, the same
    // predictions), so the two are two runs.
    let solution = ws.dir.path().join("data/toy/solution/modular.py");
    std::fs::write(&solution, format!("{TOY_MODULAR}# the reference\n")).unwrap();
    ml2b(&ws, &["stage", "translate-validate"]);
    ml2b(
        &ws,
        &["stage", "generate", "--model", "fake", "--format", "modular"],
    );
    ml2b(&ws, &["stage", "execute"]);
    let first = ml2b(&ws, &["--json", "log", "--stage", "execute"]).0["stages"][0]["segments"][0]["hash"]
        .as_str()
        .unwrap()
        .to_string();
    ml2b(&ws, &["stage", "grade"]);
    let before = query(&ws, "SELECT r_p, baseline_run FROM grade");
    assert_eq!(
        before,
        serde_json::json!([{}]),
        "no baseline yet: r_p and the run are null"
    );

    ml2b(
        &ws,
        &["stage", "generate", "--model", "reference", "--format", "modular"],
    );
    ml2b(&ws, &["stage", "execute"]);
    let (step, _) = ml2b(&ws, &["--json", "stage", "grade", "--since", &first]);
    assert_eq!(
        step["summary"]["planned"], 2,
        "the new run and the run its baseline regrades"
    );
    let after = query(
        &ws,
        "SELECT role, r_p, baseline_run = array_element(upstream, 1) AS own FROM grade \
         WHERE r_p IS NOT NULL ORDER BY role NULLS FIRST",
    );
    assert_eq!(
        after,
        serde_json::json!([{"r_p": 1.0, "own": false}, {"role": "reference", "r_p": 1.0, "own": true}])
    );

    let once = Workspace::new();
    crate::stages::copy_dir(&ws.dir.path().join("store"), &once.dir.path().join("store"));
    for entry in ["manifests", "data"] {
        crate::stages::copy_dir(&ws.dir.path().join(entry), &once.dir.path().join(entry));
    }
    for dir in ["store/log/grade", "store/index/grade"] {
        let _ = std::fs::remove_dir_all(once.dir.path().join(dir));
    }
    ml2b(&once, &["stage", "grade"]);
    assert_eq!(
        latest_grades(&ws),
        latest_grades(&once),
        "steps and once end on the same grades"
    );
    let (verified, _) = ml2b(&ws, &["--json", "verify", "--rerun"]);
    assert_eq!(
        verified["rerun"]["grade"]["events"], 3,
        "the superseded grade re-derives too"
    );
    assert_eq!(verified["rerun"]["grade"]["differ"].as_array().unwrap().len(), 0);
}

#[test]
fn a_missing_key_fails_the_units_and_commits_nothing() {
    let ws = toy();
    let (port, seen) = server(false);
    add_model(&ws, port);
    ml2b(&ws, &["stage", "translate-validate"]);
    let out = ws
        .ml2b()
        .env_remove("ML2B_TEST_KEY")
        .args(["--json", "stage", "generate", "--model", "fake"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["failed"].as_array().unwrap().len(), 2, "{v}");
    assert!(
        v["summary"]["failed"].to_string().contains("ML2B_TEST_KEY"),
        "{v}"
    );
    assert_eq!(seen.lock().unwrap().requests.len(), 0);
}

#[test]
fn the_embedded_model_writes_code_that_flows_through_execute_and_grade() {
    // Real prompts for two bundled competitions in two languages, answered by the demo
    // model inside ml2b (48 tokens: this is about the flow, and the model is slow on two
    // cores); the code will most likely fail, but it must be executed and graded. That the
    // same request gives the same text is `local_model::generate`'s test.
    let ws = Workspace::new();
    let root = env!("CARGO_MANIFEST_DIR");
    let select = [
        "--root",
        root,
        "--competition",
        "concrete-strength",
        "--competition",
        "credit-risk",
        "--language",
        "en",
        "--language",
        "kk",
    ];
    let run = |args: &[&str]| crate::local_model::ml2b_with_models(&ws, args);
    run(&[&["stage", "translate-validate"][..], &select].concat());
    let generate = [
        &[
            "--json",
            "stage",
            "generate",
            "--model",
            "smollm2-135m",
            "--format",
            "modular",
            "--max-tokens",
            "48",
        ][..],
        &select,
    ]
    .concat();
    let first: serde_json::Value = serde_json::from_str(&run(&generate)).unwrap();
    assert_eq!(first["summary"]["ran"], 4, "{first}");
    run(&["stage", "execute", "--root", root]);
    run(&["stage", "grade", "--root", root]);
    let q =
        |sql: &str| -> serde_json::Value { serde_json::from_str(&run(&["--json", "query", sql])).unwrap() };
    let rows = q(
        "SELECT g.language, g.output_tokens, g.provider, x.outcome, r.valid \
                  FROM generate g JOIN execute x ON x.code_blake3 = g.code_blake3 \
                  JOIN grade r ON r.code_blake3 = g.code_blake3 ORDER BY 1",
    );
    assert_eq!(
        rows.as_array().unwrap().len(),
        4,
        "every sample executed and graded: {rows}"
    );
    for r in rows.as_array().unwrap() {
        assert_eq!(r["provider"], "local");
        assert!(r["output_tokens"].as_u64().unwrap() > 0, "{r}");
    }
}

/// A chat-completions server on 127.0.0.1 whose every answer is a completion of `mib` MiB
/// of code, streamed in chunks with no `Content-Length`; returns its port and the number of
/// requests it answered.
fn streaming_server(mib: usize) -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = answered.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            reader.read_exact(&mut vec![0; length]).unwrap();
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let chunk = |s: &str| format!("{:x}\r\n{s}\r\n", s.len());
            let line = format!("x = 1  # {}\\n", "y".repeat(1000));
            let block = line.repeat((1 << 20) / line.len());
            let mut parts = vec![
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_string(),
                chunk(r#"{"choices":[{"message":{"role":"assistant","content":"```python\n"#),
            ];
            parts.extend(std::iter::repeat_n(chunk(&block), mib));
            parts.push(chunk(
                r#"```"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":10}}"#,
            ));
            parts.push("0\r\n\r\n".into());
            for part in parts {
                if stream.write_all(part.as_bytes()).is_err() {
                    break;
                }
            }
        }
    });
    (port, answered)
}

/// Runs `cmd` to its end; returns its output and its peak resident memory in bytes: the
/// largest `VmHWM` its `/proc/<pid>/status` showed while it ran (polled every 5 ms; the
/// high-water mark of its own memory, unlike `ru_maxrss`, which also counts the memory of
/// the process that spawned it, at the moment it did).
fn run_measured(mut cmd: std::process::Command) -> (std::process::Output, u64) {
    use std::io::Read;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            pipe.read_to_end(&mut text).unwrap();
            text
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    let status = loop {
        let kib = std::fs::read_to_string(&status_file)
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        peak = peak.max(kib.unwrap_or(0) * 1024);
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let output = std::process::Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    (output, peak)
}

#[test]
fn an_answer_over_the_size_cap_is_the_models_failure_read_no_further() {
    // 256 MiB of code per answer, far past the 8 MiB default cap.
    let ws = toy();
    let (port, answered) = streaming_server(256);
    add_model(&ws, port);
    ml2b(&ws, &["stage", "translate-validate"]);
    let mut cmd = ws.ml2b();
    cmd.env("ML2B_TEST_KEY", KEY)
        .args(["--json", "stage", "generate", "--model", "fake"]);
    let (out, peak) = run_measured(cmd);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["summary"]["ran"], 2, "{summary}");
    assert_eq!(answered.load(std::sync::atomic::Ordering::SeqCst), 2, "no retry");
    eprintln!("ml2b held at most {} MiB", peak >> 20);
    assert!(peak < 256 << 20, "ml2b held {} MiB", peak >> 20);
    // Recorded as a response without code, saying why.
    let rows = query(
        &ws,
        "SELECT format, code_bytes, extraction, finish_reason, attempts FROM generate ORDER BY format",
    );
    for row in rows.as_array().unwrap() {
        assert_eq!(row["code_bytes"], 1, "{rows}");
        assert_eq!(
            row["extraction"], r#"{"how":"too_large","limit_bytes":8388608}"#,
            "{rows}"
        );
        assert_eq!(row["attempts"], 1, "{rows}");
    }
    // The store holds no part of the answer.
    let size: u64 = walkdir::WalkDir::new(ws.dir.path().join("store"))
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len())
        .sum();
    assert!(size < 8 << 20, "the store holds {size} bytes");
}
