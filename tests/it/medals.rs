//! MLE-bench's medals through the real CLI, on a root built here: a small competition with
//! an `[mle_bench]` leaderboard (20 teams, lower is better: gold ≤ 0.2, silver ≤ 0.4,
//! bronze ≤ 0.8, median 1.05) and one without. `ml2b grade-sample` on submissions landing
//! in each medal; the grade stage over committed executions, its medals, `verify --rerun`
//! and a regrade on a new leaderboard; the `medals` table's numbers; and the grade events of
//! an old store (schema version 2) reading with no medal.

use std::path::{Path, PathBuf};

use chrono::{TimeZone, Utc};
use ml2b::events::Provider;
use ml2b::events::{Agent, Execution, Generation, Grade};
use ml2b::events::{Format, Outcome};
use ml2b::log::{Event, EventBody, Provenance, StageLog, unit_key};
use ml2b::store::{Hash, Store};
use serde_json::Value;

use crate::common::{Workspace, write};

const MEDALS: &str = "medal-toy";
const PLAIN: &str = "plain-toy";

/// The answers: ten ids, targets 1.0 … 10.0.
fn answers() -> String {
    let mut csv = String::from("id,y\n");
    for i in 0..10 {
        csv.push_str(&format!("{i},{}.0\n", i + 1));
    }
    csv
}

/// A submission off the answers by `d` on every row: its RMSE is `d` (to rounding).
fn submission(d: f64) -> String {
    let mut csv = String::from("id,y\n");
    for i in 0..10 {
        csv.push_str(&format!("{i},{}\n", (i + 1) as f64 + d));
    }
    csv
}

/// The leaderboard: 20 teams, best (lowest) first, 0.1 … 2.0.
fn leaderboard() -> String {
    let mut csv = String::from("teamName,submissionDate,score\n");
    for i in 1..=20 {
        csv.push_str(&format!("team {i},2020-01-01,{}\n", f64::from(i) / 10.0));
    }
    csv
}

fn hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// A root with both competitions.
fn root() -> Workspace {
    let ws = Workspace::new();
    let root = ws.dir.path();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in ["languages.toml", "models.toml"] {
        write(
            &root.join("manifests").join(name),
            std::fs::read_to_string(repo.join("manifests").join(name)).unwrap(),
        );
    }
    for id in [MEDALS, PLAIN] {
        write(&root.join(format!("data/{id}/private/answers.csv")), answers());
        write(
            &root.join(format!("data/{id}/tasks/en.toml")),
            "title = \"Toy\"\ndomain = \"d\"\nmetric = \"m\"\ndescription = \"Predict y.\"\ndata_card = \"c\"\n",
        );
        let mle_bench = if id == MEDALS {
            write(
                &root.join(format!("data/{id}/mle-bench/leaderboard.csv")),
                leaderboard(),
            );
            format!(
                "[mle_bench]\ngrader = \"rmse\"\nleaderboard = \"mle-bench/leaderboard.csv\"\nleaderboard_blake3 = \"{}\"\n",
                hex(leaderboard().as_bytes())
            )
        } else {
            String::new()
        };
        let manifest = format!(
            r#"id = "{id}"
title = "Toy {id}"
domain = "tabular"
task = "regression"
visibility = "public"
translation = "none"
languages = ["en"]
[metric]
name = "rmse"
direction = "minimize"
[columns]
targets = ["y"]
[source]
origin = "made up for the tests"
licence = "CC0-1.0"
[split]
rule = "given"
[files.private]
"answers.csv" = "{}"
[characteristics]
rows = 10
[baseline]
score = 0.5
expected = [0.4, 0.6]
{mle_bench}"#,
            hex(answers().as_bytes())
        );
        write(&root.join(format!("manifests/competitions/{id}.toml")), &manifest);
    }
    ws
}

fn root_arg(ws: &Workspace) -> PathBuf {
    ws.dir.path().to_path_buf()
}

