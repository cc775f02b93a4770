//! `ml2b prepare`: rebuild the competitions' public and private files from their sources.
//!
//! Default: write the files that differ from the rebuilt ones, refusing (and writing
//! nothing for that competition) when the manifest records other checksums.
//! `--check`: write nothing; exit 1 unless every file, the source checksum and the
//! characteristics match the manifest bit for bit. `--update-manifest`: record the rebuilt
//! checksums. Output: one line per competition, or with `--json` one object per competition
//! (`{"id", "ok", "files": [{"path", "blake3", "recorded", "on_disk"}], "problems", "written"}`).

use std::io::Write;

use anyhow::Context;
use serde::Serialize;

use super::{ExitStatus, InputError};
use crate::competition::{Benchmark, prepare};
use crate::settings::{GlobalSettings, PrepareSettings};

#[derive(Serialize)]
struct Outcome {
    id: String,
    ok: bool,
    #[serde(flatten)]
    check: prepare::Check,
    written: Vec<String>,
}

/// Runs `ml2b prepare`.
pub(super) fn prepare(settings: &GlobalSettings, args: &PrepareSettings) -> anyhow::Result<ExitStatus> {
    let bench = Benchmark::load(&args.root)?;
    let selected = bench.select(&args.ids).map_err(InputError)?;
    let mut outcomes = Vec::new();
    for c in selected {
        let built = prepare::build(c).with_context(|| format!("preparing `{}`", c.id()))?;
        let written = if args.check {
            Vec::new()
        } else {
            prepare::write(c, &built, args.update_manifest)?
        };
        // Re-read the manifest: writing may have recorded new checksums.
        let c = if written.is_empty() && args.check {
            c.clone()
        } else {
            reload(c)?
        };
        let check = prepare::check(&c, &built);
        outcomes.push(Outcome {
            id: check.id.clone(),
            ok: check.ok(),
            check,
            written,
        });
    }
    report(settings, &outcomes)?;
    Ok(if outcomes.iter().all(|o| o.ok) {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

fn reload(c: &crate::competition::Competition) -> anyhow::Result<crate::competition::Competition> {
    let mut c = c.clone();
    c.manifest = crate::manifest::CompetitionManifest::load(&c.manifest_path)?;
    Ok(c)
}

fn report(settings: &GlobalSettings, outcomes: &[Outcome]) -> anyhow::Result<()> {
    if settings.printer.json {
        return settings.printer.json(&outcomes);
    }
    for o in outcomes {
        let status = if o.ok { "ok" } else { "MISMATCH" };
        writeln!(
            settings.printer.stdout(),
            "{:<28} {status:<8} {} files",
            o.id,
            o.check.files.len()
        )?;
        for path in &o.written {
            writeln!(settings.printer.stdout(), "  wrote {path}")?;
        }
        for f in o.check.files.iter().filter(|f| !f.matches()) {
            let recorded = f.recorded.as_deref().unwrap_or("nothing");
            let disk = if f.on_disk {
                "matches"
            } else {
                "differs or is missing"
            };
            writeln!(
                settings.printer.stdout(),
                "  {}: rebuilt {}, manifest records {recorded}, file on disk {disk}",
                f.path,
                f.blake3
            )?;
        }
        for p in &o.check.problems {
            writeln!(settings.printer.stdout(), "  {p}")?;
        }
    }
    Ok(())
}
