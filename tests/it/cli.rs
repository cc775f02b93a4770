//! The command line itself: help text, global flags, exit codes, `log`, `verify`.

use insta::assert_snapshot;

use crate::common::{Workspace, run_echo, stderr};

#[test]
fn help() {
    let ws = Workspace::new();
    assert_snapshot!(ws.run(&["--help"]));
    assert_snapshot!("help_query", ws.run(&["query", "--help"]));
    assert_snapshot!("help_status", ws.run(&["status", "--help"]));
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let ws = Workspace::new();
    let out = ws.ml2b().args(["log", "--bogus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_selection_naming_nothing_is_a_usage_error_naming_the_value() {
    let ws = Workspace::new();
    for (flag, value) in [
        ("--langs", "zz"),
        ("--langs", "EN"),
        ("--langs", "../kk"),
        ("--competitions", "nope"),
    ] {
        for command in [&["run"][..], &["stage", "translate-validate"][..]] {
            let out = ws
                .ml2b()
                .args(command)
                .args([flag, value, "--root", env!("CARGO_MANIFEST_DIR")])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{command:?} {flag} {value}: {err}");
            assert!(
                err.contains(&format!("`{value}`")),
                "{command:?} {flag} {value}: {err}"
            );
            assert!(
                out.stdout.is_empty(),
                "no run hash: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
    assert!(!ws.store_path().join("log").exists(), "nothing was committed");
    // A typo gets the id it missed; a name near none gets the list.
    let err = |value: &str| {
        let out = ws
            .ml2b()
            .args([
                "stage",
                "translate-validate",
                "--competitions",
                value,
                "--root",
                env!("CARGO_MANIFEST_DIR"),
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(
        err("ames-housng").contains("did you mean `ames-housing`?"),
        "{}",
        err("ames-housng")
    );
    let far = err("zzzzzzzzzzzz");
    assert!(
        far.contains("the competitions are ames-housing, chicago-ridership,"),
        "{far}"
    );
}

#[test]
fn log_lists_segments_in_order() {
    let ws = Workspace::new();
    run_echo(&ws.store(), (0..25).collect(), 10);
    assert_snapshot!(ws.run(&["log"]));
    let json: serde_json::Value =
        serde_json::from_slice(&ws.ml2b().args(["log", "--json"]).output().unwrap().stdout).unwrap();
    let segments = json["stages"][0]["segments"].as_array().unwrap();
    assert_eq!(segments.len(), 3);
    for pair in segments.windows(2) {
        assert_eq!(
            pair[1]["parent"], pair[0]["hash"],
            "the chain links each segment to the previous"
        );
    }
    assert_eq!(json["stages"][0]["head"], segments[2]["hash"]);
}

#[test]
fn log_rejects_a_bad_stage_name() {
    let ws = Workspace::new();
    assert_snapshot!(ws.run(&["log", "--stage", "../etc"]));
}

#[test]
fn verify_a_healthy_store() {
    let ws = Workspace::new();
    run_echo(&ws.store(), (0..25).collect(), 10);
    ws.store().objects().put(b"blob").unwrap();
    assert_snapshot!(ws.run(&["verify"]));
}

#[test]
fn verify_of_a_store_that_is_not_there_is_an_input_error() {
    let ws = Workspace::new();
    let missing = ws.dir.path().join("no-such-store");
    let file = ws.dir.path().join("a-file");
    std::fs::write(&file, "not a store").unwrap();
    for (path, says) in [(&missing, "there is no store at"), (&file, "is not a directory")] {
        for json in [false, true] {
            let mut cmd = ws.ml2b();
            cmd.args(["--store", path.to_str().unwrap()]);
            if json {
                cmd.arg("--json");
            }
            let out = cmd.arg("verify").output().unwrap();
            let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
            assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
            assert!(
                stderr.contains(says) && stderr.contains(path.to_str().unwrap()),
                "{stderr}"
            );
            assert!(!stdout.contains("ok"), "{stdout}");
        }
    }
    assert!(!missing.exists(), "verify made the store it was asked to check");
    // An existing empty store has nothing wrong with it.
    let empty = ws.dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = ws
        .ml2b()
        .args(["--store", empty.to_str().unwrap(), "verify"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_store_that_is_a_file_is_the_same_input_error_for_every_command() {
    let ws = Workspace::new();
    let file = ws.dir.path().join("a-file");
    std::fs::write(&file, "not a store").unwrap();
    for args in [
        &["run", "--models", "reference"][..],
        &["stage", "analyze"],
        &["show"],
        &["query", "SELECT 1"],
    ] {
        let out = ws
            .ml2b()
            .args(["--store", file.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        let stderr = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("is not a directory (see --store or ML2B_STORE)"),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a store");
}

#[test]
fn diagnostics_to_a_file_are_plain_text() {
    // stderr is a pipe here, as in a log file or a Slurm log: no colour escapes.
    let ws = crate::competitions::toy();
    let out = ws
        .ml2b()
        .args(["-v", "stage", "translate-validate"])
        .output()
        .unwrap();
    let stderr = stderr(&out);
    assert!(
        stderr.contains("translate_validate: committed segment 0"),
        "{stderr}"
    );
    assert!(!stderr.contains('\x1b'), "{stderr:?}");
}

#[test]
fn store_flag_overrides_the_environment() {
    let ws = Workspace::new();
    run_echo(&ws.store(), (0..5).collect(), 10);
    let other = ws.dir.path().join("elsewhere");
    std::fs::create_dir(&other).unwrap();
    let out = ws
        .ml2b()
        .args(["--store", other.to_str().unwrap(), "--json", "verify"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["stages"].as_array().unwrap().len(), 0);
}

#[test]
fn run_runs_every_stage_and_prints_the_headline() {
    let ws = crate::competitions::toy();
    assert_snapshot!(ws.run(&["run", "--models", "reference"]));
}

#[test]
fn run_names_the_run_by_its_heads() {
    let ws = crate::competitions::toy();
    run_echo(&ws.store(), (0..5).collect(), 10);
    let json = |args: &[&str]| -> serde_json::Value {
        serde_json::from_slice(&ws.ml2b().arg("--json").args(args).output().unwrap().stdout).unwrap()
    };
    let (run, log) = (json(&["run", "--models", "reference"]), json(&["log"]));
    assert_eq!(run["run"], log["run"], "run and log agree on the run hash");
    run_echo(&ws.store(), (5..6).collect(), 10);
    assert_ne!(
        json(&["run", "--models", "reference"])["run"],
        run["run"],
        "a new segment changes the run hash"
    );
}

#[test]
fn progress_to_a_file_is_plain_lines() {
    // stderr is a pipe: no bars; with ML2B_PROGRESS_INTERVAL=0 a line at every unit, then
    // the phase's closing line (the default interval, 30 s, writes none in a short run).
    let ws = crate::competitions::toy();
    ws.run(&["stage", "translate-validate"]);
    let out = ws
        .ml2b()
        .env("ML2B_PROGRESS_INTERVAL", "0")
        .args([
            "stage",
            "generate",
            "--model",
            "reference",
            "--format",
            "modular",
            "--format",
            "mono",
        ])
        .output()
        .unwrap();
    let times = regex::Regex::new(r"\d+\.\d s|\d+m\d\ds|\d+h\d\dm").unwrap();
    let lines: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("generate: "))
        .map(|l| times.replace_all(l, "[T]").into_owned())
        .collect();
    assert!(!stderr(&out).contains('\x1b'));
    assert_snapshot!(lines.join("\n"));
    // The default interval writes nothing more in a short run.
    let quiet = ws.ml2b().args(["stage", "execute"]).output().unwrap();
    assert!(quiet.status.success());
    assert!(!stderr(&quiet).contains("execute: "), "{}", stderr(&quiet));
}