/// `ml2b --json grade-sample FILE --competition ID`: exit code and report.
fn grade_sample(ws: &Workspace, file: &Path, competition: &str) -> (i32, Value) {
    let out = ws
        .ml2b()
        .args(["--json", "grade-sample"])
        .arg(file)
        .args(["--competition", competition, "--root"])
        .arg(root_arg(ws))
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap(), report)
}

fn sample(ws: &Workspace, name: &str, d: f64) -> PathBuf {
    let path = ws.dir.path().join(name);
    write(&path, submission(d));
    path
}

#[test]
fn grade_sample_reports_each_medal_as_mle_bench() {
    let ws = root();
    // (offset, medal, above the median)
    let cases = [
        (0.15, "gold", true),
        // RMSE 0.2000000000000001 rounds to the gold threshold, 0.2: gold, as MLE-bench's.
        (0.2, "gold", true),
        (0.3, "silver", true),
        (0.6, "bronze", true),
        (0.9, "none", true),
        (1.5, "none", false),
    ];
    for (d, medal, above) in cases {
        let (code, r) = grade_sample(&ws, &sample(&ws, &format!("sub-{d}.csv"), d), MEDALS);
        assert_eq!(code, 0, "{r}");
        assert_eq!(r["competition_id"], MEDALS);
        assert_eq!(r["submission_exists"], true);
        assert_eq!(r["valid_submission"], true);
        assert_eq!(r["medal"], medal, "{d}: {r}");
        assert_eq!(r["gold_medal"], medal == "gold", "{r}");
        assert_eq!(r["silver_medal"], medal == "silver", "{r}");
        assert_eq!(r["bronze_medal"], medal == "bronze", "{r}");
        assert_eq!(r["any_medal"], medal != "none", "{r}");
        assert_eq!(r["above_median"], above, "{r}");
        assert_eq!(r["is_lower_better"], true);
        assert_eq!(r["gold_threshold"], 0.2);
        assert_eq!(r["silver_threshold"], 0.4);
        assert_eq!(r["bronze_threshold"], 0.8);
        assert_eq!(r["median_threshold"], 1.05);
        assert_eq!(r["score"], d, "the score rounded to 5 decimals: {r}");
        let exact = r["exact_score"].as_f64().unwrap();
        assert!((exact - d).abs() < 1e-12, "{r}");
        assert_eq!(r["metric"], "rmse");
        assert_eq!(r["reason"], Value::Null);
        assert!((r["r_p"].as_f64().unwrap() - 0.5 / exact).abs() < 1e-12, "{r}");
        assert_eq!(r["leaderboard_blake3"], hex(leaderboard().as_bytes()));
    }
}

#[test]
fn grade_sample_of_an_invalid_or_missing_submission_has_no_medal_but_the_thresholds() {
    let ws = root();
    let short = ws.dir.path().join("short.csv");
    write(&short, "id,y\n0,1.0\n1,2.0\n");
    let missing = ws.dir.path().join("nothing-here.csv");
    let not_csv = ws.dir.path().join("sub.txt");
    write(&not_csv, submission(0.1));
    for (file, exists) in [(&short, true), (&missing, false), (&not_csv, false)] {
        let (code, r) = grade_sample(&ws, file, MEDALS);
        assert_eq!(code, 1, "{r}");
        assert_eq!(r["submission_exists"], exists, "{r}");
        assert_eq!(r["valid_submission"], false);
        assert_eq!(r["score"], Value::Null);
        assert_eq!(r["medal"], "none");
        assert_eq!(r["any_medal"], false);
        assert_eq!(r["above_median"], false);
        assert_eq!(r["gold_threshold"], 0.2, "thresholds all the same: {r}");
        assert_eq!(r["median_threshold"], 1.05);
        assert_eq!(r["r_p"], 0.0, "an invalid submission's r_p is 0: {r}");
        assert!(r["reason"].as_str().is_some_and(|s| !s.is_empty()), "{r}");
    }
}

