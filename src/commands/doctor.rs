//! `ml2b doctor`: what a run needs, checked one line each, with what to do when a check
//! fails, before any work starts (`ml2b run` makes the same checks of its own selection
//! first: `crate::preflight`).
//!
//! ```text
//! ok    python                   /var/tmp/ml2b-venv/bin/python imports numpy, pandas, …
//! ok    sandbox                  local: a canary solution ran through the harness and …
//! ok    data                     12 competition(s): every public and private file matches …
//! ok    graders                  no competition is graded by a program
//! skip  model gpt-4.1            OPENAI_API_KEY is not set
//!       → export OPENAI_API_KEY=… to run this model
//! FAIL  model my-model           https://… : cannot reach it: … connection refused
//!       → check `endpoint` and `api_key_env` of `my-model` in manifests/models.toml, …
//! ok    disk                     store on /work: 52.1 GB free
//! ```
//! Nothing is written to the store. `--json`: the checks as a list. Exit 1 when a check
//! failed. Without --model every HTTP model of the manifest is checked, and one whose key
//! is not set, or a keyless server (a local vLLM, llama.cpp) that does not answer, is
//! skipped as not set up here; a model named with --model fails for either.

use std::path::Path;
use std::process::Command;

use serde::Serialize;

use super::{ExitStatus, InputError};
use crate::competition::{Benchmark, Side};
use crate::config::BackendKind;
use crate::events::Provider;
use crate::manifest::{Model, Models};
use crate::pipeline::Pipeline;
use crate::sandbox::Limits;
use crate::settings::{DoctorSettings, GlobalSettings};

/// One check's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Verdict {
    Ok,
    Skip,
    Fail,
}

/// One check: what, how it went, and what to do about it.
#[derive(Debug, Serialize)]
struct Check {
    check: String,
    verdict: Verdict,
    detail: String,
    fix: Option<String>,
}

impl Check {
    fn ok(check: &str, detail: impl Into<String>) -> Self {
        Self {
            check: check.into(),
            verdict: Verdict::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    fn not(verdict: Verdict, check: &str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            check: check.into(),
            verdict,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Runs `ml2b doctor`.
pub(super) fn doctor(settings: &GlobalSettings, args: &DoctorSettings) -> anyhow::Result<ExitStatus> {
    let progress = super::ProgressBars::new(&settings.printer);
    let pipeline = Pipeline::new(&settings.store, &progress);
    let mut checks = Vec::new();
    let python = python(&pipeline, &mut checks);
    checks.push(sandbox(&pipeline, args.backend, python.as_deref()));
    match pipeline.bench(&args.root) {
        Ok(bench) => {
            checks.push(data(&bench));
            checks.push(graders(&bench));
            checks.extend(models(&args.root, &args.models)?);
        }
        Err(e) => checks.push(Check::not(
            Verdict::Fail,
            "benchmark",
            crate::error::chain(&e),
            "run from the benchmark root (it holds manifests/ and data/), or pass --root",
        )),
    }
    checks.push(disk(settings.store.root(), args.min_free_bytes));
    if settings.printer.json {
        settings.printer.json(&checks)?;
    } else {
        print(settings, &checks)?;
    }
    let failed = checks.iter().filter(|c| c.verdict == Verdict::Fail).count();
    if failed == 0 {
        return Ok(ExitStatus::Success);
    }
    settings.printer.error(format_args!("{failed} check(s) failed"));
    Ok(ExitStatus::Failure)
}

fn print(settings: &GlobalSettings, checks: &[Check]) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = settings.printer.stdout();
    for c in checks {
        let verdict = match c.verdict {
            Verdict::Ok => "ok",
            Verdict::Skip => "skip",
            Verdict::Fail => "FAIL",
        };
        writeln!(out, "{verdict:<5} {:<24} {}", c.check, c.detail)?;
        if let Some(fix) = &c.fix {
            writeln!(out, "      → {fix}")?;
        }
    }
    Ok(())
}

/// The managed Python environment (made on first use), and whether it imports what
/// solutions use.
fn python(pipeline: &Pipeline, checks: &mut Vec<Check>) -> Option<std::path::PathBuf> {
    let fix = "run scripts/python-env (or unset ML2B_PYTHON, or point it at a Python with assets/execute/requirements.txt)";
    let python = match pipeline.python() {
        Ok(p) => p,
        Err(e) => {
            checks.push(Check::not(Verdict::Fail, "python", crate::error::chain(&e), fix));
            return None;
        }
    };
    let out = Command::new(&python)
        .args(["-c", "import numpy, pandas, sklearn, pyarrow"])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            checks.push(Check::ok(
                "python",
                format!(
                    "{} imports numpy, pandas, scikit-learn, pyarrow",
                    python.display()
                ),
            ));
            Some(python)
        }
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            let last = err.lines().last().unwrap_or("it exited with an error");
            let why = format!("{}: {last}", python.display());
            checks.push(Check::not(Verdict::Fail, "python", why, fix));
            None
        }
        Err(e) => {
            let why = format!("{} cannot run: {e}", python.display());
            checks.push(Check::not(Verdict::Fail, "python", why, fix));
            None
        }
    }
}

