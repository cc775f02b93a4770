//! `ml2b trajectory [SEARCH]`: the react agent's searches, and one search step by step.
//!
//! Without SEARCH: one line per search of the `trajectory` log (its key, the unit's
//! coordinates, steps, error observations, validations, the best validation score, and how
//! it ended: `submitted` or `budget`); `--json` gives the rows. With SEARCH (a search key —
//! `generate.unit_key` — or a unique prefix of at least 8 hex digits): every step with the
//! model's thought, the tool call and its arguments, and the observation as the model was
//! shown it; `--json` gives the steps with the model's message and the observation as
//! stored (objects of the store), tokens, cost and recorded seconds. Where the log holds
//! a step twice (a search re-derived after its generate event was lost), the later event
//! wins.

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::{Value, json};

use super::ExitStatus;
use super::journal::resolve;
use crate::events::TrajectoryStep;
use crate::log::{Event, EventBody, StageLog};
use crate::settings::{GlobalSettings, TrajectorySettings};
use crate::terminal::{Column, table};

/// A search's steps, in step order.
type Steps = Vec<TrajectoryStep>;

/// Runs `ml2b trajectory`.
pub(super) fn trajectory(settings: &GlobalSettings, args: &TrajectorySettings) -> anyhow::Result<ExitStatus> {
    let searches = read(settings)?;
    let Some(wanted) = &args.search else {
        return list(settings, &searches);
    };
    let key = resolve(&searches, wanted, "trajectory")?;
    let steps = &searches[&key];
    if settings.printer.json {
        settings.printer.json(&export(settings, &key, steps)?)?;
    } else {
        write_text(settings, &key, steps)?;
    }
    Ok(ExitStatus::Success)
}

/// Every search's steps by search key; the later event of a step wins.
fn read(settings: &GlobalSettings) -> anyhow::Result<BTreeMap<String, Steps>> {
    let log = StageLog::new(&settings.store, TrajectoryStep::STAGE)?;
    let mut searches: BTreeMap<String, BTreeMap<u32, TrajectoryStep>> = BTreeMap::new();
    for e in log.read_events::<TrajectoryStep>(0)? {
        let Event { body, .. } = e;
        searches
            .entry(body.search.to_hex())
            .or_default()
            .insert(body.step, body);
    }
    Ok(searches
        .into_iter()
        .map(|(k, steps)| (k, steps.into_values().collect()))
        .collect())
}

/// A search's line. Its score is the last validation's that scored (the file a search
/// without a submit ends with): which is best depends on the competition's direction, which
/// this command does not read (`queries/agents.sql` gives the best).
fn summary(key: &str, steps: &Steps) -> Value {
    let first = &steps[0];
    let last_score = steps.iter().rev().find_map(|s| s.validation_score);
    json!({
        "search": key, "competition": first.competition, "language": first.language,
        "model": first.model, "format": first.format, "seed": first.seed,
        "protocol": first.protocol, "steps": steps.len(),
        "errors": steps.iter().filter(|s| s.is_error).count(),
        "validations": steps.iter().filter(|s| s.tool.as_deref() == Some("validate")).count(),
        "last_validation_score": last_score,
        "ended": if steps.iter().any(|s| s.submitted) { "submitted" } else { "budget" },
    })
}

fn list(settings: &GlobalSettings, searches: &BTreeMap<String, Steps>) -> anyhow::Result<ExitStatus> {
    let rows: Vec<Value> = searches.iter().map(|(k, steps)| summary(k, steps)).collect();
    if settings.printer.json {
        settings.printer.json(&rows)?;
        return Ok(ExitStatus::Success);
    }
    let mut out = settings.printer.stdout();
    let header = [
        "search",
        "competition/language/model/format/seed",
        "protocol",
        "steps",
        "errors",
        "validations",
        "last score",
        "ended",
    ];
    let mut lines = vec![header.map(String::from).to_vec()];
    lines.extend(rows.iter().map(search_line));
    write!(out, "{}", table(&SEARCHES, &lines))?;
    Ok(ExitStatus::Success)
}

