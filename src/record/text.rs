//! A record as text: what `ml2b show ID` prints.
//!
//! A header (log, id, unit key, provenance), then the detail of its kind: for a run its
//! coordinates, outcome, score, r_p (and medal, for an MLE-bench competition), then the
//! prompt, the English task, the response, the code with every finding marked under its
//! line, and the sandbox's output; then the links. Texts are printed whole, under a
//! `── name ──` rule.
//!
//! Invariant: the text holds no control character but newline and tab ([`visible`]).
//! A model's answer, a run's output and everything else a record shows come from outside
//! ml2b, and a terminal obeys the escape sequences in them (clear the screen, set the
//! window title, move the cursor back over a line to print a score of its own); the text
//! ml2b writes around them holds none, so the whole rendering goes through [`visible`].

use std::fmt::{self, Write as _};

use super::{Detail, Finding, Prompt, Record, Run, Step, Table, Texts};
use crate::events::serde_name;
use crate::events::{Execution, Grade};
use crate::terminal::visible;

impl fmt::Display for Record {
    /// The rendering of [`Raw`], through [`visible`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&visible(&Raw(self).to_string()))
    }
}

/// A record as text, control characters and all.
struct Raw<'a>(&'a Record);

impl fmt::Display for Raw<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let record = self.0;
        let e = &record.event;
        writeln!(f, "{} event {}", e.log, e.event_id)?;
        writeln!(f, "  unit key  {}", e.unit_key)?;
        writeln!(
            f,
            "  created   {} on {} ({} ms)",
            e.created_at, e.host, e.duration_ms
        )?;
        match &record.detail {
            Detail::Run(run) => write_run(f, run)?,
            Detail::Attempt(step) => write_step(f, step)?,
            Detail::Analysis(table) => write_table(f, table)?,
            Detail::Translation(texts) => write_texts(f, texts)?,
            Detail::Event => write_fields(f, &e.body)?,
        }
        write_links(f, record)?;
        if !record.problems.is_empty() {
            writeln!(f, "\n── problems ──")?;
            for p in &record.problems {
                writeln!(f, "  {p}")?;
            }
        }
        Ok(())
    }
}

/// `  name      value` lines.
fn field(f: &mut fmt::Formatter<'_>, name: &str, value: impl fmt::Display) -> fmt::Result {
    writeln!(f, "  {name:<12}{value}")
}

/// Where a sample stands in the grid: competition, language, format, seed.
fn coordinates(
    f: &mut fmt::Formatter<'_>,
    competition: &str,
    language: &str,
    format: crate::events::Format,
    seed: u32,
) -> fmt::Result {
    field(f, "competition", competition)?;
    field(f, "language", language)?;
    field(f, "format", format)?;
    field(f, "seed", seed)
}

/// A text under its rule; nothing when absent.
fn section(f: &mut fmt::Formatter<'_>, name: &str, text: Option<&str>) -> fmt::Result {
    let Some(text) = text else {
        return Ok(());
    };
    writeln!(f, "\n── {name} ──")?;
    if text.is_empty() {
        return writeln!(f, "(empty)");
    }
    writeln!(f, "{}", text.trim_end_matches('\n'))
}

