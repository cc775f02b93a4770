//! External agents (`--agent external:NAME`) against scripted chat servers on 127.0.0.1,
//! every request through ml2b's recording gateway: a minimal agent (an MLE-bench-style
//! script, standard library only) whose submission executes and grades; its budget
//! stopping it; a killed run resuming without paying twice; a replay of the recorded run
//! asking no model; the hostile suite run as an agent; and WecoAI's AIDE exactly as
//! published on PyPI (`aideml`), end to end.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::common::{KEY, Workspace, add_model, chat_server, completion, ml2b, query};
use crate::competitions::{TOY_MODULAR, toy};

/// A minimal agent: asks the gateway `ASKS` times (default 1) for the task, then writes the
/// answer's code block as its submission and its exchanges as a journal. An error answer is
/// printed to stderr and ends it with exit 3.
const MINIMAL: &str = r#"
import json, os, re, sys, time, urllib.request, urllib.error
instructions = open('/home/instructions.txt').read()
asks = int(os.environ.get('ASKS', '1'))
journal, text = [], ''
for i in range(asks):
    body = {"model": os.environ["ML2B_MODEL"], "temperature": 0,
            "messages": [{"role": "user", "content": instructions + "\n(ask %d)" % i}]}
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "Content-Type": "application/json"})
    try:
        answer = json.load(urllib.request.urlopen(req, timeout=120))
    except urllib.error.HTTPError as e:
        print("gateway said", e.code, e.read().decode(), file=sys.stderr)
        sys.exit(3)
    text = answer["choices"][0]["message"]["content"]
    journal.append({"ask": i, "answer": text})
    if os.environ.get("SLEEP_AFTER") == str(i):
        time.sleep(600)
os.makedirs('/home/logs/run', exist_ok=True)
json.dump(journal, open('/home/logs/run/journal.json', 'w'))
open('/home/submission/submission.py', 'w').write(re.search(r"```python\n(.*?)```", text, re.S).group(1))
print("submitted")
"#;

/// The answer of the scripted model: the toy's solution in a code block.
fn solution_answer() -> String {
    completion(&format!("Here is my solution.\n```python\n{TOY_MODULAR}```\n"))
}

/// The toy workspace with model `fake` on `port` and the agents of `agents_toml`; the
/// minimal agent's folder is `agents/minimal`.
fn workspace(port: u16, agents_toml: &str) -> Workspace {
    let ws = toy();
    add_model(&ws, port);
    let dir = ws.dir.path().join("agents/minimal");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("agent.py"), MINIMAL).unwrap();
    std::fs::write(ws.dir.path().join("manifests/agents.toml"), agents_toml).unwrap();
    ml2b(&ws, &["stage", "translate-validate"]);
    ws
}

fn minimal_agent(extra: &str) -> String {
    format!(
        "[agents.minimal]\ndir = \"agents/minimal\"\ncommand = [\"python\", \"/home/agent/agent.py\"]\nsubmission = \"python\"\ntime_limit_s = 300\n{extra}"
    )
}

fn generate(ws: &Workspace, model: &str, agent: &str) -> (Value, String) {
    let agent = format!("external:{agent}");
    ml2b(
        ws,
        &[
            "--json", "stage", "generate", "--langs", "en", "--format", "modular", "--agent", &agent,
            "--model", model,
        ],
    )
}

/// The repository's cost table.
fn cost_sql() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("queries/cost.sql")
        .display()
        .to_string()
}

fn object(ws: &Workspace, hex: &str) -> Vec<u8> {
    let hash: ml2b::store::Hash = hex.parse().unwrap();
    ws.store().objects().get(&hash).unwrap()
}

fn calls(ws: &Workspace) -> Vec<Value> {
    query(
        ws,
        "SELECT call, protocol, status, refused, cached, http_attempts, input_tokens, output_tokens, cost_usd, request_blake3, response_blake3, agent, search FROM gateway ORDER BY call",
    )
    .as_array()
    .unwrap()
    .clone()
}

fn external_run(ws: &Workspace) -> Value {
    let rows = query(ws, "SELECT * FROM external");
    assert_eq!(rows.as_array().unwrap().len(), 1, "{rows}");
    rows[0].clone()
}

