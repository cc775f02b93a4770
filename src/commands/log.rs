//! `ml2b log [--stage S]`: the committed segments of each stage log, in order. Where a
//! segment was written by a Slurm task (`--engine slurm`), a last column says where it ran:
//! its host and Slurm job_task; `--json` always has `host` and `slurm` (null outside Slurm).

use std::io::Write;

use anyhow::Context;
use chrono::SecondsFormat;

use super::{ExitStatus, InputError};
use crate::log::segment::SegmentMeta;
use crate::log::{StageLog, run_hash, stages};
use crate::settings::{GlobalSettings, Printer};
use crate::store::Hash;
use crate::terminal::{Column, table};

#[derive(serde::Serialize)]
struct SegmentRow {
    version: u64,
    hash: Hash,
    #[serde(flatten)]
    meta: SegmentMeta,
}

#[derive(serde::Serialize)]
struct StageRows {
    stage: String,
    head: Option<Hash>,
    segments: Vec<SegmentRow>,
}

/// Runs `ml2b log`.
pub(super) fn log(settings: &GlobalSettings, only: Option<&str>) -> anyhow::Result<ExitStatus> {
    let names = match only {
        Some(s) => {
            crate::log::stage_log::check_stage_name(s).map_err(|e| InputError(e.to_string()))?;
            vec![s.to_string()]
        }
        None => stages(&settings.store)?,
    };
    let logs = names
        .iter()
        .map(|n| read_stage(settings, n))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let heads: Vec<_> = logs.iter().map(|l| (l.stage.clone(), l.head)).collect();
    if settings.printer.json {
        let run = run_hash(&heads);
        settings
            .printer
            .json(&serde_json::json!({ "stages": logs, "run": run }))?;
    } else {
        print_table(&logs, &settings.printer)?;
        if only.is_none() {
            writeln!(settings.printer.stdout(), "run {}", run_hash(&heads))?;
        }
    }
    Ok(ExitStatus::Success)
}

fn read_stage(settings: &GlobalSettings, stage: &str) -> anyhow::Result<StageRows> {
    let log = StageLog::new(&settings.store, stage)?;
    let mut segments = Vec::new();
    for r in log.list()? {
        let (seg, meta) = log
            .read_with_meta(&r)
            .with_context(|| format!("reading the log of stage `{stage}`"))?;
        segments.push(SegmentRow {
            version: r.version,
            hash: seg.hash,
            meta,
        });
    }
    let head = segments.last().map(|s| s.hash);
    Ok(StageRows {
        stage: stage.to_string(),
        head,
        segments,
    })
}

/// One line per segment; a last column `slurm` (job_task, or `-`) when a segment listed
/// was written by a Slurm task.
fn print_table(logs: &[StageRows], printer: &Printer) -> std::io::Result<()> {
    let slurm = logs
        .iter()
        .flat_map(|l| &l.segments)
        .any(|s| s.meta.slurm.is_some());
    let committed = if slurm {
        format!("committed{:<11}  ran on", "")
    } else {
        "committed".to_string()
    };
    let header = ["stage", "version", "segment", "parent", "events"].map(String::from);
    let mut lines = vec![[header.to_vec(), vec![committed]].concat()];
    for l in logs {
        for s in &l.segments {
            let parent = s.meta.parent.map_or_else(|| "-".to_string(), |p| p.short());
            let time = s.meta.created_at.to_rfc3339_opts(SecondsFormat::Secs, true);
            let ran_on = if slurm { ran_on(&s.meta) } else { String::new() };
            lines.push(vec![
                l.stage.to_string(),
                s.version.to_string(),
                s.hash.short(),
                parent,
                s.meta.events.to_string(),
                format!("{time}{ran_on}"),
            ]);
        }
    }
    write!(printer.stdout(), "{}", table(&SEGMENTS, &lines))
}

/// The columns of the list of segments (the last, `committed`, is free).
const SEGMENTS: [Column; 5] = [
    Column::left(20),
    Column::right(7).gap(2),
    Column::left(12).gap(2),
    Column::left(12).gap(2),
    Column::right(8).gap(2),
];

/// `  HOST slurm JOB_TASK`, or `  HOST` for a segment written outside Slurm.
fn ran_on(meta: &SegmentMeta) -> String {
    match &meta.slurm {
        Some(task) => format!("  {} slurm {task}", meta.host),
        None => format!("  {}", meta.host),
    }
}