#[test]
fn grade_sample_without_a_leaderboard_has_no_medal_fields_and_says_so() {
    let ws = root();
    let (code, r) = grade_sample(&ws, &sample(&ws, "sub.csv", 0.15), PLAIN);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["valid_submission"], true);
    assert_eq!(r["leaderboard_blake3"], Value::Null);
    for key in [
        "medal",
        "gold_medal",
        "any_medal",
        "gold_threshold",
        "is_lower_better",
    ] {
        assert!(r.get(key).is_none(), "{key} in {r}");
    }
    assert!(
        r["notes"][0]
            .as_str()
            .unwrap()
            .contains("no MLE-bench leaderboard"),
        "{r}"
    );
    let text = ws
        .ml2b()
        .args(["grade-sample", "sub.csv", "--competition", PLAIN, "--root"])
        .arg(root_arg(&ws))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("valid: yes") && text.contains("no MLE-bench leaderboard"),
        "{text}"
    );
}

#[test]
fn grade_sample_usage_errors_and_a_changed_leaderboard() {
    let ws = root();
    let file = sample(&ws, "sub.csv", 0.3);
    let out = ws
        .ml2b()
        .args(["grade-sample"])
        .arg(&file)
        .args(["--competition", "no-such", "--root"])
        .arg(root_arg(&ws))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = ws
        .ml2b()
        .arg("grade-sample")
        .arg(&file)
        .args(["--competition", MEDALS, "--root"])
        .arg(root_arg(&ws))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("medal: silver"), "{stdout}");
    assert!(
        stdout.contains("thresholds: gold ≤ 0.2, silver ≤ 0.4, bronze ≤ 0.8"),
        "{stdout}"
    );
    // A leaderboard that is not the one the manifest records is refused, by field.
    let lb = ws
        .dir
        .path()
        .join(format!("data/{MEDALS}/mle-bench/leaderboard.csv"));
    std::fs::write(&lb, leaderboard().replace(",0.1\n", ",0.05\n")).unwrap();
    let out = ws
        .ml2b()
        .arg("grade-sample")
        .arg(&file)
        .args(["--competition", MEDALS, "--root"])
        .arg(root_arg(&ws))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("mle_bench.leaderboard_blake3"), "{stderr}");
}

// ---------------------------------------------------------------- the grade stage

fn commit<B: EventBody>(store: &Store, events: Vec<Event<B>>) {
    let log = StageLog::new(store, B::STAGE).unwrap();
    let mut view = log.view().unwrap();
    log.commit(&mut view, events, None).unwrap();
}

fn event<B: EventBody>(params: &impl serde::Serialize, upstream: Vec<Hash>, body: B, t: i64) -> Event<B> {
    let provenance = Provenance {
        created_at: Utc.with_ymd_and_hms(2026, 5, 1, 12, 0, 0).unwrap() + chrono::Duration::seconds(t),
        host: "test".into(),
        duration_ms: 10,
    };
    let key = unit_key(B::STAGE, B::SCHEMA_VERSION, &upstream, params).unwrap();
    Event::new(key, upstream, body, provenance).unwrap()
}

/// How a run ends.
#[derive(Clone, Copy)]
enum End {
    /// Predictions off by this much.
    Off(f64),
    /// Two rows of ten.
    Short,
    Failed,
    NotExecuted,
}

