//! `ml2b doctor`: every check passing on the toy root, then each check failing in turn —
//! the Python environment, the sandbox, the data, a model, the disk — each with the line
//! saying what to do, and exit 1.

use insta::assert_snapshot;

use crate::common::{KEY, Workspace, add_model, chat_server};
use crate::competitions::toy;

/// `ml2b doctor ARGS` with `env`, redacted for a snapshot: paths, free space.
fn doctor(ws: &Workspace, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = ws.ml2b();
    cmd.arg("doctor").args(args).env("ML2B_TEST_KEY", KEY);
    for var in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = crate::common::render(&out, ws.dir.path());
    let rules = [
        (r"\d+\.\d GB free", "[N] GB free"),
        (r"store on [^:\n]+:", "store on [DIR]:"),
        (r"http://127\.0\.0\.1:\d+", "http://127.0.0.1:[PORT]"),
        (r"(?m)^(ok    python\s+)\S+", "$1[PYTHON]"),
    ];
    rules.iter().fold(text, |t, (re, with)| {
        regex::Regex::new(re).unwrap().replace_all(&t, *with).into_owned()
    })
}

#[test]
fn doctor_says_what_passes_and_what_to_do_about_each_failure() {
    let (port, _) = chat_server(|_, _| (200, "{}".into()));
    let ws = toy();
    add_model(&ws, port);
    assert_snapshot!("doctor_healthy", doctor(&ws, &[], &[]));
    assert_snapshot!(
        "doctor_python",
        doctor(&ws, &[], &[("ML2B_PYTHON", "/usr/bin/python3")])
    );
    assert_snapshot!(
        "doctor_sandbox",
        doctor(
            &ws,
            &["--backend", "docker"],
            &[("DOCKER_HOST", "unix:///nonexistent/docker.sock")]
        )
    );
    assert_snapshot!(
        "doctor_model",
        doctor(&ws, &["--model", "fake,gpt-4.1"], &[("ML2B_TEST_KEY", "")])
    );
    assert_snapshot!("doctor_disk", doctor(&ws, &["--min-free-gb", "1000000000"], &[]));
    // Last, as it changes the root: a public file that is not what the manifest records.
    let train = ws.dir.path().join("data/toy/public/train.csv");
    let mut text = std::fs::read_to_string(&train).unwrap();
    text.push('\n');
    std::fs::write(&train, text).unwrap();
    assert_snapshot!("doctor_data", doctor(&ws, &[], &[]));
}