#[test]
fn a_minimal_agent_asks_through_the_gateway_and_its_submission_is_graded() {
    let (port, seen) = chat_server(|_, _| (200, solution_answer()));
    let ws = workspace(port, &minimal_agent(""));
    let (first, _) = generate(&ws, "fake", "minimal");
    assert_eq!(first["summary"]["ran"], 1, "{first}");

    // The model saw the agent's request as it wrote it, with ml2b's key and the model id.
    {
        let s = seen.lock().unwrap();
        assert_eq!(s.requests.len(), 1);
        let (auth, request) = &s.requests[0];
        assert_eq!(
            auth,
            &format!("Bearer {KEY}"),
            "the model gets ml2b's key, not the agent's"
        );
        assert_eq!(request["model"], "fake-coder-2025-01-01");
        assert_eq!(request["temperature"], 0);
        assert!(
            request["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains("(ask 0)")
        );
    }

    // One recorded call: the agent's body and the response are objects.
    let calls = calls(&ws);
    assert_eq!(calls.len(), 1);
    let c = &calls[0];
    assert_eq!(
        (
            c["status"].as_u64(),
            c["cached"].as_bool(),
            c["refused"].is_null()
        ),
        (Some(200), Some(false), true)
    );
    assert_eq!(
        (c["input_tokens"].as_u64(), c["output_tokens"].as_u64()),
        (Some(1200), Some(300))
    );
    assert!((c["cost_usd"].as_f64().unwrap() - 0.0018).abs() < 1e-12);
    let body: Value = serde_json::from_slice(&object(&ws, c["request_blake3"].as_str().unwrap())).unwrap();
    assert_eq!(
        body["model"], "fake",
        "the agent's own body, as it sent it (ML2B_MODEL)"
    );

    // The run, its logs and its submission.
    let run = external_run(&ws);
    assert_eq!(run["ended"], "submitted", "{run}");
    assert_eq!(run["exit_code"], 0);
    assert_eq!(
        (run["calls"].as_u64(), run["refused_calls"].as_u64()),
        (Some(1), Some(0))
    );
    let listing: Value = serde_json::from_slice(&object(&ws, run["logs_blake3"].as_str().unwrap())).unwrap();
    assert!(listing["run/journal.json"]["blake3"].is_string(), "{listing}");
    assert_eq!(
        String::from_utf8(object(&ws, run["stdout_blake3"].as_str().unwrap())).unwrap(),
        "submitted\n"
    );

    // The generate event: the submission is the code, the agent is named, tokens summed.
    let g = query(
        &ws,
        "SELECT agent, agent_name, code_blake3, finish_reason, input_tokens, output_tokens, unit_key FROM generate",
    );
    assert_eq!(g[0]["agent"], "external");
    assert_eq!(g[0]["agent_name"], "minimal");
    assert_eq!(g[0]["finish_reason"], "submitted");
    assert_eq!(g[0]["unit_key"], run["search"]);
    assert_eq!(
        String::from_utf8(object(&ws, g[0]["code_blake3"].as_str().unwrap())).unwrap(),
        TOY_MODULAR
    );

    // The submission executes and grades like generated code; cost.sql names the entrant.
    ml2b(&ws, &["stage", "execute"]);
    ml2b(&ws, &["stage", "grade"]);
    let runs = query(&ws, "SELECT model, outcome, valid FROM runs");
    assert_eq!(runs[0]["model"], "fake+minimal");
    assert_eq!(runs[0]["outcome"], "ok", "{runs}");
    let cost = ml2b(&ws, &["--json", "query", &cost_sql()]).0;
    assert_eq!(cost[0]["model"], "fake+minimal", "{cost}");
    assert_eq!(cost[0]["input_tokens"], 1200);

    // A second run plans the same unit and asks nothing.
    let (again, _) = generate(&ws, "fake", "minimal");
    assert_eq!(again["summary"]["ran"], 0, "{again}");
    assert_eq!(seen.lock().unwrap().requests.len(), 1);
}

#[test]
fn the_budget_stops_an_agent_and_the_unit_says_so() {
    let (port, seen) = chat_server(|_, _| (200, solution_answer()));
    let ws = workspace(
        port,
        &minimal_agent("[agents.minimal.env]\nASKS = \"5\"\n[agents.minimal.budget]\nrequests = 2\n"),
    );
    let (out, _) = generate(&ws, "fake", "minimal");
    assert_eq!(out["summary"]["ran"], 1, "{out}");
    assert_eq!(
        seen.lock().unwrap().requests.len(),
        2,
        "the third request never reached the model"
    );
    let calls = calls(&ws);
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[2]["status"], 402);
    let refused = calls[2]["refused"].as_str().unwrap();
    assert!(
        refused.starts_with("budget_exceeded: this run's budget of 2 requests is spent"),
        "{refused}"
    );
    let run = external_run(&ws);
    assert_eq!(run["ended"], "budget_exceeded", "{run}");
    assert_eq!(
        (run["exit_code"].as_i64(), run["refused_calls"].as_u64()),
        (Some(3), Some(1))
    );
    let stderr = String::from_utf8(object(&ws, run["stderr_blake3"].as_str().unwrap())).unwrap();
    assert!(
        stderr.contains("gateway said 402") && stderr.contains("budget of 2 requests"),
        "{stderr}"
    );
    let g = query(&ws, "SELECT finish_reason, code_bytes FROM generate");
    assert_eq!(
        (g[0]["finish_reason"].as_str(), g[0]["code_bytes"].as_u64()),
        (Some("budget_exceeded"), Some(0))
    );
}

