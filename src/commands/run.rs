//! `ml2b run`: the benchmark end to end.
//!
//! translate-validate → generate (each of `--models`, `--seeds` samples, `--format`s) →
//! execute (the `--backend` sandbox, `-j`) → grade → analyze, over the benchmark root
//! (`--root`, default: the bundled competitions) and the `--competitions` / `--langs`
//! selection; then verifies the store, prints the headline table (AUP / pass rate per
//! model, averaged over languages) and the hash that names the whole run. Every stage
//! skips what the store already holds, so a run killed at any point resumes where it
//! stopped when started again. Exit 1 when a unit failed or the store does not verify.

use super::{ExitStatus, ProgressReporter};
use crate::cli::{
    AnalyzeArgs, ExecuteArgs, GenerateArgs, GradeArgs, RootArgs, RunArgs, TranslateValidateArgs,
};
use crate::log::run_hash;
use crate::log::verify::verify_store;
use crate::settings::GlobalSettings;
use crate::stages::RunSummary;

/// Runs `ml2b run`.
pub fn run(settings: &GlobalSettings, args: &RunArgs) -> anyhow::Result<ExitStatus> {
    let root = || RootArgs {
        root: args.root.root.clone(),
    };
    let tv_args = || TranslateValidateArgs {
        root: root(),
        competitions: args.competitions.clone(),
        languages: args.languages.clone(),
    };
    let (tv, checks) = super::stage::translate_validate(settings, &tv_args())?;
    let failing = checks.iter().filter(|c| !c.passed).count();
    settings.printer.info(format!(
        "translate_validate: {} checks ({} new), {failing} fail their gate",
        checks.len(),
        tv.appended()
    ));
    let mut summaries = generate_execute_grade(
        settings,
        &tv_args,
        &args.models,
        &args.formats,
        args.seeds,
        &args.agent,
        execute_everything(root(), args.backend, args.jobs, args.timeout),
    )?;
    summaries.push(super::stage::analyze(
        settings,
        &AnalyzeArgs {
            root: root(),
            tables: Vec::new(),
        },
    )?);
    let mut failed = 0;
    for s in &summaries {
        settings
            .printer
            .info(format!("{}: {} new events", s.stage, s.appended()));
        for (label, error) in &s.failed {
            settings
                .printer
                .warn(format!("{} {label} failed: {error}", s.stage));
        }
        failed += s.failed.len();
    }
    let reporter = ProgressReporter::new(&settings.printer);
    let report = verify_store(&settings.store, &reporter)?;
    let heads: Vec<_> = report.stages.iter().map(|s| (s.stage.clone(), s.head)).collect();
    let run = run_hash(&heads);
    if settings.printer.json {
        settings
            .printer
            .json(&serde_json::json!({ "run": run, "stages": report.stages, "problems": report.problems, "translate_validate": { "checks": checks.len(), "failing": failing } }))?;
    } else {
        for s in &report.stages {
            println!("{}: {} events in {} segments", s.stage, s.events, s.segments);
        }
        print!("{}", headline(settings)?);
        println!("run {run}");
    }
    Ok(if report.ok() && failed == 0 {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

/// execute's arguments for running every generated program not yet run (no `--since`),
/// with the default memory limit.
pub(super) fn execute_everything(
    root: RootArgs,
    backend: crate::cli::Backend,
    jobs: usize,
    timeout: u64,
) -> ExecuteArgs {
    ExecuteArgs {
        root,
        jobs,
        timeout,
        memory: 8 << 30,
        backend,
        since: None,
    }
}

/// generate with each of `models` over the `select` selection, then execute everything
/// generated and grade it: what `ml2b run` and `ml2b baselines` share.
pub(super) fn generate_execute_grade(
    settings: &GlobalSettings,
    select: &dyn Fn() -> TranslateValidateArgs,
    models: &[String],
    formats: &[crate::sandbox::Format],
    seeds: u32,
    agent: &crate::cli::AgentArgs,
    execute: ExecuteArgs,
) -> anyhow::Result<Vec<RunSummary>> {
    let mut summaries = Vec::new();
    for model in models {
        summaries.push(super::stage::generate(
            settings,
            &GenerateArgs {
                select: select(),
                model: model.clone(),
                formats: formats.to_vec(),
                seeds,
                request_timeout: 600,
                max_tokens: None,
                force: false,
                agent: agent.clone(),
                backend: execute.backend,
                timeout: execute.timeout,
                jobs: execute.jobs,
            },
        )?);
    }
    let root = RootArgs {
        root: execute.root.root.clone(),
    };
    summaries.push(super::stage::execute(settings, &execute)?);
    summaries.push(super::stage::grade(settings, &GradeArgs { root, since: None })?);
    Ok(summaries)
}

/// The headline: every model's average over languages from the latest `aup` table.
fn headline(settings: &GlobalSettings) -> anyhow::Result<String> {
    let Some(e) = crate::stages::analyze::latest(&settings.store)?
        .into_iter()
        .find(|e| e.body.name == "aup")
    else {
        return Ok(String::new());
    };
    let (schema, batches) = crate::stages::analyze::load(&settings.store, &e.body)?;
    let all = arrow::compute::concat_batches(&schema, &batches)?;
    let language = all
        .column_by_name("language")
        .and_then(|c| c.as_any().downcast_ref::<arrow::array::StringArray>())
        .ok_or_else(|| anyhow::anyhow!("the aup table has no language column"))?;
    let keep = arrow::array::BooleanArray::from_iter(language.iter().map(|l| Some(l == Some("Avg."))));
    let avg = arrow::compute::filter_record_batch(&all, &keep)?;
    let columns = ["model", "format", "aup", "aup_invln", "win_rate", "pass_rate"];
    let indices: Vec<usize> = columns.iter().filter_map(|c| schema.index_of(c).ok()).collect();
    let avg = avg.project(&indices)?;
    Ok(format!(
        "{}\n",
        arrow::util::pretty::pretty_format_batches(&[avg])?
    ))
}