fn write_run(f: &mut fmt::Formatter<'_>, run: &Run) -> fmt::Result {
    let g = &run.generation.body;
    writeln!(f, "\nrun {}", run.generation.event_id)?;
    field(
        f,
        "model",
        format!(
            "{} ({}, {} agent)",
            run.entrant,
            serde_name(&g.provider),
            serde_name(&g.agent)
        ),
    )?;
    coordinates(f, &g.competition, &g.language, g.format, g.seed)?;
    field(
        f,
        "tokens",
        format!(
            "{} in, {} out, ${:.4}, {} HTTP attempts",
            g.input_tokens, g.output_tokens, g.cost_usd, g.attempts
        ),
    )?;
    if let Some(text) = g.text_origin() {
        field(f, "task text", text)?;
    }
    if let Some(t) = &run.translation {
        let t = &t.body;
        let bleu = t.bleu.map_or("-".into(), |b| format!("{b:.4}"));
        let ac1 = t.ac1.map_or("-".into(), |a| format!("{a:.4}"));
        let verdict = if t.passed { "passed" } else { "failed" };
        field(
            f,
            "translation",
            format!("{verdict} (BLEU {bleu}, AC1 {ac1}, tier {})", t.tier),
        )?;
    }
    write_execution(f, run.execution.as_ref().map(|x| &x.body))?;
    write_grade(f, run.grade.as_ref().map(|g| &g.body))?;
    write_prompt(f, run.prompt.as_ref(), &g.language)?;
    section(f, "English task", run.english_task.as_deref())?;
    section(f, "response", run.response.as_deref())?;
    write_code(f, run.code.as_deref(), Some(&run.findings))?;
    if let Some(x) = &run.execution {
        section(f, "stdout (tail)", Some(&x.body.stdout_tail))?;
        section(f, "stderr (tail)", Some(&x.body.stderr_tail))?;
    }
    if let Some(x) = &run.external {
        write_external(f, x)?;
    }
    if !run.attempts.is_empty() {
        writeln!(f, "\n── aide search ({} attempts) ──", run.attempts.len())?;
        for a in &run.attempts {
            let metric = a.metric.map_or("buggy".into(), |m| format!("metric {m}"));
            let parent = a
                .parent
                .as_deref()
                .map_or(String::new(), |p| format!(" of {}", &p[..8.min(p.len())]));
            let best = if a.is_best_so_far { " (best so far)" } else { "" };
            writeln!(
                f,
                "  step {:>3} {}{parent}: {metric}{best}  {}",
                a.step, a.stage, a.event_id
            )?;
        }
    }
    Ok(())
}

/// An external agent's run: how it ended, its requests, what it kept and printed.
fn write_external(f: &mut fmt::Formatter<'_>, x: &crate::record::ExternalView) -> fmt::Result {
    let r = &x.run.body;
    let exit = r.exit_code.map_or("killed".to_string(), |c| format!("exit {c}"));
    writeln!(
        f,
        "\n── external agent {}: {} ({exit}, {:.1} s) ──",
        r.agent, r.ended, r.wall_seconds
    )?;
    writeln!(
        f,
        "  {} request(s) through the gateway, {} refused; {} in, {} out, ${:.4}",
        r.calls, r.refused_calls, r.input_tokens, r.output_tokens, r.cost_usd
    )?;
    for c in &x.calls {
        let how = match (&c.refused, c.cached) {
            (Some(why), _) => format!("refused: {why}"),
            (None, true) => "from the store".to_string(),
            (None, false) => format!("{} HTTP attempt(s)", c.http_attempts),
        };
        writeln!(
            f,
            "  call {:>4} {:<9} {}  {} in, {} out, {:.2} s  {how}",
            c.call, c.protocol, c.status, c.input_tokens, c.output_tokens, c.answer_seconds
        )?;
    }
    for (path, bytes, blake3) in &x.logs {
        writeln!(
            f,
            "  kept logs/{path} ({bytes} bytes, blake3 {})",
            &blake3[..16.min(blake3.len())]
        )?;
    }
    section(f, "agent stdout (tail)", x.stdout.as_deref())?;
    section(f, "agent stderr (tail)", x.stderr.as_deref())
}

fn write_execution(f: &mut fmt::Formatter<'_>, x: Option<&Execution>) -> fmt::Result {
    let Some(x) = x else {
        return field(f, "outcome", "not executed");
    };
    let detail = x.detail.as_deref().map_or(String::new(), |d| format!(": {d}"));
    field(
        f,
        "outcome",
        format!(
            "{}{detail} ({:.1} s, {} backend)",
            x.outcome, x.wall_seconds, x.backend
        ),
    )?;
    if x.leakage {
        field(f, "leakage", "flagged by the static checks")?;
    }
    if let Some((network, _)) = x.network_summary() {
        field(f, "network", network)?;
    }
    if let Some(gpus) = x.gpu_summary() {
        field(f, "gpus", gpus)?;
    }
    if let Some(cache) = x.model_cache_blake3 {
        field(f, "model cache", format!("listed in object {}", cache.to_hex()))?;
    }
    Ok(())
}