/// Commits one generated sample per entry and its execution; returns nothing to grade yet.
fn commit_runs(store: &Store, runs: &[(&str, &str, u32, End)]) {
    let (mut gens, mut execs) = (Vec::new(), Vec::new());
    for (t, &(model, competition, seed, end)) in runs.iter().enumerate() {
        let code = format!("# {model} {competition} {seed}\n");
        let code_blake3 = store.objects().put(code.as_bytes()).unwrap();
        let g = Generation {
            competition: competition.into(),
            language: "en".into(),
            model: model.into(),
            provider: Provider::Openai,
            agent: Agent::OneShot,
            format: Format::Modular,
            seed,
            code_blake3,
            code_bytes: code.len() as u64,
            prompt_blake3: None,
            request_blake3: None,
            response_blake3: None,
            attempts: 1,
            extraction: None,
            finish_reason: None,
            floating_alias: false,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: 0.0,
            translation_passed: true,
            text_blake3: None,
            text_translated_by: None,
            agent_name: None,
        };
        let ge = event(&(model, competition, seed), vec![], g, t as i64);
        let predictions = match end {
            End::Off(d) => Some(submission(d)),
            End::Short => Some("id,y\n0,1.0\n1,2.0\n".to_string()),
            End::Failed | End::NotExecuted => None,
        };
        if !matches!(end, End::NotExecuted) {
            let x = Execution {
                competition: competition.into(),
                format: Format::Modular,
                code_blake3,
                backend: "local".into(),
                image: None,
                outcome: if matches!(end, End::Failed) {
                    Outcome::RuntimeError
                } else {
                    Outcome::Ok
                },
                predictions_blake3: predictions.map(|p| store.objects().put(p.as_bytes()).unwrap()),
                result: "{}".into(),
                detail: None,
                wall_seconds: 1.0,
                stdout_tail: String::new(),
                stderr_tail: String::new(),
                findings: "[]".into(),
                leakage: false,
                network: None,
                requests: None,
                requests_total: None,
                requests_denied: None,
                model_cache_blake3: None,
                gpus: None,
            };
            execs.push(event(&(competition, code_blake3), vec![ge.id], x, 100 + t as i64));
        }
        gens.push(ge);
    }
    commit(store, gens);
    commit(store, execs);
}

