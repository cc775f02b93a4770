//! The analyze stage, the queries of `queries/` and `ml2b report` over a fixture store
//! whose events are written by hand, so every number below is computed by hand.
//!
//! The fixture (bundled root; r_p per seed, `x` = runtime_error, `-` = never generated):
//!
//! ```text
//! model m1          en          fr          kk
//! ames-housing      1.0  1.0    0.8  0.6    0.5  x
//! concrete-strength 1.2  1.0    0.9  0.9    0.4  -
//! diamond-prices    0.9  0.9    0.9  0.9    0.3  0.3
//! model m2: 1.0 everywhere, except diamond-prices/kk: x x
//! ```
//! plus a regrade of m1/ames-housing/fr seed 1 (first 0.2, then 0.6: the latest counts).

use std::collections::BTreeMap;

use insta::assert_snapshot;
use ml2b::events::Provider;
use ml2b::events::{Agent, Execution, Generation, Grade, GradeV2};
use ml2b::events::{Format, Outcome};
use ml2b::log::{Event, EventBody, Provenance, StageLog, unit_key};
use ml2b::store::{Hash, Store};

use crate::common::Workspace;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One run of the fixture: `Some(r)` graded valid with r_p = r, `None` a runtime error.
type Run = (&'static str, &'static str, &'static str, u32, Option<f64>);

/// Marks a seed that was never generated.
const MISSING: Option<f64> = Some(-1.0);

fn runs() -> Vec<Run> {
    let mut v = Vec::new();
    let m1: [(&str, [[Option<f64>; 2]; 3]); 3] = [
        (
            "ames-housing",
            [[Some(1.0), Some(1.0)], [Some(0.8), Some(0.2)], [Some(0.5), None]],
        ),
        (
            "concrete-strength",
            [
                [Some(1.2), Some(1.0)],
                [Some(0.9), Some(0.9)],
                [Some(0.4), MISSING],
            ],
        ),
        (
            "diamond-prices",
            [
                [Some(0.9), Some(0.9)],
                [Some(0.9), Some(0.9)],
                [Some(0.3), Some(0.3)],
            ],
        ),
    ];
    for (comp, by_lang) in m1 {
        for (lang, seeds) in ["en", "fr", "kk"].into_iter().zip(by_lang) {
            for (seed, r) in seeds.into_iter().enumerate() {
                if r != MISSING {
                    v.push(("m1", comp, lang, seed as u32, r));
                }
            }
        }
    }
    for comp in ["ames-housing", "concrete-strength", "diamond-prices"] {
        for lang in ["en", "fr", "kk"] {
            for seed in 0..2 {
                let failed = comp == "diamond-prices" && lang == "kk";
                v.push(("m2", comp, lang, seed, (!failed).then_some(1.0)));
            }
        }
    }
    v
}

fn commit<B: EventBody>(store: &Store, events: Vec<Event<B>>) {
    let log = StageLog::new(store, B::STAGE).unwrap();
    let mut view = log.view().unwrap();
    log.commit(&mut view, events, None).unwrap();
}

fn event<B: EventBody>(key: &impl serde::Serialize, upstream: Vec<Hash>, body: B) -> Event<B> {
    let key = unit_key(B::STAGE, B::SCHEMA_VERSION, &upstream, key).unwrap();
    Event::new(key, upstream, body, Provenance::now(0)).unwrap()
}

fn generation(&(model, comp, lang, seed, _): &Run) -> Generation {
    Generation {
        competition: comp.into(),
        language: lang.into(),
        model: model.into(),
        provider: Provider::Openai,
        agent: Agent::OneShot,
        format: Format::Modular,
        seed,
        code_blake3: blake3::hash(format!("{model}/{comp}/{lang}/{seed}").as_bytes()).into(),
        code_bytes: 100,
        prompt_blake3: None,
        request_blake3: None,
        response_blake3: None,
        attempts: 1,
        extraction: None,
        finish_reason: None,
        floating_alias: false,
        input_tokens: 1000,
        output_tokens: 250,
        cost_usd: if model == "m1" { 0.01 } else { 0.0 },
        translation_passed: true,
        text_blake3: None,
        text_translated_by: None,
        agent_name: None,
    }
}

fn execution(g: &Generation, r: Option<f64>) -> Execution {
    Execution {
        competition: g.competition.clone(),
        format: g.format,
        code_blake3: g.code_blake3,
        backend: "fixture".into(),
        image: None,
        outcome: if r.is_some() {
            Outcome::Ok
        } else {
            Outcome::RuntimeError
        },
        predictions_blake3: None,
        result: "{}".into(),
        detail: None,
        wall_seconds: 1.0,
        stdout_tail: String::new(),
        stderr_tail: String::new(),
        findings: "[]".into(),
        leakage: g.model == "m1" && g.language == "kk",
        network: None,
        requests: None,
        requests_total: None,
        requests_denied: None,
        model_cache_blake3: None,
        gpus: None,
    }
}

fn grade(x: &Execution, r: Option<f64>) -> Grade {
    GradeV2 {
        competition: x.competition.clone(),
        format: x.format,
        code_blake3: x.code_blake3,
        metric: "rmse".into(),
        direction: "minimize".into(),
        outcome: x.outcome,
        valid: r.is_some(),
        score: r.map(|r| 1.0 / r),
        reason: None,
        baseline_score: Some(1.0),
        baseline_run: None,
        r_p: Some(r.unwrap_or(0.0)),
        automl_score: None,
        automl_run: None,
        r_p_automl: None,
        role: None,
        in_expected_range: None,
        answers_blake3: ml2b::store::Hash([0; 32]),
    }
    .into()
}

/// The fixture store: generate, execute and grade logs, the regrade in a later segment.
pub(crate) fn fixture() -> Workspace {
    let ws = Workspace::new();
    let store = ws.store();
    let (mut gens, mut execs, mut grades) = (Vec::new(), Vec::new(), Vec::new());
    let mut regrade = None;
    for run in runs() {
        let g = generation(&run);
        let x = execution(&g, run.4);
        let ge = event(&(g.code_blake3, "g"), vec![], g);
        let xe = event(&(&x.code_blake3, "x"), vec![ge.id], x.clone());
        grades.push(event(&"grade", vec![xe.id], grade(&x, run.4)));
        if run.0 == "m1" && run.1 == "ames-housing" && run.2 == "fr" && run.3 == 1 {
            regrade = Some(event(&"regrade", vec![xe.id], grade(&x, Some(0.6))));
        }
        gens.push(ge);
        execs.push(xe);
    }
    commit(&store, gens);
    commit(&store, execs);
    commit(&store, grades);
    commit(&store, vec![regrade.unwrap()]);
    ws
}

fn analyze(ws: &Workspace) -> serde_json::Value {
    let out = ws
        .ml2b()
        .args(["--json", "stage", "analyze", "--root", ROOT])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn query(ws: &Workspace, sql: &str) -> Vec<serde_json::Value> {
    let out = ws
        .ml2b()
        .args(["--json", "query", "--root", ROOT, sql])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<serde_json::Value>>(&out.stdout).unwrap()
}

fn num(row: &serde_json::Value, k: &str) -> f64 {
    row[k].as_f64().unwrap_or_else(|| panic!("{k} in {row}"))
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-12, "{a} != {b}");
}

#[test]
fn every_table_is_computed_once_per_set_of_log_heads() {
    let ws = fixture();
    let first = analyze(&ws);
    let tables = ml2b::query::catalog::TABLES.len();
    assert_eq!(first["summary"]["planned"], tables);
    assert_eq!(first["summary"]["skipped"], 0);
    let again = analyze(&ws);
    assert_eq!(again["summary"]["skipped"], tables, "{again}");
    // A new event upstream moves a head: every table is recomputed.
    let g = generation(&("m3", "ames-housing", "en", 0, None));
    commit(&ws.store(), vec![event(&"m3", vec![], g)]);
    let third = analyze(&ws);
    assert_eq!(third["summary"]["skipped"], 0, "{third}");
}

/// In every log the latest event per key wins: a regenerated sample replaces the first
/// one, a re-execution of its code replaces the first run, and that run's grade counts.
#[test]
fn the_latest_event_wins_in_every_log() {
    let ws = fixture();
    let store = ws.store();
    let mut g = generation(&("m2", "ames-housing", "en", 0, Some(1.0)));
    g.code_blake3 = blake3::hash(b"regenerated").into();
    let ge = event(&"regenerated", vec![], g.clone());
    let failed = execution(&g, None);
    let xe1 = event(&"first run", vec![ge.id], failed.clone());
    let xe2 = event(&"second run", vec![ge.id], execution(&g, Some(0.5)));
    let graded = (
        event(&"first grade", vec![xe1.id], grade(&failed, None)),
        event(&"second grade", vec![xe2.id], grade(&xe2.body, Some(0.5))),
    );
    commit(&store, vec![ge.clone()]);
    commit(&store, vec![xe1]);
    commit(&store, vec![xe2.clone()]);
    commit(&store, vec![graded.0, graded.1]);
    let rows = query(
        &ws,
        "SELECT generation_id, code_blake3, execution_id, outcome, r_p, (SELECT count(*) FROM runs) AS n \
         FROM runs WHERE model = 'm2' AND competition = 'ames-housing' AND language = 'en' AND seed = 0",
    );
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row["generation_id"], ge.id.to_hex().as_str());
    assert_eq!(row["code_blake3"], g.code_blake3.to_hex().as_str());
    assert_eq!(row["execution_id"], xe2.id.to_hex().as_str());
    assert_eq!(row["outcome"], "ok");
    close(num(row, "r_p"), 0.5);
    assert_eq!(
        row["n"],
        runs().len(),
        "one row per sample, the regenerated one included"
    );
}