#[test]
fn a_killed_run_resumes_without_asking_again_and_a_replay_asks_no_model() {
    // The second request is answered only once the test killed ml2b (too late for it).
    let killed = Arc::new(Mutex::new(false));
    let k = killed.clone();
    let (port, seen) = chat_server(move |n, _| {
        if n == 2 {
            wait_for(|| *k.lock().unwrap());
        }
        (200, solution_answer())
    });
    let ws = workspace(port, &minimal_agent("[agents.minimal.env]\nASKS = \"2\"\n"));
    let mut child = ws
        .ml2b()
        .env("ML2B_TEST_KEY", KEY)
        .args([
            "stage",
            "generate",
            "--langs",
            "en",
            "--format",
            "modular",
            "--agent",
            "external:minimal",
            "--model",
            "fake",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for(|| seen.lock().unwrap().requests.len() == 2);
    child.kill().unwrap();
    child.wait().unwrap();
    *killed.lock().unwrap() = true;
    assert_eq!(
        query(&ws, "SELECT count(*) AS n FROM gateway")[0]["n"],
        0,
        "nothing committed yet"
    );

    let (again, _) = generate(&ws, "fake", "minimal");
    assert_eq!(again["summary"]["ran"], 1, "{again}");
    // The first request was answered from the store; only the unanswered one was asked again.
    assert_eq!(seen.lock().unwrap().requests.len(), 3);
    let recorded = calls(&ws);
    assert_eq!(
        recorded
            .iter()
            .map(|c| c["cached"].as_bool().unwrap())
            .collect::<Vec<_>>(),
        [true, false]
    );
    assert_eq!(external_run(&ws)["ended"], "submitted");

    // A replay of this store, in another: the same run, and no model asked.
    let (dead_port, dead) = chat_server(|_, _| (500, "{}".into()));
    let replay = workspace(dead_port, &minimal_agent("[agents.minimal.env]\nASKS = \"2\"\n"));
    let models = replay.dir.path().join("manifests/models.toml");
    let mut text = std::fs::read_to_string(&models).unwrap();
    text.push_str(&format!(
        "\n[[model]]\nname = \"again\"\nprovider = \"replay\"\nstore = \"{}\"\nmodel = \"fake\"\n",
        ws.store_path().display()
    ));
    std::fs::write(models, text).unwrap();
    let (replayed, _) = generate(&replay, "again", "minimal");
    assert_eq!(replayed["summary"]["ran"], 1, "{replayed}");
    assert_eq!(dead.lock().unwrap().requests.len(), 0);
    assert_eq!(seen.lock().unwrap().requests.len(), 3);
    let code = |w: &Workspace| query(w, "SELECT code_blake3 FROM generate")[0]["code_blake3"].clone();
    assert_eq!(code(&replay), code(&ws), "{:?}\n{:?}", calls(&replay), calls(&ws));
    let replayed_calls = calls(&replay);
    assert_eq!(replayed_calls.len(), 2);
    assert!(
        replayed_calls
            .iter()
            .all(|c| c["cached"] == true && c["status"] == 200)
    );
}

fn wait_for(done: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed().as_secs() < 120, "timed out waiting");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// What a hostile agent tries; it writes what happened to /home/logs/hostile.json and
/// submits nothing.
const HOSTILE: &str = r#"
import json, os, socket, sys
found = {}
def attempt(name, f):
    try:
        found[name] = "succeeded: " + repr(f())[:200]
    except BaseException as e:
        found[name] = "failed: " + type(e).__name__
host_port = int(os.environ["HOST_PORT"])
def tcp(host, port):
    s = socket.create_connection((host, port), timeout=3)
    s.close()
    return "connected"
attempt("host_tcp", lambda: tcp("127.0.0.1", host_port))
attempt("dns", lambda: socket.getaddrinfo("pypi.org", 443))
attempt("private_answers", lambda: os.listdir(os.environ["PRIVATE_DIR"]))
attempt("store", lambda: os.listdir(os.environ["STORE_DIR"]))
attempt("write_data", lambda: open("/home/data/x", "w"))
attempt("write_agent", lambda: open("/home/agent/x", "w"))
attempt("write_root", lambda: open("/x", "w"))
found["caller_key"] = "ML2B_TEST_KEY" in os.environ
found["env"] = sorted(os.environ)
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("10.0.0.1", 53))
attempt("udp", udp)
attempt("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
attempt("gateway", lambda: tcp("127.0.0.1", 3128))
os.makedirs("/home/logs", exist_ok=True)
json.dump(found, open("/home/logs/hostile.json", "w"))
"#;

#[test]
fn a_hostile_agent_reaches_nothing_but_the_gateway() {
    let host = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let host_port = host.local_addr().unwrap().port();
    let (port, _) = chat_server(|_, _| (200, solution_answer()));
    let ws = toy();
    let dir = ws.dir.path().join("agents/hostile");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("agent.py"), HOSTILE).unwrap();
    add_model(&ws, port);
    let private = ws.dir.path().join("data/toy/private");
    assert!(private.is_dir());
    let agents = format!(
        "[agents.hostile]\ndir = \"agents/hostile\"\ncommand = [\"python\", \"/home/agent/agent.py\"]\nsubmission = \"python\"\ntime_limit_s = 120\n[agents.hostile.env]\nHOST_PORT = \"{host_port}\"\nPRIVATE_DIR = \"{}\"\nSTORE_DIR = \"{}\"\n",
        private.display(),
        ws.store_path().display()
    );
    std::fs::write(ws.dir.path().join("manifests/agents.toml"), agents).unwrap();
    ml2b(&ws, &["stage", "translate-validate"]);
    let (out, _) = generate(&ws, "fake", "hostile");
    assert_eq!(out["summary"]["ran"], 1, "{out}");
    let run = external_run(&ws);
    assert_eq!(run["ended"], "no_submission", "{run}");
    let listing: Value = serde_json::from_slice(&object(&ws, run["logs_blake3"].as_str().unwrap())).unwrap();
    let found: Value =
        serde_json::from_slice(&object(&ws, listing["hostile.json"]["blake3"].as_str().unwrap())).unwrap();
    for attempt in [
        "host_tcp",
        "dns",
        "private_answers",
        "store",
        "write_data",
        "write_agent",
        "write_root",
        "udp",
        "netlink",
    ] {
        let what = found[attempt].as_str().unwrap();
        assert!(what.starts_with("failed"), "{attempt}: {what}");
    }
    assert_eq!(
        found["gateway"], "succeeded: 'connected'",
        "the gateway is the one way out"
    );
    assert_eq!(found["caller_key"], false);
    let env: Vec<&str> = found["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        !env.iter()
            .any(|k| k.starts_with("ML2B_STORE") || k.starts_with("CARGO")),
        "{env:?}"
    );
    drop(host);
}

/// The scripted model of AIDE's search: a review (a `submit_review` tool call) when the
/// request offers tools, else a plan and the toy's solution, which also prints a metric.
fn aide_answer(request: &Value) -> String {
    if request.get("tools").is_some() {
        let review = serde_json::json!({"is_bug": false, "summary": "It ran; the metric is printed.", "metric": 0.75, "lower_is_better": false});
        return serde_json::json!({
            "id": "cmpl-r", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_r", "type": "function",
                    "function": {"name": "submit_review", "arguments": review.to_string()}}]},
                "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 800, "completion_tokens": 40}
        })
        .to_string();
    }
    let code = format!("{TOY_MODULAR}\nprint('Validation metric: 0.75')\n");
    completion(&format!(
        "Predict the training share of `yes`.\n\n```python\n{code}```\n"
    ))
}

