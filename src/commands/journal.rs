//! `ml2b journal [SEARCH] [--out DIR]`: the aide agent's searches, and one search as AIDE's
//! own `journal.json`.
//!
//! Without SEARCH: one line per search of the `journal` log (its key, the unit's
//! coordinates, attempts, buggy attempts, the best step and metric); `--json` gives the rows.
//! With SEARCH (a search key — `generate.unit_key` — or a unique prefix of at least 8 hex
//! digits): the search in the format of WecoAI/aideml's `serialize.dump_json(journal)`,
//! `{"nodes": [...], "node2parent": {...}, "__version": "2"}`, compact, each node with
//! AIDE's fields (`code`, `plan`, `step`, `id`, `ctime`, `parent: null`, `children: []`,
//! `_term_out`, `exec_time`, `exc_type`, `exc_info`, `exc_stack`, `analysis`, `metric`
//! `{value, maximize}` — both null for a buggy node, AIDE's `WorstMetricValue` —,
//! `is_buggy`), so AIDE's tools read it. On stdout, or with `--out DIR` as AIDE's
//! `save_run` lays it out: `DIR/journal.json` and `DIR/best_solution.py`.

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::{Value, json};

use super::{ExitStatus, InputError};
use crate::events::Attempt;
use crate::log::{Event, EventBody, StageLog};
use crate::settings::{GlobalSettings, JournalSettings};
use crate::stages::generate::aide::policy::{Node, submitted};
use crate::terminal::{Column, table};

/// Runs `ml2b journal`.
pub(super) fn journal(settings: &GlobalSettings, args: &JournalSettings) -> anyhow::Result<ExitStatus> {
    let searches = read(settings)?;
    let Some(wanted) = &args.search else {
        return list(settings, &searches);
    };
    let key = resolve(&searches, wanted, "journal")?;
    let attempts = &searches[&key];
    let dump = aide_json(settings, attempts)?;
    match &args.out {
        None => writeln!(settings.printer.stdout(), "{dump}")?,
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
            write(&dir.join("journal.json"), dump.to_string().as_bytes())?;
            let best = chosen(attempts);
            write(
                &dir.join("best_solution.py"),
                &code(settings, &attempts[best].body)?,
            )?;
            settings.printer.info(format!(
                "wrote journal.json and best_solution.py (step {}) to {}",
                attempts[best].body.step,
                dir.display()
            ));
        }
    }
    Ok(ExitStatus::Success)
}

/// Every search's attempts, in step order, by search key.
fn read(settings: &GlobalSettings) -> anyhow::Result<BTreeMap<String, Vec<Event<Attempt>>>> {
    let log = StageLog::new(&settings.store, Attempt::STAGE)?;
    let mut searches: BTreeMap<String, Vec<Event<Attempt>>> = BTreeMap::new();
    for e in log.read_events::<Attempt>(0)? {
        searches.entry(e.body.search.to_hex()).or_default().push(e);
    }
    for attempts in searches.values_mut() {
        attempts.sort_by_key(|e| e.body.step);
    }
    Ok(searches)
}

/// The one search key of `searches` (the searches of `ml2b <command>`) that `wanted` names
/// (whole, or a prefix of 8 or more hex digits).
pub(super) fn resolve<V>(
    searches: &BTreeMap<String, V>,
    wanted: &str,
    command: &str,
) -> Result<String, InputError> {
    let wanted = wanted.to_ascii_lowercase();
    if wanted.len() < 8 || !wanted.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(InputError(format!(
            "{wanted}: a search is named by its key or a prefix of at least 8 hex digits (see `ml2b {command}`)"
        )));
    }
    let found: Vec<&String> = searches.keys().filter(|k| k.starts_with(&wanted)).collect();
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(InputError(format!(
            "{wanted}: no search of the {command} has this key"
        ))),
        many => Err(InputError(format!(
            "{wanted}: {} searches have keys starting so",
            many.len()
        ))),
    }
}