#[test]
fn aup_and_pass_rate_match_the_hand_computed_values() {
    let ws = fixture();
    let rows = query(&ws, &format!("{ROOT}/queries/aup.sql"));
    let by: BTreeMap<(String, String), &serde_json::Value> = rows
        .iter()
        .map(|r| {
            (
                (
                    r["model"].as_str().unwrap().into(),
                    r["language"].as_str().unwrap().into(),
                ),
                r,
            )
        })
        .collect();
    let m1 = |l: &str| by[&("m1".to_string(), l.to_string())];
    // en: cells 1.0, 1.1, 0.9 -> mean(min(r, 1)) = 2.9 / 3; win rate 2 of 3.
    close(num(m1("en"), "aup"), 2.9 / 3.0);
    close(num(m1("en"), "win_rate"), 200.0 / 3.0);
    close(num(m1("en"), "pass_rate"), 100.0);
    // fr: 0.7 (after the regrade), 0.9, 0.9.
    close(num(m1("fr"), "aup"), 2.5 / 3.0);
    // kk: 0.25, 0.2 (a missing seed counts 0), 0.3; 4 of 6 runs valid.
    close(num(m1("kk"), "aup"), 0.75 / 3.0);
    close(num(m1("kk"), "pass_rate"), 400.0 / 6.0);
    close(num(m1("Avg."), "aup"), (2.9 / 3.0 + 2.5 / 3.0 + 0.75 / 3.0) / 3.0);
    let m2kk = by[&("m2".to_string(), "kk".to_string())];
    close(num(m2kk, "aup"), 2.0 / 3.0);
    close(num(m2kk, "pass_rate"), 400.0 / 6.0);
}

