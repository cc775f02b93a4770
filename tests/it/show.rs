//! `ml2b show` over the fixture store (`fixture.rs`): a run, an aide attempt, an analyze
//! table, a translation check; unknown and ambiguous prefixes; `--raw` and `--json`; the
//! list of latest runs and its filters.

use insta::assert_snapshot;

use crate::common::render;
use crate::fixture::{Fixture, LEAKY_CODE, LEAKY_LINE, ROOT, THE_RUN, fixture};

fn show(f: &Fixture, args: &[&str]) -> std::process::Output {
    f.ws.ml2b()
        .arg("show")
        .args(args)
        .args(["--root", ROOT])
        .output()
        .unwrap()
}

/// The outcome for a snapshot: paths, hashes and times redacted, and the host and the
/// duration of an event (the analyze stage's are this machine's).
fn snapshot(f: &Fixture, args: &[&str]) -> String {
    let text = render(&show(f, args), f.ws.dir.path());
    let provenance = regex::Regex::new(r"(?m)^  created   \[TIME\] on .* \(\d+ ms\)$").unwrap();
    provenance
        .replace_all(&text, "  created   [TIME] on [HOST] ([DURATION])")
        .into_owned()
}

fn stdout(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The event ids of a log, from SQL.
fn ids(f: &Fixture, sql: &str) -> Vec<String> {
    let out =
        f.ws.ml2b()
            .args(["--json", "query", "--root", ROOT, sql])
            .output()
            .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    rows.iter()
        .map(|r| r["event_id"].as_str().unwrap().to_string())
        .collect()
}

/// (log, event id, unit key) of every event of the pipeline's logs.
fn every_event(f: &Fixture) -> Vec<(String, String, String)> {
    let logs = [
        "translate_validate",
        "generate",
        "journal",
        "execute",
        "grade",
        "analyze",
    ];
    let union: Vec<String> = logs
        .iter()
        .map(|l| format!("SELECT '{l}' AS log, event_id, unit_key FROM {l}"))
        .collect();
    let out =
        f.ws.ml2b()
            .args(["--json", "query", &union.join(" UNION ALL ")])
            .output()
            .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    let text = |r: &serde_json::Value, k: &str| r[k].as_str().unwrap().to_string();
    rows.iter()
        .map(|r| (text(r, "log"), text(r, "event_id"), text(r, "unit_key")))
        .collect()
}

#[test]
fn show_prints_a_whole_run() {
    let f = fixture();
    let id = f.run(THE_RUN).to_hex();
    let text = snapshot(&f, &[&id[..10]]);
    // The finding is marked under its line, in the code as the model wrote it.
    let line = LEAKY_CODE.lines().nth(LEAKY_LINE - 1).unwrap();
    let marked = format!("{LEAKY_LINE} │ {line}\n   │ ^ leakage_preprocessing_on_validation");
    assert!(
        text.contains(&marked),
        "no finding under line {LEAKY_LINE}:\n{text}"
    );
    assert_snapshot!(text);
}

#[test]
fn an_execute_or_grade_event_shows_its_run() {
    let f = fixture();
    let id = f.run(THE_RUN).to_hex();
    let grade = &ids(
        &f,
        &format!(
            "SELECT g.event_id FROM grade g JOIN execute x ON array_element(g.upstream, 1) = x.event_id \
         WHERE array_element(x.upstream, 1) = '{id}'"
        ),
    )[0];
    let text = stdout(&show(&f, &[grade]));
    assert!(text.starts_with(&format!("grade event {grade}")), "{text}");
    assert!(text.contains(&format!("\nrun {id}\n")), "{text}");
    assert!(
        text.contains("r_p         0.9 against the reference solution"),
        "{text}"
    );
}

#[test]
fn show_prints_an_aide_attempt() {
    let f = fixture();
    let id = f.attempts[1].to_hex();
    assert_snapshot!(snapshot(&f, &[&id]));
}

#[test]
fn show_prints_an_analyze_table() {
    let f = fixture();
    let id = &ids(&f, "SELECT event_id FROM analyze WHERE name = 'pass_rate'")[0];
    assert_snapshot!(snapshot(&f, &[&id[..12]]));
}

#[test]
fn show_prints_a_translation_check_with_its_texts() {
    let f = fixture();
    let id = &ids(
        &f,
        "SELECT event_id FROM translate_validate WHERE competition = 'ames-housing' AND language = 'kk'",
    )[0];
    let text = stdout(&show(&f, &[id]));
    let kazakh = std::fs::read_to_string(format!("{ROOT}/data/ames-housing/tasks/kk.toml")).unwrap();
    assert!(text.contains(kazakh.trim_end()), "{text}");
    assert!(text.contains("── back-translation ──"), "{text}");
}

#[test]
fn unknown_and_ambiguous_prefixes_are_input_errors() {
    let f = fixture();
    let unknown = ["ffffffffffffffffffff", "eeeeeeeeeeeeeeeeeeee"]
        .into_iter()
        .find(|p| !show(&f, &[p]).status.success())
        .unwrap();
    assert_snapshot!("unknown", snapshot(&f, &[unknown]));
    // One hex digit: the logs hold many events starting with it (the analyze events' ids
    // change from run to run, with the heads they read, so the list is checked, not
    // snapshotted).
    let ambiguous = show(&f, &["a"]);
    assert_eq!(ambiguous.status.code(), Some(2));
    let stderr = String::from_utf8(ambiguous.stderr).unwrap();
    let matching = every_event(&f)
        .into_iter()
        .filter(|(_, id, key)| id.starts_with('a') || key.starts_with('a'))
        .collect::<Vec<_>>();
    assert!(matching.len() > 2, "{matching:?}");
    let shown = matching.len().min(10);
    let more = if matching.len() > 10 {
        " (the 10 latest shown)"
    } else {
        ""
    };
    let head = format!("error: `a` is ambiguous: {} events match{more}\n", matching.len());
    assert!(stderr.starts_with(&head), "{stderr}");
    let listed: Vec<&str> = stderr.lines().skip(1).collect();
    assert_eq!(listed.len(), shown, "{stderr}");
    for line in listed {
        assert!(
            matching
                .iter()
                .any(|(log, id, _)| line.starts_with(&format!("  {log:<18} event {id}"))),
            "not a matching event: {line}"
        );
    }
    assert_snapshot!("not_hex", snapshot(&f, &["run-42"]));
}

#[test]
fn raw_writes_one_artefact_and_json_the_whole_record() {
    let f = fixture();
    let id = f.run(THE_RUN).to_hex();
    assert_eq!(stdout(&show(&f, &[&id, "--raw", "code"])), LEAKY_CODE);
    let prompt: serde_json::Value =
        serde_json::from_str(&stdout(&show(&f, &[&id, "--raw", "prompt"]))).unwrap();
    assert!(prompt["user"].as_str().unwrap().contains("Эймс"), "{prompt}");
    let predictions = show(&f, &[&id, "--raw", "predictions"]);
    assert!(predictions.status.success());
    assert!(predictions.stdout.starts_with(b"PAR1") && predictions.stdout.ends_with(b"PAR1"));
    let missing = show(&f, &[&id, "--raw", "term-out"]);
    assert_eq!(
        missing.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );

    let out =
        f.ws.ml2b()
            .args(["--json", "show", &id, "--root", ROOT])
            .output()
            .unwrap();
    let record: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(record["event"]["log"], "generate");
    assert_eq!(record["detail"]["kind"], "run");
    let run = &record["detail"];
    assert_eq!(run["generation"]["language"], "kk");
    assert_eq!(run["grade"]["r_p"], 0.9);
    assert_eq!(run["findings"][0]["line"], LEAKY_LINE);
    assert!(
        record["links"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["relation"] == "downstream" && l["log"] == "execute")
    );
}

#[test]
fn show_lists_the_latest_runs_with_filters() {
    let f = fixture();
    assert_snapshot!("list", snapshot(&f, &["--limit", "5"]));
    assert_snapshot!("list_kk", snapshot(&f, &["--language", "kk"]));
    let out =
        f.ws.ml2b()
            .args(["--json", "show", "--root", ROOT, "--outcome", "timeout"])
            .output()
            .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["model"], "qwen-y");
    let aide =
        f.ws.ml2b()
            .args(["--json", "show", "--root", ROOT, "--model", "gpt-x+aide"])
            .output()
            .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout(&aide)).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
}