fn write_grade(f: &mut fmt::Formatter<'_>, g: Option<&Grade>) -> fmt::Result {
    let Some(g) = g else {
        return field(f, "grade", "not graded");
    };
    let num = |v: Option<f64>| v.map_or("-".into(), |v| v.to_string());
    let verdict = if g.valid {
        "valid".to_string()
    } else {
        format!("invalid: {}", g.reason.as_deref().unwrap_or("-"))
    };
    field(
        f,
        "score",
        format!("{} ({}, {}), {verdict}", num(g.score), g.metric, g.direction),
    )?;
    if g.valid
        && let Some(reason) = &g.reason
    {
        field(f, "note", reason)?;
    }
    field(
        f,
        "r_p",
        format!(
            "{} against the reference solution (score {})",
            num(g.r_p),
            num(g.baseline_score)
        ),
    )?;
    field(
        f,
        "r_p automl",
        format!(
            "{} against AutoGluon (score {})",
            num(g.r_p_automl),
            num(g.automl_score)
        ),
    )?;
    match g.medal_summary() {
        Some(medal) => field(f, "medal", medal),
        None => Ok(()),
    }
}

fn write_prompt(f: &mut fmt::Formatter<'_>, prompt: Option<&Prompt>, language: &str) -> fmt::Result {
    let Some(p) = prompt else {
        return Ok(());
    };
    if !p.system.is_empty() {
        section(f, "prompt: system", Some(&p.system))?;
    }
    section(f, &format!("prompt: user ({language})"), Some(&p.user))
}

/// The code with line numbers, each finding marked under its line (a finding past the
/// last line is listed at the end); `None`: the code was not checked.
fn write_code(f: &mut fmt::Formatter<'_>, code: Option<&str>, findings: Option<&[Finding]>) -> fmt::Result {
    let Some(code) = code else {
        return Ok(());
    };
    match findings.map(<[Finding]>::len) {
        Some(n) => writeln!(f, "\n── code ({n} finding{}) ──", if n == 1 { "" } else { "s" })?,
        None => writeln!(f, "\n── code ──")?,
    }
    let findings = findings.unwrap_or_default();
    let lines: Vec<&str> = code.lines().collect();
    let width = lines.len().max(1).to_string().len();
    for (i, line) in lines.iter().enumerate() {
        writeln!(f, "{:>width$} │ {line}", i + 1)?;
        for finding in findings.iter().filter(|x| x.line == i + 1) {
            writeln!(f, "{:>width$} │ ^ {}: {}", "", finding.kind, finding.message)?;
        }
    }
    for finding in findings.iter().filter(|x| x.line == 0 || x.line > lines.len()) {
        writeln!(
            f,
            "{:>width$} │ ^ line {}, {}: {}",
            "", finding.line, finding.kind, finding.message
        )?;
    }
    Ok(())
}

fn write_step(f: &mut fmt::Formatter<'_>, step: &Step) -> fmt::Result {
    let a = &step.attempt.body;
    writeln!(f, "\naide attempt {} of search {}", a.step, a.search)?;
    field(f, "model", &a.model)?;
    coordinates(f, &a.competition, &a.language, a.format, a.seed)?;
    field(
        f,
        "node",
        format!("{} ({}, debug depth {})", a.node, a.stage, a.debug_depth),
    )?;
    field(f, "parent", a.parent.as_deref().unwrap_or("-"))?;
    let metric = a.metric.map_or("-".into(), |m| m.to_string());
    let direction = if a.maximize { "maximize" } else { "minimize" };
    field(f, "outcome", format!("{} ({:.1} s)", a.outcome, a.exec_seconds))?;
    field(
        f,
        "metric",
        format!(
            "{metric} ({direction}){}",
            if a.is_buggy { ", buggy" } else { "" }
        ),
    )?;
    field(f, "best", a.is_best_so_far)?;
    field(
        f,
        "tokens",
        format!(
            "{} in, {} out, ${:.4}",
            a.input_tokens, a.output_tokens, a.cost_usd
        ),
    )?;
    section(f, "plan", Some(&a.plan))?;
    section(f, "analysis", Some(&a.analysis))?;
    write_prompt(f, step.prompt.as_ref(), &a.language)?;
    section(f, "response", step.response.as_deref())?;
    // The static checks run on what execute runs: the search's submission, not its attempts.
    write_code(f, step.code.as_deref(), None)?;
    section(f, "run output", Some(&a.term_out))
}

