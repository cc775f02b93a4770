//! The hostile-submission suite against the local (bubblewrap) backend: each solution tries
//! one escape through `ml2b grade-file`; each must be contained, classified, leave no
//! process or file behind, and leak nothing.

use std::net::TcpListener;
use std::path::Path;

use serde_json::Value;

use crate::common::Workspace;
use crate::common::assert_no_process_with;

const SECRET: &str = "sk-fake-ml2b-secret-0123456789";

fn repo() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

/// A MONO_PREDICT solution: `body` runs first, then valid constant predictions return.
fn solution(body: &str) -> String {
    let body: String = body.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "import os, sys, time, socket\nimport numpy as np\n\ndef train_and_predict(data, X_val):\n{body}    return np.full(len(X_val), 0.7)\n"
    )
}

/// Runs one solution on credit-risk; returns the JSON report and everything it printed.
fn grade(ws: &Workspace, body: &str, extra: &[&str]) -> (Value, String) {
    let file = ws.dir.path().join("hostile.py");
    std::fs::write(&file, solution(body)).unwrap();
    let out = ws
        .ml2b()
        .env("ML2B_FAKE_API_KEY", SECRET)
        .args([
            "--json",
            "grade-file",
            "--root",
            repo(),
            "--competition",
            "credit-risk",
            "--format",
            "mono",
        ])
        .args(extra)
        .arg(&file)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert!(!text.contains(SECRET), "the secret leaked: {text}");
    (report, text)
}

fn outcome(r: &Value) -> &str {
    r["outcome"].as_str().unwrap()
}

#[test]
fn a_clean_solution_runs_and_is_graded() {
    let ws = Workspace::new();
    let (r, _) = grade(&ws, "pass", &[]);
    assert_eq!(outcome(&r), "ok", "{r}");
    assert!(
        r["score"].as_f64().unwrap() > 0.0 && r["r_p"]["reference"].as_f64().unwrap() > 0.0,
        "{r}"
    );
}

#[test]
fn no_tcp_connection_reaches_a_server_on_the_host() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let ws = Workspace::new();
    let body = format!("s = socket.create_connection(('127.0.0.1', {port}), timeout=2)\ns.sendall(b'leak')");
    let (r, _) = grade(&ws, &body, &[]);
    assert_eq!(outcome(&r), "runtime_error", "{r}");
    assert!(
        r["detail"].as_str().unwrap().contains("ConnectionRefusedError"),
        "{r}"
    );
    assert!(listener.accept().is_err(), "the server saw a connection");
}

#[test]
fn hostnames_do_not_resolve() {
    let ws = Workspace::new();
    let (r, _) = grade(&ws, "socket.gethostbyname('pypi.org')", &[]);
    assert_eq!(outcome(&r), "runtime_error", "{r}");
    assert!(r["detail"].as_str().unwrap().contains("gaierror"), "{r}");
}

#[test]
fn the_private_answers_cannot_be_read_by_path_or_by_search() {
    let ws = Workspace::new();
    let answers = Path::new(repo()).join("data/credit-risk/private/answers.csv");
    let (r, _) = grade(
        &ws,
        &format!("open({:?}).read()", answers.display().to_string()),
        &[],
    );
    assert_eq!(outcome(&r), "runtime_error", "{r}");
    assert!(r["detail"].as_str().unwrap().contains("FileNotFoundError"), "{r}");
    let search = "found = [os.path.join(d, f) for d, _, fs in os.walk('/') for f in fs if 'answers' in f or f == 'train.csv' and not d.startswith('/data')]\nif found:\n    raise RuntimeError(f'found {found}')";
    let (r, _) = grade(&ws, search, &[]);
    assert_eq!(outcome(&r), "ok", "the search found something: {r}");
}

#[test]
fn the_callers_environment_is_invisible() {
    let ws = Workspace::new();
    let body = "print(dict(os.environ))\nfor p in os.listdir('/proc'):\n    try:\n        print(open(f'/proc/{p}/environ').read())\n    except Exception:\n        pass\nif any('sk-fake' in v for v in os.environ.values()):\n    raise RuntimeError('saw the key')";
    let (r, text) = grade(&ws, body, &[]);
    assert_eq!(outcome(&r), "ok", "{r}");
    assert!(
        text.contains("PYTHONHASHSEED"),
        "the environment was printed: {text}"
    );
}