#[test]
fn a_missing_object_is_named_and_the_rest_is_shown() {
    let f = fixture();
    let id = f.run(THE_RUN).to_hex();
    let code = ml2b::store::Hash::of(LEAKY_CODE.as_bytes());
    std::fs::remove_file(f.ws.store().objects().path(&code)).unwrap();
    let out = show(&f, &[&id]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("── prompt: user (kk) ──"), "{text}");
    assert!(
        text.contains(&format!("── problems ──\n  object {code} is missing")),
        "{text}"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("the store lacks 1 object(s) this event names"),
        "{stderr}"
    );
}

/// What a hostile model and solution write to take over the operator's terminal: clear the
/// screen, set the window title, ring the bell, and rewrite a line with a score of their own.
const ESCAPES: &str = "\x1b[2J\x1b[H\x1b]0;pwned\x07score 0.1\rscore 1.0000 (gold)\x1b[A\u{9b}2J";

#[test]
fn what_a_model_or_a_run_wrote_reaches_the_terminal_shown_not_obeyed() {
    use crate::fixture::{Written, run_with};
    let ws = crate::common::Workspace::new();
    let id = run_with(
        &ws,
        &Written {
            response: &format!("Here.\n{ESCAPES}\n```python\nprint('{ESCAPES}')\n```\n"),
            code: &format!("print('{ESCAPES}')\n"),
            stdout: &format!("{ESCAPES}\n"),
            detail: &format!("RuntimeError: {ESCAPES}"),
        },
    )
    .to_hex();
    let run = |args: &[&str]| ws.ml2b().args(args).args(["--root", ROOT]).output().unwrap();
    for out in [run(&["show", &id]), run(&["show"])] {
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let sent: Vec<char> = text
            .chars()
            .filter(|c| c.is_control() && !matches!(c, '\n' | '\t'))
            .collect();
        assert_eq!(sent, Vec::<char>::new(), "{text}");
    }
    let text = String::from_utf8(run(&["show", &id]).stdout).unwrap();
    // Shown where it was: in the response, the code, the output and the outcome's detail.
    let shown = "␛[2J␛[H␛]0;pwned␇score 0.1␍score 1.0000 (gold)␛[A\\u{9b}2J";
    assert_eq!(text.matches(shown).count(), 5, "{text}");
    assert!(
        text.contains(&format!("outcome     runtime_error: RuntimeError: {shown}")),
        "{text}"
    );
    // `--raw` into a file or a pipe is the object as stored.
    let raw = run(&["show", &id, "--raw", "code"]).stdout;
    assert_eq!(raw, format!("print('{ESCAPES}')\n").as_bytes());
    // `--raw` to a terminal shows them too (util-linux's `script` gives ml2b a terminal).
    let script = std::process::Command::new("script")
        .args(["-qec"])
        .arg(format!(
            "{} --store {} show {id} --raw code --root {ROOT}",
            env!("CARGO_BIN_EXE_ml2b"),
            ws.store_path().display()
        ))
        .arg("/dev/null")
        .output()
        .expect("util-linux's script");
    let tty = String::from_utf8(script.stdout).unwrap();
    assert!(script.status.success(), "{tty}");
    assert!(tty.contains(&format!("print('{shown}')")), "{tty:?}");
    assert!(!tty.contains('\x1b'), "{tty:?}");
}