/// The sandbox: one canary solution through the real harness (`preflight::sandbox`).
fn sandbox(pipeline: &Pipeline, kind: BackendKind, python: Option<&Path>) -> Check {
    let (name, fix) = match kind {
        BackendKind::Local => (
            "local",
            "install bubblewrap and util-linux (Debian: apt-get install bubblewrap util-linux), or use --backend docker",
        ),
        BackendKind::Docker => (
            "docker",
            "start the Docker engine (and check DOCKER_HOST), or use --backend local",
        ),
    };
    let Some(python) = python else {
        return Check::not(
            Verdict::Skip,
            "sandbox",
            format!("{name}: needs the Python environment"),
            "fix python first",
        );
    };
    let backend = match pipeline.sandbox(kind) {
        Ok(b) => b,
        Err(e) => {
            return Check::not(
                Verdict::Fail,
                "sandbox",
                format!("{name}: {}", crate::error::chain(&e)),
                fix,
            );
        }
    };
    match crate::preflight::sandbox(&*backend, python, &Limits::default()) {
        Ok(()) => Check::ok(
            "sandbox",
            format!("{name}: a canary solution ran through the harness and its predictions were read"),
        ),
        Err(f) => Check::not(Verdict::Fail, "sandbox", format!("{name}: {}", f.problem), fix),
    }
}

/// Every competition's public and private files against its manifest.
fn data(bench: &Benchmark) -> Check {
    let mut bad = Vec::new();
    for c in &bench.competitions {
        for side in [Side::Public, Side::Private] {
            if let Err(e) = c.verify_files(side) {
                bad.push(crate::error::chain(&e));
            }
        }
    }
    match bad.first() {
        None => Check::ok(
            "data",
            format!(
                "{} competition(s): every public and private file matches its manifest",
                bench.competitions.len()
            ),
        ),
        Some(first) => Check::not(
            Verdict::Fail,
            "data",
            format!("{} file set(s) differ; the first: {first}", bad.len()),
            "run `ml2b prepare` for a bundled competition, or import it again",
        ),
    }
}

/// The grading programs of the competitions graded by one (`preflight::graders`).
fn graders(bench: &Benchmark) -> Check {
    let all: Vec<_> = bench.competitions.iter().collect();
    let programs = all.iter().filter(|c| c.manifest.is_program_graded()).count();
    let failed = crate::preflight::graders(&all);
    match failed.first() {
        None if programs == 0 => Check::ok("graders", "no competition is graded by a program"),
        None => Check::ok("graders", format!("{programs} grading program(s) load")),
        Some(f) => Check::not(
            Verdict::Fail,
            "graders",
            f.to_string(),
            "import the competition again (its grading program's files are checked against its manifest)",
        ),
    }
}

/// Each HTTP model named (or, by default, every one): its key and endpoint.
fn models(root: &Path, named: &[String]) -> anyhow::Result<Vec<Check>> {
    let models = Models::load(&root.join("manifests/models.toml"))?;
    let wanted: Vec<&Model> = if named.is_empty() {
        models
            .list
            .iter()
            .filter(|m| matches!(m.provider, Provider::Openai | Provider::Anthropic))
            .collect()
    } else {
        named
            .iter()
            .map(|n| {
                models.get(n).ok_or_else(|| {
                    InputError(format!("--model {n}: no model `{n}` in manifests/models.toml"))
                })
            })
            .collect::<Result<_, _>>()?
    };
    let runtime = super::runtime()?;
    let mut checks = Vec::new();
    for m in wanted {
        let check = format!("model {}", m.name);
        let unset =
            !m.api_key_env.is_empty() && std::env::var(&m.api_key_env).map_or(true, |k| k.trim().is_empty());
        if unset && named.is_empty() {
            checks.push(Check::not(
                Verdict::Skip,
                &check,
                format!("{} is not set", m.api_key_env),
                format!("export {}=… to run this model", m.api_key_env),
            ));
            continue;
        }
        let failed = runtime.block_on(crate::preflight::models(&[m]));
        checks.push(match failed.first() {
            None => Check::ok(&check, format!("{} answers", m.endpoint)),
            // A keyless server of the manifest (a local vLLM, llama.cpp) that is not running
            // is not set up here, unless asked for.
            Some(f) if named.is_empty() && m.api_key_env.is_empty() => Check::not(
                Verdict::Skip,
                &check,
                format!("{}: {}", m.endpoint, f.problem),
                format!("start the server at `endpoint` to run `{}`", m.name),
            ),
            Some(f) if unset => Check::not(
                Verdict::Fail,
                &check,
                format!("{}: {}", m.endpoint, f.problem),
                format!("export {}=… (the key of this endpoint)", m.api_key_env),
            ),
            Some(f) => Check::not(
                Verdict::Fail,
                &check,
                format!("{}: {}", m.endpoint, f.problem),
                format!(
                    "check `endpoint` and `api_key_env` of `{}` in manifests/models.toml, and that the server runs",
                    m.name
                ),
            ),
        });
    }
    Ok(checks)
}

/// Free space on the store's disk (the nearest folder of its path that exists).
fn disk(store: &Path, min_free: u64) -> Check {
    let Some(existing) = store.ancestors().find(|p| p.exists()) else {
        return Check::not(
            Verdict::Skip,
            "disk",
            "no folder of the store's path exists",
            "create it",
        );
    };
    let free = match free_bytes(existing) {
        Ok(n) => n,
        Err(e) => {
            return Check::not(
                Verdict::Skip,
                "disk",
                format!("{}: {e}", existing.display()),
                "check the path",
            );
        }
    };
    let detail = format!(
        "store on {}: {:.1} GB free",
        existing.display(),
        free as f64 / 1e9
    );
    if free >= min_free {
        Check::ok("disk", detail)
    } else {
        Check::not(
            Verdict::Fail,
            "disk",
            format!("{detail}, less than {:.1} GB", min_free as f64 / 1e9),
            "free space there, or move the store to another disk (--store, ML2B_STORE)",
        )
    }
}

fn free_bytes(path: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("the path holds a NUL byte"))?;
    // SAFETY: statvfs is plain data, for which all zeroes is a valid value.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid NUL-terminated path and a statvfs to fill.
    if unsafe { libc::statvfs(c.as_ptr(), &mut stat) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(stat.f_bavail as u64 * stat.f_frsize as u64)
}