fn query(ws: &Workspace, sql: &str) -> Vec<Value> {
    let out = ws
        .ml2b()
        .args(["--json", "query", "--root"])
        .arg(root_arg(ws))
        .arg(sql)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn stage_grade(ws: &Workspace) -> Value {
    let out = ws
        .ml2b()
        .args(["--json", "stage", "grade", "--root"])
        .arg(root_arg(ws))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_grade_stage_ranks_every_run_and_the_medals_table_counts_them() {
    let ws = root();
    let store = ws.store();
    commit_runs(
        &store,
        &[
            ("m1", MEDALS, 0, End::Off(0.15)),
            ("m1", MEDALS, 1, End::Off(0.3)),
            ("m1", MEDALS, 2, End::Off(0.6)),
            ("m1", MEDALS, 3, End::Off(0.9)),
            ("m1", MEDALS, 4, End::Off(1.5)),
            ("m1", MEDALS, 5, End::Failed),
            ("m1", MEDALS, 6, End::NotExecuted),
            ("m2", MEDALS, 0, End::Off(0.1)),
            ("m2", MEDALS, 1, End::Short),
            ("m1", PLAIN, 0, End::Off(0.15)),
        ],
    );
    let graded = stage_grade(&ws);
    assert_eq!(graded["summary"]["ran"], 9, "{graded}");

    let rows = query(
        &ws,
        "SELECT g.competition, x.outcome, g.valid, g.score, g.medal, g.above_median, \
         g.gold_threshold, g.silver_threshold, g.bronze_threshold, g.median_threshold, \
         g.leaderboard_blake3, g.grader_blake3 \
         FROM grade g JOIN execute x ON x.event_id = array_element(g.upstream, 1) \
         ORDER BY g.competition, g.score NULLS LAST, g.valid",
    );
    let medals: Vec<(String, Value, Value)> = rows
        .iter()
        .map(|r| {
            (
                r["competition"].as_str().unwrap().to_string(),
                r["medal"].clone(),
                r["above_median"].clone(),
            )
        })
        .collect();
    let m = |s: &str| Value::from(s);
    assert_eq!(
        medals,
        vec![
            (MEDALS.into(), m("gold"), Value::from(true)),
            (MEDALS.into(), m("gold"), Value::from(true)),
            (MEDALS.into(), m("silver"), Value::from(true)),
            (MEDALS.into(), m("bronze"), Value::from(true)),
            (MEDALS.into(), m("none"), Value::from(true)),
            (MEDALS.into(), m("none"), Value::from(false)),
            (MEDALS.into(), m("none"), Value::from(false)),
            (MEDALS.into(), m("none"), Value::from(false)),
            // JSON leaves the null columns out.
            (PLAIN.into(), Value::Null, Value::Null),
        ],
        "{rows:#?}"
    );
    let lb = hex(leaderboard().as_bytes());
    for r in &rows[..8] {
        assert_eq!(r["gold_threshold"], 0.2, "{r}");
        assert_eq!(r["silver_threshold"], 0.4, "{r}");
        assert_eq!(r["bronze_threshold"], 0.8, "{r}");
        assert_eq!(r["median_threshold"], 1.05, "{r}");
        assert_eq!(r["leaderboard_blake3"], lb, "{r}");
        assert!(r.get("grader_blake3").is_none(), "no grading program: {r}");
    }
    assert!(rows[8].get("gold_threshold").is_none(), "{}", rows[8]);

    // MLE-bench's aggregate: every run counts, the unexecuted one too.
    let table = query(&ws, &format!("{}/queries/medals.sql", env!("CARGO_MANIFEST_DIR")));
    let close = |v: &Value, want: f64| {
        assert!((v.as_f64().unwrap() - want).abs() < 1e-9, "{v} != {want}");
    };
    assert_eq!(table.len(), 2, "{table:#?}");
    let (m1, m2) = (&table[0], &table[1]);
    assert_eq!(
        (m1["model"].as_str(), m1["language"].as_str()),
        (Some("m1"), Some("en"))
    );
    assert_eq!(
        m1["competitions"], 1,
        "the plain competition is not an MLE-bench one"
    );
    assert_eq!(m1["runs"], 7);
    close(&m1["valid_pct"], 100.0 * 5.0 / 7.0);
    close(&m1["above_median_pct"], 100.0 * 4.0 / 7.0);
    for key in ["gold_pct", "silver_pct", "bronze_pct"] {
        close(&m1[key], 100.0 / 7.0);
    }
    close(&m1["any_medal_pct"], 100.0 * 3.0 / 7.0);
    assert_eq!(m2["model"], "m2");
    assert_eq!(m2["runs"], 2);
    close(&m2["valid_pct"], 50.0);
    close(&m2["above_median_pct"], 50.0);
    close(&m2["gold_pct"], 50.0);
    close(&m2["silver_pct"], 0.0);
    close(&m2["any_medal_pct"], 50.0);

    // The grades re-derive; `ml2b show` names the medal.
    let out = ws
        .ml2b()
        .args(["--json", "verify", "--rerun", "--root"])
        .arg(root_arg(&ws))
        .output()
        .unwrap();
    let verified: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verified["rerun"]["grade"]["events"], 9, "{verified}");
    assert_eq!(
        verified["rerun"]["grade"]["differ"].as_array().unwrap().len(),
        0,
        "{verified}"
    );
    let gold = query(
        &ws,
        "SELECT event_id FROM grade WHERE medal = 'gold' ORDER BY score LIMIT 1",
    );
    let show = ws
        .ml2b()
        .args(["show", gold[0]["event_id"].as_str().unwrap(), "--root"])
        .arg(root_arg(&ws))
        .output()
        .unwrap();
    let show = String::from_utf8_lossy(&show.stdout);
    assert!(
        show.contains("medal") && show.contains("gold, above the median"),
        "{show}"
    );

    // A re-run grades nothing; a new leaderboard (recorded in the manifest) regrades all.
    assert_eq!(stage_grade(&ws)["summary"]["ran"], 0);
    let new_board = leaderboard().replace("team 1,2020-01-01,0.1\n", "team 1,2020-01-01,0.05\n");
    let dir = ws.dir.path();
    std::fs::write(
        dir.join(format!("data/{MEDALS}/mle-bench/leaderboard.csv")),
        &new_board,
    )
    .unwrap();
    let manifest = dir.join(format!("manifests/competitions/{MEDALS}.toml"));
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace(&lb, &hex(new_board.as_bytes()))).unwrap();
    assert_eq!(
        stage_grade(&ws)["summary"]["ran"],
        8,
        "the MLE-bench competition's runs"
    );
}