#[test]
fn variance_splits_within_and_between_tiers() {
    let ws = fixture();
    let rows = query(
        &ws,
        "SELECT * FROM task_variance WHERE model = 'm1' AND competition = 'ames-housing'",
    );
    // r: en 1.0, fr 0.7 (high tier), kk 0.25 (low tier); mean 0.65.
    close(num(&rows[0], "var_total"), 0.095);
    close(num(&rows[0], "var_within"), 0.015);
    close(num(&rows[0], "var_between"), 0.08);
}

#[test]
fn every_table_snapshot() {
    let ws = fixture();
    analyze(&ws);
    for q in ml2b::query::catalog::TABLES {
        let out = ws
            .ml2b()
            .args(["query", "--root", ROOT, "--format", "csv"])
            .arg(format!("{ROOT}/queries/{}.sql", q.name))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            q.name,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_snapshot!(q.name, String::from_utf8_lossy(&out.stdout));
    }
}

#[test]
fn report_writes_every_format_and_is_reproducible() {
    let ws = fixture();
    let out_dir = |n: &str| ws.dir.path().join(n);
    for n in ["a", "b"] {
        let out = ws
            .ml2b()
            .args(["report", "--root", ROOT, "--out"])
            .arg(out_dir(n))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let files: Vec<String> = std::fs::read_dir(out_dir("a"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for want in [
        "index.html",
        "aup_pr.tex",
        "aup.md",
        "rp_matrix.csv",
        "profiles.svg",
        "pass_rate_by_tier.svg",
        "heatmap_m1_modular.svg",
        "SOURCES.txt",
    ] {
        assert!(files.iter().any(|f| f == want), "{want} missing from {files:?}");
    }
    for f in &files {
        let a = std::fs::read(out_dir("a").join(f)).unwrap();
        let b = std::fs::read(out_dir("b").join(f)).unwrap();
        assert!(a == b, "{f} differs between two reports of one store");
    }
    let tex = std::fs::read_to_string(out_dir("a").join("aup_pr.tex")).unwrap();
    assert!(
        tex.contains("\\toprule") && tex.contains("0.967 / 100.0"),
        "{tex}"
    );
}
