//! `ml2b show [ID] [--raw KIND] [--json]`: one event and everything it names, or the latest
//! runs.
//!
//! With ID (an event id, unit key or unique hex prefix of one, from any log): the record of
//! [`crate::record`] as text, as JSON with `--json`, or one artefact's bytes with `--raw`.
//! Without ID: the latest runs (`--model`, `--language`, `--competition`, `--outcome`,
//! `--limit`), one line each, newest first; `--json` gives the rows. Reads only: a record is
//! index lookups and the rows they find ([`crate::record`]; the one thing written is the row
//! index of segments no index file covers yet, a cache), the list SQL over the logs.
//!
//! What a model or a run wrote reaches the terminal with its control characters shown,
//! not sent ([`visible`]): the record's text, the rows, and `--raw` when stdout is a
//! terminal (redirected, `--raw` writes the bytes as stored).

use std::io::{IsTerminal, Write};

use super::ExitStatus;
use super::query::{optional_bench, require_store};
use crate::record::{Records, RunRow};
use crate::settings::{GlobalSettings, ShowSettings};
use crate::terminal::{Column, table, visible};

/// Runs `ml2b show`.
pub(super) fn show(settings: &GlobalSettings, args: &ShowSettings) -> anyhow::Result<ExitStatus> {
    require_store(&settings.store)?;
    let bench = optional_bench(&args.root)?;
    super::runtime()?.block_on(async {
        let records = Records::open(settings.store.clone(), bench).await?;
        let Some(id) = &args.id else {
            list(settings, &records.latest_runs(&args.filters).await?)?;
            return Ok(ExitStatus::Success);
        };
        let record = records.get(id).await?;
        if let Some(kind) = args.raw {
            let bytes = records.artefact(&record, kind)?;
            let mut stdout = settings.printer.stdout();
            if stdout.is_terminal() {
                stdout.write_all(visible(&String::from_utf8_lossy(&bytes)).as_bytes())?;
            } else {
                stdout.write_all(&bytes)?;
            }
            return Ok(ExitStatus::Success);
        }
        super::print_report(settings, &record)?;
        Ok(lacking(settings, &record))
    })
}

/// A record whose objects the store lacks is shown, and the command fails.
fn lacking(settings: &GlobalSettings, record: &crate::record::Record) -> ExitStatus {
    if record.problems.is_empty() {
        return ExitStatus::Success;
    }
    settings.printer.error(format!(
        "the store lacks {} object(s) this event names (listed above; `ml2b verify` checks the whole store)",
        record.problems.len()
    ));
    ExitStatus::Failure
}

fn list(settings: &GlobalSettings, rows: &[RunRow]) -> anyhow::Result<()> {
    if settings.printer.json {
        return settings.printer.json(&rows);
    }
    let mut out = settings.printer.stdout();
    if rows.is_empty() {
        settings.printer.info("no runs match");
        return Ok(());
    }
    let header = [
        "run",
        "model",
        "competition",
        "language",
        "format",
        "seed",
        "outcome",
        "score",
        "r_p",
    ];
    let mut lines = vec![header.map(String::from).to_vec()];
    lines.extend(rows.iter().map(run_line));
    write!(out, "{}", table(&RUNS, &lines))?;
    Ok(())
}

/// The columns of the list of runs.
const RUNS: [Column; 9] = [
    Column::left(12).gap(2),
    Column::left(20).gap(2),
    Column::left(20).gap(2),
    Column::left(8).gap(2),
    Column::left(8).gap(2),
    Column::right(4).gap(2),
    Column::left(14).gap(2),
    Column::right(10).gap(2),
    Column::right(6).gap(0),
];

fn run_line(r: &RunRow) -> Vec<String> {
    let num = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4}"));
    vec![
        r.generation_id.short(),
        visible(&r.model).into_owned(),
        visible(&r.competition).into_owned(),
        visible(&r.language).into_owned(),
        visible(&r.format).into_owned(),
        r.seed.to_string(),
        visible(&r.outcome).into_owned(),
        num(r.score),
        num(r.r_p),
    ]
}