/// The grade events of a store written before medals (schema version 2) read with every
/// new field empty, and the table of medals is empty there.
#[test]
fn grades_of_an_old_store_read_with_no_medal() {
    let store = Store::open(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store-08a1b02"));
    let grades = StageLog::new(&store, Grade::STAGE)
        .unwrap()
        .read_versioned::<Grade>()
        .unwrap();
    assert!(!grades.is_empty());
    for (version, g) in grades {
        assert_eq!(version, 2);
        let b = g.body;
        assert_eq!(
            (
                b.medal,
                b.above_median,
                b.leaderboard_blake3,
                b.grader_blake3,
                b.gold_threshold
            ),
            (None, None, None, None, None)
        );
    }
}

/// Issue 43, item 8: ids with a leading space are numbers to pandas (and so to MLE-bench):
/// `grade-sample` aligns ` 3` with the id 3 instead of calling it missing.
#[test]
fn grade_sample_reads_ids_with_spaces_as_pandas_does() {
    let ws = root();
    let spaced = submission(0.15).replace("\n", "\n ").trim_end().to_string() + "\n";
    assert!(spaced.contains("\n 3,"), "{spaced}");
    let path = ws.dir.path().join("spaced.csv");
    write(&path, &spaced);
    let (code, report) = grade_sample(&ws, &path, MEDALS);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["medal"], "gold", "{report}");
    assert!(
        (report["exact_score"].as_f64().unwrap() - 0.15).abs() < 1e-9,
        "{report}"
    );
}