#[test]
fn wecoais_aide_from_pypi_runs_as_an_external_agent_through_the_gateway() {
    let (port, seen) = chat_server(|_, request| (200, aide_answer(request)));
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/agents/aideml");
    let agents = format!(
        "[agents.aideml]\ndir = \"{0}\"\ncommand = [\"bash\", \"/home/agent/start.sh\"]\nrequirements = \"{0}/requirements.txt\"\nsubmission = \"python\"\ntime_limit_s = 900\n[agents.aideml.env]\nAIDE_STEPS = \"2\"\nAIDE_DRAFTS = \"2\"\n",
        repo.display()
    );
    let ws = workspace(port, &agents);
    let (out, stderr) = generate(&ws, "fake", "aideml");
    assert_eq!(out["summary"]["ran"], 1, "{out}\n{stderr}");
    let run = external_run(&ws);
    let stderr_of =
        String::from_utf8_lossy(&object(&ws, run["stderr_blake3"].as_str().unwrap())).into_owned();
    assert_eq!(run["ended"], "submitted", "{run}\n{stderr_of}");
    // Two drafts, each a code request and a review: every one recorded, none refused.
    let s = seen.lock().unwrap();
    let calls = calls(&ws);
    assert_eq!(calls.len(), s.requests.len());
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert!(calls.iter().all(|c| c["status"] == 200 && c["refused"].is_null()));
    assert_eq!(
        s.requests
            .iter()
            .filter(|(_, r)| r.get("tools").is_some())
            .count(),
        2
    );
    assert!(
        s.requests
            .iter()
            .all(|(_, r)| r["model"] == "fake-coder-2025-01-01")
    );
    // The task text reached AIDE: the first request carries the instructions.
    let first = s.requests[0].1["messages"].to_string();
    assert!(first.contains("train"), "{first}");
    drop(s);
    // AIDE's journal is kept; its best solution is the unit's code, executed and graded.
    let listing: Value = serde_json::from_slice(&object(&ws, run["logs_blake3"].as_str().unwrap())).unwrap();
    assert!(listing["0-run/journal.json"]["blake3"].is_string(), "{listing}");
    let tokens = query(&ws, "SELECT input_tokens, output_tokens FROM generate");
    assert_eq!(
        (
            tokens[0]["input_tokens"].as_u64(),
            tokens[0]["output_tokens"].as_u64()
        ),
        (Some(2 * 1200 + 2 * 800), Some(2 * 300 + 2 * 40))
    );
    ml2b(&ws, &["stage", "execute"]);
    ml2b(&ws, &["stage", "grade"]);
    let runs = query(&ws, "SELECT model, outcome FROM runs");
    assert_eq!(
        (runs[0]["model"].as_str(), runs[0]["outcome"].as_str()),
        (Some("fake+aideml"), Some("ok")),
        "{runs}"
    );
    let cost = ml2b(&ws, &["--json", "query", &cost_sql()]).0;
    assert_eq!(cost[0]["input_tokens"], 4000, "{cost}");
}