/// The row index files of the fixture's store.
fn row_index_files(f: &Fixture) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let index = f.ws.dir.path().join("store/index");
    for stage in std::fs::read_dir(&index).into_iter().flatten() {
        let rows = stage.unwrap().path().join("rows");
        for file in std::fs::read_dir(&rows).into_iter().flatten() {
            out.push(file.unwrap().path());
        }
    }
    out.sort();
    out
}

#[test]
fn a_record_reads_the_same_past_a_damaged_or_missing_index() {
    let f = fixture();
    let id = f.run(THE_RUN).to_hex();
    let record = || {
        let out =
            f.ws.ml2b()
                .args(["--json", "show", &id, "--root", ROOT])
                .output()
                .unwrap();
        stdout(&out)
    };
    let before = record();
    let files = row_index_files(&f);
    assert!(files.len() >= 5, "a file per committed segment: {files:?}");
    // Every file damaged in its last entry: each lookup reads its segments instead.
    for file in &files {
        let mut bytes = std::fs::read(file).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x5a;
        std::fs::write(file, bytes).unwrap();
    }
    assert_eq!(record(), before);
    // No index at all (a store written before it existed): the reader writes it again.
    std::fs::remove_dir_all(f.ws.dir.path().join("store/index")).unwrap();
    assert_eq!(record(), before);
    assert_eq!(row_index_files(&f).len(), files.len());

    // `verify` names the file it removed, rebuilds the index, and the store verifies.
    let damaged = &row_index_files(&f)[0];
    let mut bytes = std::fs::read(damaged).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x5a;
    std::fs::write(damaged, bytes).unwrap();
    let out = f.ws.ml2b().arg("verify").output().unwrap();
    let text = stdout(&out);
    let name = damaged.file_name().unwrap().to_string_lossy();
    let line = text
        .lines()
        .find(|l| l.starts_with("index: ") && l.contains(name.as_ref()));
    assert!(
        line.is_some_and(|l| l.ends_with("(stale or damaged; rebuilt from the log)")),
        "{text}"
    );
    assert_eq!(record(), before);
}