/// The attempt the search submitted: the best good one, else the last.
fn chosen(attempts: &[Event<Attempt>]) -> usize {
    let nodes: Vec<Node> = attempts
        .iter()
        .map(|e| Node {
            parent: None,
            is_buggy: e.body.is_buggy,
            metric: e.body.metric,
        })
        .collect();
    let maximize = attempts.first().is_none_or(|e| e.body.maximize);
    submitted(&nodes, maximize).expect("a search has attempts")
}

fn list(
    settings: &GlobalSettings,
    searches: &BTreeMap<String, Vec<Event<Attempt>>>,
) -> anyhow::Result<ExitStatus> {
    let rows: Vec<Value> = searches
        .iter()
        .map(|(key, attempts)| {
            let first = &attempts[0].body;
            let best = &attempts[chosen(attempts)].body;
            json!({
                "search": key, "competition": first.competition, "language": first.language,
                "model": first.model, "format": first.format, "seed": first.seed,
                "attempts": attempts.len(), "buggy": attempts.iter().filter(|e| e.body.is_buggy).count(),
                "best_step": best.step, "best_metric": best.metric,
            })
        })
        .collect();
    if settings.printer.json {
        settings.printer.json(&rows)?;
        return Ok(ExitStatus::Success);
    }
    let header = [
        "search",
        "competition/language/model/format/seed",
        "attempts",
        "buggy",
        "best step",
        "metric",
    ];
    let mut lines = vec![header.map(String::from).to_vec()];
    lines.extend(rows.iter().map(|r| {
        let text = |k: &str| r[k].as_str().unwrap_or_default().to_string();
        vec![
            text("search")[..12].to_string(),
            [
                text("competition"),
                text("language"),
                text("model"),
                text("format"),
                r["seed"].to_string(),
            ]
            .join("/"),
            r["attempts"].to_string(),
            r["buggy"].to_string(),
            r["best_step"].to_string(),
            r["best_metric"]
                .as_f64()
                .map_or("-".to_string(), |m| m.to_string()),
        ]
    }));
    write!(settings.printer.stdout(), "{}", table(&SEARCHES, &lines))?;
    Ok(ExitStatus::Success)
}

/// The list of searches: id, unit, attempts, buggy ones, best step, then the best metric.
const SEARCHES: [Column; 5] = [
    Column::left(12).gap(2),
    Column::left(40).gap(2),
    Column::right(8).gap(2),
    Column::right(5).gap(2),
    Column::right(9).gap(2),
];

/// The search as AIDE's `journal.json`.
fn aide_json(settings: &GlobalSettings, attempts: &[Event<Attempt>]) -> anyhow::Result<Value> {
    let mut nodes = Vec::new();
    let mut node2parent = serde_json::Map::new();
    for e in attempts {
        let a = &e.body;
        let code = String::from_utf8_lossy(&code(settings, a)?).into_owned();
        let (value, maximize) = match (a.is_buggy, a.metric) {
            (false, Some(m)) => (json!(m), json!(a.maximize)),
            _ => (Value::Null, Value::Null),
        };
        nodes.push(json!({
            "code": code, "plan": a.plan, "step": a.step, "id": a.node,
            "ctime": e.provenance.created_at.timestamp_micros() as f64 / 1e6,
            "parent": null, "children": [],
            "_term_out": [a.term_out], "exec_time": a.exec_seconds,
            "exc_type": a.exc_type, "exc_info": null, "exc_stack": null,
            "analysis": a.analysis, "metric": {"value": value, "maximize": maximize},
            "is_buggy": a.is_buggy,
        }));
        if let Some(parent) = &a.parent {
            node2parent.insert(a.node.clone(), json!(parent));
        }
    }
    Ok(json!({"nodes": nodes, "node2parent": node2parent, "__version": "2"}))
}

/// An attempt's code, from the store's objects.
fn code(settings: &GlobalSettings, a: &Attempt) -> anyhow::Result<Vec<u8>> {
    Ok(settings.store.objects().get(&a.code_blake3)?)
}

fn write(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::store::write_atomic(path, bytes)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}