/// An agent speaking Anthropic's Messages API (and, wrongly, OpenAI's too).
const ANTHROPIC_AGENT: &str = r#"
import json, os, re, sys, urllib.request, urllib.error
def post(url, body, headers):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=dict(headers, **{"Content-Type": "application/json"}))
    try:
        return 200, json.load(urllib.request.urlopen(req, timeout=120))
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
key = os.environ["ANTHROPIC_API_KEY"]
status, answer = post(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
    {"model": os.environ["ML2B_MODEL"], "max_tokens": 1000, "system": "You write code.",
     "messages": [{"role": "user", "content": open("/home/instructions.txt").read()}]},
    {"x-api-key": key, "anthropic-version": "2023-06-01"})
wrong, refusal = post(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
    {"model": "x", "messages": [{"role": "user", "content": "hi"}]}, {"Authorization": "Bearer " + key})
streamed, _ = post(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
    {"model": "x", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": "hi"}]}, {"x-api-key": key})
stranger, _ = post(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
    {"model": "x", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}, {"x-api-key": "sk-guess"})
print(status, wrong, refusal["error"]["message"], streamed, stranger)
text = answer["content"][0]["text"]
open("/home/submission/submission.py", "w").write(re.search(r"```python\n(.*?)```", text, re.S).group(1))
"#;

#[test]
fn an_anthropic_agent_is_forwarded_as_written_and_refusals_are_recorded() {
    let (port, seen) = chat_server(|_, _| {
        let text = format!("```python\n{TOY_MODULAR}```\n");
        let body = serde_json::json!({"id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 500, "output_tokens": 100}});
        (200, body.to_string())
    });
    let ws = toy();
    let models = ws.dir.path().join("manifests/models.toml");
    let mut text = std::fs::read_to_string(&models).unwrap();
    text.push_str(&format!(
        "\n[[model]]\nname = \"claude-fake\"\nprovider = \"anthropic\"\nendpoint = \"http://127.0.0.1:{port}\"\nmodel = \"claude-fake-20250101\"\napi_key_env = \"ML2B_TEST_KEY\"\nusd_per_mtok_input = 3.0\nusd_per_mtok_output = 15.0\n"
    ));
    std::fs::write(models, text).unwrap();
    let dir = ws.dir.path().join("agents/anthropic");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("agent.py"), ANTHROPIC_AGENT).unwrap();
    std::fs::write(
        ws.dir.path().join("manifests/agents.toml"),
        "[agents.anthropic]\ndir = \"agents/anthropic\"\ncommand = [\"python\", \"/home/agent/agent.py\"]\nsubmission = \"python\"\ntime_limit_s = 120\n",
    )
    .unwrap();
    ml2b(&ws, &["stage", "translate-validate"]);
    let (out, _) = generate(&ws, "claude-fake", "anthropic");
    assert_eq!(out["summary"]["ran"], 1, "{out}");
    {
        let s = seen.lock().unwrap();
        assert_eq!(
            s.requests.len(),
            1,
            "only the well-formed request reached the model"
        );
        let request = &s.requests[0].1;
        assert_eq!(request["model"], "claude-fake-20250101");
        assert_eq!(request["system"], "You write code.");
        assert_eq!(request["max_tokens"], 1000);
    }
    let recorded = calls(&ws);
    let statuses: Vec<u64> = recorded.iter().map(|c| c["status"].as_u64().unwrap()).collect();
    assert_eq!(statuses, [200, 400, 400, 401]);
    assert_eq!(recorded[0]["protocol"], "anthropic");
    assert!((recorded[0]["cost_usd"].as_f64().unwrap() - (500.0 * 3.0 + 100.0 * 15.0) / 1e6).abs() < 1e-12);
    assert!(
        recorded[1]["refused"]
            .as_str()
            .unwrap()
            .contains("speaks the anthropic protocol")
    );
    assert!(recorded[2]["refused"].as_str().unwrap().contains("stream"));
    assert!(
        recorded[3]["refused"]
            .as_str()
            .unwrap()
            .starts_with("authentication_error")
    );
    let run = external_run(&ws);
    assert_eq!(
        (run["ended"].as_str(), run["refused_calls"].as_u64()),
        (Some("submitted"), Some(3))
    );
    let stdout = String::from_utf8(object(&ws, run["stdout_blake3"].as_str().unwrap())).unwrap();
    assert!(
        stdout.starts_with("200 400 this unit's model speaks the anthropic protocol"),
        "{stdout}"
    );

    // show and the run page tell the run.
    let id = query(&ws, "SELECT event_id FROM generate")[0]["event_id"]
        .as_str()
        .unwrap()
        .to_string();
    let shown = String::from_utf8(ws.ml2b().args(["show", &id]).output().unwrap().stdout).unwrap();
    assert!(
        shown.contains("── external agent anthropic: submitted (exit 0"),
        "{shown}"
    );
    assert!(
        shown.contains("4 request(s) through the gateway, 3 refused"),
        "{shown}"
    );
    assert!(shown.contains("refused: authentication_error"), "{shown}");
}

/// An MLE-bench-style agent: reads test.csv, asks the gateway which constant to predict,
/// and writes submission.csv (`id`, `y`).
const CSV_AGENT: &str = r#"
import csv, json, os, urllib.request
instructions = open("/home/instructions.txt").read()
body = {"model": os.environ["ML2B_MODEL"], "messages": [{"role": "user", "content": instructions}]}
req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=json.dumps(body).encode(),
    headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "Content-Type": "application/json"})
answer = json.load(urllib.request.urlopen(req, timeout=120))["choices"][0]["message"]["content"]
rows = list(csv.DictReader(open("/home/data/test.csv")))
with open("/home/submission/submission.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["id", "y"])
    for i, row in enumerate(rows):
        w.writerow([row["id"], float(answer) + (i % 7) / 100])
"#;

#[test]
fn an_mle_bench_style_agent_leaves_a_csv_that_is_graded_as_it_is() {
    let (port, seen) = chat_server(|_, _| (200, completion("0.4")));
    let ws = toy();
    add_model(&ws, port);
    let dir = ws.dir.path().join("agents/csv");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("agent.py"), CSV_AGENT).unwrap();
    std::fs::write(
        ws.dir.path().join("manifests/agents.toml"),
        "[agents.mlebench]\ndir = \"agents/csv\"\ncommand = [\"python\", \"/home/agent/agent.py\"]\nsubmission = \"csv\"\ntime_limit_s = 120\n",
    )
    .unwrap();
    ml2b(&ws, &["stage", "translate-validate"]);
    let (out, _) = generate(&ws, "fake", "mlebench");
    assert_eq!(out["summary"]["ran"], 1, "{out}");
    // The instructions are MLE-bench's contract, then the task.
    {
        let s = seen.lock().unwrap();
        let asked = s.requests[0].1["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            asked.contains("/home/submission/submission.csv")
                && asked.contains("the column `id` and the column(s) `y`"),
            "{asked}"
        );
    }
    assert_eq!(external_run(&ws)["ended"], "submitted");
    let g = query(&ws, "SELECT code_blake3, extraction FROM generate");
    let csv = String::from_utf8(object(&ws, g[0]["code_blake3"].as_str().unwrap())).unwrap();
    assert!(csv.starts_with("id,y\r\n2,0.4"), "{csv}");
    ml2b(&ws, &["stage", "execute"]);
    let x = query(
        &ws,
        "SELECT backend, outcome, predictions_blake3, code_blake3, detail FROM execute",
    );
    assert_eq!(
        (x[0]["backend"].as_str(), x[0]["outcome"].as_str()),
        (Some("none"), Some("ok")),
        "{x}"
    );
    assert_eq!(x[0]["predictions_blake3"], x[0]["code_blake3"]);
    ml2b(&ws, &["stage", "grade"]);
    let graded = query(&ws, "SELECT valid, score, reason FROM grade");
    assert_eq!(graded[0]["valid"], true, "{graded}");
    // The same file through grade-sample gets the same score.
    let file = ws.dir.path().join("submission.csv");
    std::fs::write(&file, &csv).unwrap();
    let sample = ml2b(
        &ws,
        &[
            "--json",
            "grade-sample",
            file.to_str().unwrap(),
            "--competition",
            "toy",
        ],
    )
    .0;
    assert_eq!(sample["exact_score"], graded[0]["score"], "{sample}");
}