/// The columns of the list of searches (the last, `ended`, is free).
const SEARCHES: [Column; 7] = [
    Column::left(12).gap(2),
    Column::left(40).gap(2),
    Column::left(8).gap(2),
    Column::right(5).gap(2),
    Column::right(6).gap(2),
    Column::right(11).gap(2),
    Column::right(10).gap(2),
];

fn search_line(r: &Value) -> Vec<String> {
    let score = r["last_validation_score"]
        .as_f64()
        .map_or("-".to_string(), |m| m.to_string());
    let n = |k: &str| r[k].to_string();
    vec![
        r["search"].as_str().unwrap_or_default()[..12].to_string(),
        unit(r),
        r["protocol"].as_str().unwrap_or_default().to_string(),
        n("steps"),
        n("errors"),
        n("validations"),
        score,
        r["ended"].as_str().unwrap_or_default().to_string(),
    ]
}

/// `competition/language/model/format/seed`.
fn unit(r: &Value) -> String {
    let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
    format!(
        "{}/{}/{}/{}/{}",
        s("competition"),
        s("language"),
        s("model"),
        s("format"),
        r["seed"]
    )
}

/// A stored JSON object.
fn object(settings: &GlobalSettings, hash: &crate::store::Hash) -> anyhow::Result<Value> {
    let bytes = settings.store.objects().get(hash)?;
    Ok(serde_json::from_slice(&bytes)?)
}

/// The search with every step, its message and its observation.
fn export(settings: &GlobalSettings, key: &str, steps: &Steps) -> anyhow::Result<Value> {
    let mut out = Vec::new();
    for s in steps {
        out.push(json!({
            "step": s.step, "thought": s.thought, "tool": s.tool, "arguments": s.arguments,
            "is_error": s.is_error, "extra_calls": s.extra_calls,
            "validation_score": s.validation_score, "submitted": s.submitted,
            "message": object(settings, &s.message_blake3)?,
            "observation": object(settings, &s.observation_blake3)?,
            "input_tokens": s.input_tokens, "output_tokens": s.output_tokens,
            "cost_usd": s.cost_usd, "http_attempts": s.http_attempts,
            "answer_seconds": s.answer_seconds, "tool_seconds": s.tool_seconds,
            "elapsed_seconds": s.elapsed_seconds,
        }));
    }
    let mut search = summary(key, steps);
    search["trajectory"] = Value::Array(out);
    Ok(search)
}

/// The search as text: a header, then each step's thought, call and observation.
fn write_text(settings: &GlobalSettings, key: &str, steps: &Steps) -> anyhow::Result<()> {
    let head = summary(key, steps);
    let mut out = settings.printer.stdout();
    writeln!(
        out,
        "search {key}\n{}  protocol {}  {} steps, ended: {}",
        unit(&head),
        head["protocol"].as_str().unwrap_or_default(),
        head["steps"],
        head["ended"].as_str().unwrap_or_default(),
    )?;
    for s in steps {
        let observation = object(settings, &s.observation_blake3)?;
        writeln!(out, "\n## step {}", s.step)?;
        writeln!(out, "{}", indented("thought", &s.thought))?;
        let call = match (&s.tool, &s.arguments) {
            (Some(tool), Some(args)) => format!("{tool} {args}"),
            (Some(tool), None) => tool.clone(),
            (None, _) => "(none)".to_string(),
        };
        writeln!(out, "{}", indented("call", &call))?;
        let shown = observation["shown"].as_str().unwrap_or_default();
        writeln!(out, "{}", indented("observation", shown))?;
    }
    Ok(())
}

/// `label: text` on one line, or `label:` and the text indented below when it has several.
fn indented(label: &str, text: &str) -> String {
    let text = text.trim_end();
    if !text.contains('\n') {
        return format!("{label}: {text}");
    }
    let body: Vec<String> = text
        .lines()
        .map(|l| format!("    {l}").trim_end().to_string())
        .collect();
    format!("{label}:\n{}", body.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::indented;

    #[test]
    fn one_line_stays_on_the_label_and_several_are_indented() {
        assert_eq!(indented("call", "submit {}\n"), "call: submit {}");
        assert_eq!(indented("observation", "a\n\nb"), "observation:\n    a\n\n    b");
    }
}
