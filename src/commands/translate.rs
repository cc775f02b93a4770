//! `ml2b translate --model M --back-model B [--competition …] [--language …]`: the task
//! texts the selected competitions lack, made by `M` and translated back into English by
//! `B` (stage `translate`, both legs; `stages::translate`).
//!
//! Prints, per leg, the run summary (what the model's budget did) and the files written
//! (relative to the root), then the pairs whose answer held no text and the texts that lost
//! what must stay verbatim, on stderr as warnings; `--json`: `{"legs": [{"summary",
//! "written"}…]}`. The texts then go through `ml2b stage translate-validate` as imported
//! ones do. Exit 1 when a unit could not run (its model never answered); 2 for bad input
//! (an unknown model, the same model both ways without `--same-model-both-ways`).

use std::io::Write;

use super::{ExitStatus, ProgressBars};
use crate::config::TranslateSettings;
use crate::pipeline::Pipeline;
use crate::settings::GlobalSettings;

/// Runs `ml2b translate`.
pub(super) fn translate(settings: &GlobalSettings, args: &TranslateSettings) -> anyhow::Result<ExitStatus> {
    let progress = ProgressBars::new(&settings.printer);
    let legs = Pipeline::new(&settings.store, &progress).translate(args)?;
    let failed = legs.iter().any(|(summary, _)| !summary.failed.is_empty());
    if settings.printer.json {
        let legs: Vec<_> = legs
            .iter()
            .map(|(summary, written)| serde_json::json!({"summary": summary, "written": written}))
            .collect();
        settings.printer.json(&serde_json::json!({ "legs": legs }))?;
    } else {
        let mut out = settings.printer.stdout();
        for (summary, written) in &legs {
            write!(out, "{}", super::stage::summary_lines(summary))?;
            for file in &written.files {
                writeln!(out, "  wrote {file}")?;
            }
            for (label, error) in &summary.failed {
                writeln!(out, "  FAILED {label}: {error}")?;
            }
        }
    }
    for (_, written) in &legs {
        for line in written.without_text.iter().chain(&written.lost) {
            settings.printer.warn(line);
        }
    }
    Ok(if failed {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}