/// A store whose grade events were written with schema 3 (grading rules V1) re-derives them
/// bit for bit, with those rules, although today's rules grade the same predictions
/// otherwise: here ids written ` 0`, missing to rules V1, the ids 0… to V2. A fresh grade
/// of the same run is a separate event of schema 4, and both re-derive.
#[test]
fn a_schema_3_grade_rederives_with_the_rules_it_was_written_under() {
    use ml2b::events::GradeV3;
    use ml2b::metrics::grading::{GradeOptions, Rules, Score, score_files_graded};

    let ws = root();
    let store = ws.store();
    let spaced = submission(0.3).replace("\n", "\n ").trim_end().to_string() + "\n";
    let code = "# spaced ids\n";
    let code_blake3 = store.objects().put(code.as_bytes()).unwrap();
    let g = Generation {
        competition: PLAIN.into(),
        language: "en".into(),
        model: "m1".into(),
        provider: Provider::Openai,
        agent: Agent::OneShot,
        format: Format::Modular,
        seed: 0,
        code_blake3,
        code_bytes: code.len() as u64,
        prompt_blake3: None,
        request_blake3: None,
        response_blake3: None,
        attempts: 1,
        extraction: None,
        finish_reason: None,
        floating_alias: false,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        translation_passed: true,
        text_blake3: None,
        text_translated_by: None,
        agent_name: None,
    };
    let ge = event(&("m1", PLAIN, 0), vec![], g, 0);
    let predictions = store.objects().put(spaced.as_bytes()).unwrap();
    let x = Execution {
        competition: PLAIN.into(),
        format: Format::Modular,
        code_blake3,
        backend: "local".into(),
        image: None,
        outcome: Outcome::Ok,
        predictions_blake3: Some(predictions),
        result: "{}".into(),
        detail: None,
        wall_seconds: 1.0,
        stdout_tail: String::new(),
        stderr_tail: String::new(),
        findings: "[]".into(),
        leakage: false,
        network: None,
        requests: None,
        requests_total: None,
        requests_denied: None,
        model_cache_blake3: None,
        gpus: None,
    };
    let xe = event(&(PLAIN, code_blake3), vec![ge.id], x, 100);
    let execution = xe.id;
    commit(&store, vec![ge]);
    commit(&store, vec![xe]);

    // What ml2b wrote then: rules V1 call the spaced ids missing.
    let dir = ws.dir.path();
    let answers_path = dir.join(format!("data/{PLAIN}/private/answers.csv"));
    let predictions_path = dir.join("spaced.csv");
    write(&predictions_path, &spaced);
    let options = |rules| GradeOptions {
        targets: Some(vec!["y".into()]),
        rules,
        ..GradeOptions::default()
    };
    let grade = |rules| {
        score_files_graded("rmse", &answers_path, &predictions_path, &options(rules))
            .unwrap()
            .score
    };
    let Score::Invalid { reason } = grade(Rules::V1) else {
        panic!("rules V1 refused spaced ids");
    };
    assert!(matches!(grade(Rules::V2), Score::Valid { .. }));
    let answers_blake3 = Hash::of(answers().as_bytes());
    let body = Grade {
        competition: PLAIN.into(),
        format: Format::Modular,
        code_blake3,
        metric: "rmse".into(),
        direction: "minimize".into(),
        outcome: Outcome::Ok,
        valid: false,
        score: None,
        reason: Some(reason.to_string()),
        baseline_score: Some(0.5),
        baseline_run: None,
        r_p: Some(0.0),
        automl_score: None,
        automl_run: None,
        r_p_automl: None,
        role: None,
        in_expected_range: None,
        answers_blake3,
        grader_blake3: None,
        leaderboard_blake3: None,
        medal: None,
        above_median: None,
        gold_threshold: None,
        silver_threshold: None,
        bronze_threshold: None,
        median_threshold: None,
    };
    let against: Vec<(ml2b::manifest::competition::BaselineRole, Hash)> = Vec::new();
    let params = ("rmse", &answers_blake3, &against, &None::<Hash>, &None::<Hash>);
    let key = unit_key(Grade::STAGE, 3, &[execution], &params).unwrap();
    let provenance = Provenance {
        created_at: Utc.with_ymd_and_hms(2026, 5, 1, 13, 0, 0).unwrap(),
        host: "test".into(),
        duration_ms: 10,
    };
    commit(
        &store,
        vec![Event::new(key, vec![execution], GradeV3(body), provenance).unwrap()],
    );

    let rerun = |ws: &Workspace| -> Value {
        let out = ws
            .ml2b()
            .args(["--json", "verify", "--rerun", "--root"])
            .arg(root_arg(ws))
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
    };
    let verified = rerun(&ws);
    assert_eq!(verified["rerun"]["grade"]["events"], 1, "{verified}");
    assert_eq!(
        verified["rerun"]["grade"]["differ"],
        Value::Array(vec![]),
        "{verified}"
    );

    // Today's grade of the same run: schema 4, valid, and both events re-derive.
    assert_eq!(stage_grade(&ws)["summary"]["ran"], 1);
    let rows = query(&ws, "SELECT valid, score FROM grade ORDER BY valid");
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(
        (&rows[0]["valid"], &rows[1]["valid"]),
        (&Value::from(false), &Value::from(true))
    );
    let verified = rerun(&ws);
    assert_eq!(verified["rerun"]["grade"]["events"], 2, "{verified}");
    assert_eq!(
        verified["rerun"]["grade"]["differ"],
        Value::Array(vec![]),
        "{verified}"
    );
}