fn write_table(f: &mut fmt::Formatter<'_>, table: &Table) -> fmt::Result {
    let a = &table.analysis.body;
    writeln!(f, "\nanalyze table {}", a.name)?;
    field(f, "rows", a.rows)?;
    field(f, "result", a.result_blake3)?;
    field(f, "query", a.query_blake3)?;
    for input in &a.inputs {
        field(f, "input", input)?;
    }
    let mut grid = crate::terminal::grid(&[vec![a.columns.clone()], table.rows.clone()].concat());
    let shown = table.rows.len() as u64;
    if shown < a.rows {
        let _ = writeln!(
            grid,
            "… {} more rows (`ml2b show --raw result` writes the table)",
            a.rows - shown
        );
    }
    section(f, "table", Some(&grid))?;
    section(f, "SQL", table.query.as_deref())
}

fn write_texts(f: &mut fmt::Formatter<'_>, texts: &Texts) -> fmt::Result {
    let t = &texts.check.body;
    writeln!(f, "\ntranslation check {}/{}", t.competition, t.language)?;
    field(f, "tier", &t.tier)?;
    field(f, "translation", &t.translation)?;
    let num = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.4}"));
    field(
        f,
        "BLEU",
        format!("{} (gate {}, {})", num(t.bleu), t.min_bleu, t.bleu_signature),
    )?;
    field(f, "chrF", format!("{} ({})", num(t.chrf), t.chrf_signature))?;
    field(
        f,
        "AC1",
        format!(
            "{} (gate {}, 95% CI {} – {})",
            num(t.ac1),
            t.min_ac1,
            num(t.ac1_ci_low),
            num(t.ac1_ci_high)
        ),
    )?;
    field(f, "passed", t.passed)?;
    for reason in &t.reasons {
        field(f, "reason", reason)?;
    }
    let missing = "(not shown: the benchmark root does not hold the text this check read)";
    section(f, "English", Some(texts.english.as_deref().unwrap_or(missing)))?;
    section(
        f,
        &format!("text ({})", t.language),
        Some(texts.text.as_deref().unwrap_or(missing)),
    )?;
    if t.back_blake3.is_some() {
        section(
            f,
            "back-translation",
            Some(texts.back.as_deref().unwrap_or(missing)),
        )?;
    }
    Ok(())
}

fn write_fields(
    f: &mut fmt::Formatter<'_>,
    body: &serde_json::Map<String, serde_json::Value>,
) -> fmt::Result {
    writeln!(f)?;
    for (name, value) in body {
        let text = match value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        field(f, name, text)?;
    }
    Ok(())
}

/// The columns of the related events (the last, the label, is free).
const LINKS: [crate::terminal::Column; 3] = [
    crate::terminal::Column::left(11),
    crate::terminal::Column::left(18),
    crate::terminal::Column::left(0).gap(2),
];

fn write_links(f: &mut fmt::Formatter<'_>, record: &Record) -> fmt::Result {
    if record.links.is_empty() {
        return Ok(());
    }
    writeln!(f, "\n── related events ──")?;
    let rows: Vec<Vec<String>> = record
        .links
        .iter()
        .map(|l| {
            let id = l.event_id.to_string();
            vec![l.relation.clone(), l.log.clone(), id, l.label.clone()]
        })
        .collect();
    for line in crate::terminal::table(&LINKS, &rows).lines() {
        writeln!(f, "  {line}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn control_characters_are_shown_not_sent() {
        assert_eq!(visible("plain\ttext\nand more"), "plain\ttext\nand more");
        assert_eq!(visible("\x1b[2J\x1b]0;title\x07"), "␛[2J␛]0;title␇");
        assert_eq!(
            visible("score 0.1\rscore 1.0000 (gold)"),
            "score 0.1␍score 1.0000 (gold)"
        );
        assert_eq!(visible("line\r\nnext"), "line\r\nnext");
        assert_eq!(visible("a\x08b\x7f\0"), "a␈b␡␀");
        assert_eq!(visible("\u{9b}31m red"), "\\u{9b}31m red");
        assert_eq!(visible("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(visible("Қазақ ── │"), "Қазақ ── │");
    }
}