#[test]
fn writes_outside_the_output_folder_fail_and_leave_nothing() {
    let ws = Workspace::new();
    let host = ws.dir.path().join("escaped.txt");
    let body = format!(
        "ok = []\nfor p in ['/data/x', '/usr/x', '/sandbox/x', '/x', {:?}, {:?}]:\n    try:\n        open(p, 'w').write('x')\n        ok.append(p)\n    except OSError:\n        pass\nopen('/tmp/scratch', 'w').write('fine')\nif ok:\n    raise RuntimeError(f'wrote {{ok}}')",
        host.display().to_string(),
        Path::new(repo())
            .join("data/credit-risk/public/escaped")
            .display()
            .to_string()
    );
    let (r, _) = grade(&ws, &body, &[]);
    assert_eq!(outcome(&r), "ok", "{r}");
    assert!(!host.exists());
    assert!(!Path::new(repo()).join("data/credit-risk/public/escaped").exists());
}

#[test]
fn a_fork_bomb_is_contained() {
    let ws = Workspace::new();
    let body = "marker = 'ml2b-fork-bomb-marker'\nwhile True:\n    try:\n        if os.fork() == 0:\n            os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(60)', marker])\n    except OSError:\n        raise MemoryError('fork refused')";
    let (r, _) = grade(&ws, body, &["--timeout", "20"]);
    assert!(
        ["out_of_memory", "runtime_error", "timeout"].contains(&outcome(&r)),
        "{r}"
    );
    assert!(r["wall_seconds"].as_f64().unwrap() < 25.0);
    assert_no_process_with("ml2b-fork-bomb-marker");
}

#[test]
fn allocating_64_gib_is_out_of_memory() {
    let ws = Workspace::new();
    let (r, _) = grade(
        &ws,
        "x = np.ones((64 << 30) // 8)",
        &["--memory", &(4u64 << 30).to_string()],
    );
    assert_eq!(outcome(&r), "out_of_memory", "{r}");
}

#[test]
fn filling_the_disk_is_stopped() {
    let ws = Workspace::new();
    // /tmp is a tmpfs as large as the output limit: writing past it fails.
    let tmp = "i = 0\nwhile True:\n    with open(f'/tmp/fill{i}', 'wb') as f:\n        f.write(b'0' * (100 << 20))\n    i += 1";
    let (r, _) = grade(&ws, tmp, &[]);
    assert_eq!(outcome(&r), "constraint_violation", "{r}");
    assert!(r["detail"].as_str().unwrap().contains("No space left"), "{r}");
    // One file past the output limit in /out: refused by the file-size limit.
    let out = "with open('/out/fill', 'wb') as f:\n    while True:\n        f.write(b'0' * (1 << 20))";
    let (r, _) = grade(&ws, out, &[]);
    assert_eq!(outcome(&r), "constraint_violation", "{r}");
}

#[test]
fn sleeping_past_the_limit_is_a_timeout() {
    let ws = Workspace::new();
    let (r, _) = grade(&ws, "time.sleep(120)", &["--timeout", "2"]);
    assert_eq!(outcome(&r), "timeout", "{r}");
    let wall = r["wall_seconds"].as_f64().unwrap();
    assert!((2.0..10.0).contains(&wall), "{wall}");
}

#[test]
fn a_daemon_does_not_outlive_the_run() {
    let ws = Workspace::new();
    let body = "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(600)', 'ml2b-daemon-marker'])\n    os._exit(0)\ntime.sleep(0.5)";
    let (r, _) = grade(&ws, body, &[]);
    assert_eq!(outcome(&r), "ok", "{r}");
    assert_no_process_with("ml2b-daemon-marker");
}

#[test]
fn killing_its_parent_everything_or_itself_is_contained() {
    let ws = Workspace::new();
    let (r, _) = grade(&ws, "os.kill(os.getppid(), 9)\ntime.sleep(0.2)", &[]);
    assert_eq!(outcome(&r), "ok", "the sandbox's init ignores the signal: {r}");
    // kill(-1) reaches only the sandbox's own processes, and here there are none to reach.
    let (r, _) = grade(
        &ws,
        "try:\n    os.kill(-1, 9)\nexcept ProcessLookupError:\n    pass",
        &[],
    );
    assert_eq!(outcome(&r), "ok", "{r}");
    let (r, _) = grade(&ws, "os.kill(os.getpid(), 9)", &[]);
    assert_eq!(outcome(&r), "runtime_error", "{r}");
    assert!(r["detail"].as_str().unwrap().contains("without a result"), "{r}");
}

#[test]
fn outputs_left_as_links_are_not_followed_on_the_host() {
    // A host file shaped like a result record: followed, it would make the run `ok`.
    let ws = Workspace::new();
    let forged = ws.dir.path().join("forged.json");
    std::fs::write(&forged, "{\"success\": true, \"outcome\": \"ok\"}").unwrap();
    let body = format!(
        "os.symlink({:?}, '/out/result.json')",
        forged.display().to_string()
    );
    let (r, text) = grade(&ws, &body, &[]);
    assert_ne!(outcome(&r), "ok", "{text}");
}
