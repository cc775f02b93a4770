//! `ml2b baselines`: runs the baselines of the chosen competitions and checks their scores.
//!
//! generate (each of `--model`, default the reference solution and AutoGluon, English
//! only: baseline code does not depend on the language) → execute (`--backend`, `-j`) →
//! grade, then one line per baseline run: competition, role, model, format, seed, outcome,
//! score, the manifest's recorded score and expected range, and whether the run is inside
//! it. Every stage skips what the store already holds, so a re-run only prints. Exit 1 when
//! a baseline run failed, graded invalid or scored outside its expected range (the
//! competition or the environment changed): loud, because r_p everywhere depends on it.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use serde::Serialize;

use super::{ExitStatus, ProgressBars};
use crate::competition::Benchmark;
use crate::events::{Execution, Generation, Grade};
use crate::log::{EventBody, StageLog};
use crate::manifest::competition::BaselineRole;
use crate::pipeline::Pipeline;
use crate::settings::{BaselinesSettings, GlobalSettings};
use crate::terminal::Column;

/// One baseline run, as printed.
#[derive(Debug, Serialize)]
struct Line {
    competition: String,
    role: String,
    model: String,
    format: String,
    seed: u32,
    outcome: String,
    score: Option<f64>,
    recorded: Option<f64>,
    expected: Option<[f64; 2]>,
    /// `ok`, `outside` (the expected range), `invalid`, `failed`, `unchecked` (no range).
    status: String,
    execution: String,
}

/// Runs `ml2b baselines`.
pub(super) fn baselines(
    settings: &GlobalSettings,
    baselines: &BaselinesSettings,
) -> anyhow::Result<ExitStatus> {
    let progress = ProgressBars::new(&settings.printer);
    let pipeline = Pipeline::new(&settings.store, &progress);
    if baselines.benchmark.preflight {
        pipeline.preflight(&baselines.benchmark)?;
    }
    let summaries = pipeline.benchmark(&baselines.benchmark)?;
    let mut failed = 0;
    for s in &summaries {
        for (label, error) in &s.failed {
            settings
                .printer
                .warn(format!("{} {label} failed: {error}", s.stage));
        }
        failed += s.failed.len();
    }
    let bench = pipeline.bench(&baselines.benchmark.selection.root)?;
    let lines = lines(settings, &bench, baselines)?;
    let bad = lines
        .iter()
        .filter(|l| l.status != "ok" && l.status != "unchecked")
        .count();
    for l in lines.iter().filter(|l| l.status == "outside") {
        settings.printer.warn(format!(
            "{} {} ({}): score {} is outside the expected range {:?} (recorded {}): the \
             competition or the environment changed",
            l.competition,
            l.role,
            l.model,
            l.score.unwrap_or(f64::NAN),
            l.expected.unwrap_or([f64::NAN; 2]),
            l.recorded.unwrap_or(f64::NAN),
        ));
    }
    if settings.printer.json {
        settings.printer.json(&lines)?;
    } else {
        write!(settings.printer.stdout(), "{}", table(&lines))?;
    }
    Ok(if failed == 0 && bad == 0 {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

/// The baseline runs of the selection: for each (competition, model, seed) generated in
/// English, its latest execution and that execution's latest grade.
fn lines(settings: &GlobalSettings, bench: &Benchmark, s: &BaselinesSettings) -> anyhow::Result<Vec<Line>> {
    let store = &settings.store;
    let s = &s.benchmark;
    let selected = bench
        .select(&s.selection.competitions)
        .map_err(super::InputError)?;
    // Latest event per key (log order): executions by (competition, format, code), grades
    // by execution, generations by (competition, model, seed), which also sorts them.
    let mut executions = HashMap::new();
    for e in StageLog::new(store, Execution::STAGE)?.read_events::<Execution>(0)? {
        let b = &e.body;
        executions.insert((b.competition.clone(), b.format, b.code_blake3), e);
    }
    let mut grades = HashMap::new();
    for g in StageLog::new(store, Grade::STAGE)?.read_events::<Grade>(0)? {
        if let Some(x) = g.upstream.first() {
            grades.insert(*x, g.body);
        }
    }
    let mut generations = BTreeMap::new();
    for g in StageLog::new(store, Generation::STAGE)?.read_events::<Generation>(0)? {
        let b = g.body;
        let wanted = b.language == "en"
            && b.format == crate::events::Format::Modular
            && b.seed < s.seeds.max(1)
            && s.entries.iter().any(|e| e.model == b.model)
            && selected.iter().any(|c| c.id() == b.competition);
        if wanted {
            generations.insert((b.competition.clone(), b.model.clone(), b.seed), b);
        }
    }
    let mut out = Vec::new();
    for g in generations.into_values() {
        let Some(e) = executions.get(&(g.competition.clone(), g.format, g.code_blake3)) else {
            continue;
        };
        let (x, id) = (&e.body, &e.id);
        let grade = grades.get(id);
        let role = grade.and_then(|gr| gr.role.clone()).unwrap_or_else(|| "-".into());
        let c = selected
            .iter()
            .find(|c| c.id() == g.competition)
            .expect("selected above");
        let recorded = BaselineRole::from_name(&role)
            .and_then(|r| c.manifest.baseline.as_ref().and_then(|b| b.recorded(r)));
        let status = match grade {
            _ if x.outcome != crate::events::Outcome::Ok => "failed",
            Some(gr) if !gr.valid => "invalid",
            Some(gr) => match gr.in_expected_range {
                Some(true) => "ok",
                Some(false) => "outside",
                None => "unchecked",
            },
            None => "failed",
        };
        out.push(Line {
            competition: g.competition,
            role,
            model: g.model,
            format: g.format.to_string(),
            seed: g.seed,
            outcome: x.outcome.to_string(),
            score: grade.and_then(|gr| gr.score),
            recorded: recorded.as_ref().map(|r| r.score),
            expected: recorded.map(|r| r.expected),
            status: status.into(),
            execution: id.to_hex(),
        });
    }
    Ok(out)
}

/// The columns of the table (the last, the status, is free).
const COLUMNS: [Column; 8] = [
    Column::left(26),
    Column::left(9),
    Column::left(12),
    Column::right(4),
    Column::left(20),
    Column::right(12),
    Column::right(12),
    Column::right(27).gap(2),
];

fn table(lines: &[Line]) -> String {
    let header = [
        "competition",
        "role",
        "model",
        "seed",
        "outcome",
        "score",
        "recorded",
        "expected",
        "status",
    ];
    let mut rows = vec![header.map(String::from).to_vec()];
    rows.extend(lines.iter().map(row));
    crate::terminal::table(&COLUMNS, &rows)
}

fn row(l: &Line) -> Vec<String> {
    let num = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.6}"));
    let range = l
        .expected
        .map_or("-".to_string(), |[lo, hi]| format!("[{lo:.6}, {hi:.6}]"));
    vec![
        l.competition.to_string(),
        l.role.to_string(),
        l.model.to_string(),
        l.seed.to_string(),
        l.outcome.to_string(),
        num(l.score),
        num(l.recorded),
        range,
        l.status.to_string(),
    ]
}
