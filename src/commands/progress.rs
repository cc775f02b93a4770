//! The CLI's [`Progress`]: indicatif bars on stderr, and the printer's messages.
//!
//! One bar per phase, and below it one spinner line per unit in flight (one per worker of
//! a `-j N` run, showing what it runs and for how long); a spinner for a slow step with no
//! measurable progress (creating the Python environment, building the runtime image). The
//! bar shows the estimate of what remains (`ETA`, from the rate of the units done so far:
//! the units a phase counts are the ones still to run, what the store holds is not
//! planned). All hidden with `--quiet`; messages go through the printer.
//!
//! When stderr is not a terminal (a log file, CI, `nohup`, a Slurm log) the bars are
//! hidden and [`Lines`] writes plain lines instead, at most one per interval
//! (`ML2B_PROGRESS_INTERVAL` seconds, default 30), so a long run is never silent and a
//! short one prints nothing more than before:
//! ```text
//! generate: 12/40 (30%), 1 failed, 2m04s elapsed, about 4m49s left, 41 tok/s
//! generate: done, 40/40, 1 failed, in 6m51s
//! ```
//! A phase whose units' models write tokens (generate, translate) shows the output tokens
//! of its units done per second since it began, on the bar as in the lines.
//! The closing line is written only for a phase that wrote a line before.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use crate::log::Committed;
use crate::progress::Progress;
use crate::settings::Printer;

/// Draws progress bars for the core's long work.
pub struct ProgressBars {
    printer: Printer,
    multi: MultiProgress,
    bar: Mutex<Option<ProgressBar>>,
    /// The spinner of each unit in flight, by label.
    running: Mutex<Vec<(String, ProgressBar)>>,
    /// The spinner of the slow step under way.
    slow: Mutex<Option<ProgressBar>>,
    /// Plain lines, when stderr is not a terminal.
    lines: Option<Lines>,
    /// The output tokens of the current phase's units done (its bar reads it).
    tokens: Mutex<Arc<AtomicU64>>,
}

/// Progress as plain lines, at most one per `interval`.
struct Lines {
    interval: Duration,
    phase: Mutex<Phase>,
}

/// Where the current phase stands.
struct Phase {
    name: String,
    total: u64,
    done: u64,
    failed: u64,
    /// Output tokens of the units done.
    tokens: u64,
    started: Instant,
    /// When a line was last written (none yet: the phase's start).
    written: Option<Instant>,
}

impl Lines {
    fn begin(&self, name: &str, total: u64) {
        *self.phase.lock().expect("progress lock") = Phase::new(name, total);
    }

    /// Counts `n` units done (`failed` of them failed); writes a line when one is due.
    fn advance(&self, printer: &Printer, n: u64, failed: u64) {
        let mut p = self.phase.lock().expect("progress lock");
        p.done += n;
        p.failed += failed;
        let since = p.written.unwrap_or(p.started).elapsed();
        if since >= self.interval && p.total > 0 {
            printer.info(p.line());
            p.written = Some(Instant::now());
        }
    }

    fn end(&self, printer: &Printer) {
        let p = self.phase.lock().expect("progress lock");
        if p.written.is_some() {
            printer.info(format!(
                "{}: done, {}/{}{}, in {}",
                p.name,
                p.done,
                p.total,
                failed(p.failed),
                duration(p.started.elapsed())
            ));
        }
    }
}

impl Phase {
    /// A phase of `total` steps, starting now.
    fn new(name: &str, total: u64) -> Self {
        Self {
            name: name.to_string(),
            total,
            done: 0,
            failed: 0,
            tokens: 0,
            started: Instant::now(),
            written: None,
        }
    }

    fn line(&self) -> String {
        let elapsed = self.started.elapsed();
        let percent = self.done as f64 * 100.0 / self.total as f64;
        let left = match self.done {
            0 => String::new(),
            done if done >= self.total => String::new(),
            done => {
                let rest = elapsed.mul_f64(self.total.saturating_sub(done) as f64 / done as f64);
                format!(", about {} left", duration(rest))
            }
        };
        format!(
            "{}: {}/{} ({percent:.0}%){}, {} elapsed{left}{}",
            self.name,
            self.done,
            self.total,
            failed(self.failed),
            duration(elapsed),
            rate(self.tokens, elapsed),
        )
    }
}

/// `, N tok/s` (nothing before a token).
fn rate(tokens: u64, elapsed: Duration) -> String {
    if tokens == 0 {
        return String::new();
    }
    format!(", {:.0} tok/s", tokens as f64 / elapsed.as_secs_f64().max(1e-3))
}

/// `, N failed` (nothing when none did).
fn failed(n: u64) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(", {n} failed")
    }
}

/// `1h02m`, `4m09s`, `12.3 s`.
fn duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{:.1} s", d.as_secs_f64()),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

impl ProgressBars {
    /// Bars that draw only when `printer` allows it.
    pub fn new(printer: &Printer) -> Self {
        let target = if printer.progress {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Self {
            printer: *printer,
            multi: MultiProgress::with_draw_target(target),
            bar: Mutex::new(None),
            running: Mutex::new(Vec::new()),
            slow: Mutex::new(None),
            lines: printer.lines.map(|interval| Lines {
                interval,
                phase: Mutex::new(Phase::new("", 0)),
            }),
            tokens: Mutex::new(Arc::new(AtomicU64::new(0))),
        }
    }

    fn with_bar(&self, f: impl FnOnce(&ProgressBar)) {
        if let Some(bar) = self.bar.lock().expect("progress lock").as_ref() {
            f(bar);
        }
    }
}

/// A phase's bar; `{tokens}` is the rate of `tokens` (nothing before the first).
fn style(tokens: Arc<AtomicU64>) -> ProgressStyle {
    ProgressStyle::with_template(
        "{prefix:>12.cyan.bold} [{bar:30}] {pos}/{len} {elapsed_precise} ETA {eta}{tokens} {wide_msg}",
    )
    .expect("valid template")
    .with_key(
        "tokens",
        move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(&rate(tokens.load(Ordering::Relaxed), state.elapsed()));
        },
    )
    .progress_chars("=> ")
}

impl Progress for ProgressBars {
    fn begin(&self, phase: &str, total: u64) {
        let tokens = Arc::new(AtomicU64::new(0));
        *self.tokens.lock().expect("progress lock") = tokens.clone();
        let bar = self.multi.add(
            ProgressBar::new(total)
                .with_style(style(tokens))
                .with_prefix(phase.to_string()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        *self.bar.lock().expect("progress lock") = Some(bar);
        if let Some(lines) = &self.lines {
            lines.begin(phase, total);
        }
    }

    fn unit_started(&self, label: &str) {
        let worker = self.multi.add(
            ProgressBar::new_spinner()
                .with_style(
                    ProgressStyle::with_template("  {spinner} {elapsed:>4} {wide_msg}")
                        .expect("valid template"),
                )
                .with_message(label.to_string()),
        );
        worker.enable_steady_tick(Duration::from_millis(200));
        self.running
            .lock()
            .expect("progress lock")
            .push((label.to_string(), worker));
    }

    fn unit_finished(&self, label: &str, ok: bool) {
        if let Some(lines) = &self.lines {
            lines.advance(&self.printer, 1, u64::from(!ok));
        }
        let mut running = self.running.lock().expect("progress lock");
        if let Some(i) = running.iter().position(|(l, _)| l == label) {
            let (_, worker) = running.remove(i);
            worker.finish_and_clear();
            self.multi.remove(&worker);
        }
        drop(running);
        self.with_bar(|b| b.inc(1));
    }

    fn tokens(&self, n: u64) {
        if n == 0 {
            return;
        }
        self.tokens
            .lock()
            .expect("progress lock")
            .fetch_add(n, Ordering::Relaxed);
        if let Some(lines) = &self.lines {
            lines.phase.lock().expect("progress lock").tokens += n;
        }
    }

    fn advance(&self, n: u64) {
        if let Some(lines) = &self.lines {
            lines.advance(&self.printer, n, 0);
        }
        self.with_bar(|b| b.inc(n));
    }

    fn committed(&self, stage: &str, c: &Committed) {
        self.with_bar(|b| {
            b.set_message(format!(
                "{stage}: committed segment {} ({} events)",
                c.version, c.events
            ))
        });
    }

    fn end(&self) {
        if let Some(lines) = &self.lines {
            lines.end(&self.printer);
        }
        for (_, worker) in self.running.lock().expect("progress lock").drain(..) {
            worker.finish_and_clear();
        }
        if let Some(bar) = self.bar.lock().expect("progress lock").take() {
            bar.finish_and_clear();
        }
    }

    fn info(&self, message: &str) {
        self.printer.info(message);
    }

    fn warn(&self, message: &str) {
        self.printer.warn(message);
    }

    fn slow_step(&self, message: &str) {
        let bar = if self.printer.progress {
            ProgressBar::new_spinner().with_message(message.to_string())
        } else {
            ProgressBar::hidden()
        };
        bar.enable_steady_tick(Duration::from_millis(120));
        *self.slow.lock().expect("progress lock") = Some(bar);
    }

    fn slow_step_ended(&self) {
        if let Some(bar) = self.slow.lock().expect("progress lock").take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_per_second_show_once_a_model_wrote_some() {
        assert_eq!(rate(0, Duration::from_secs(10)), "");
        assert_eq!(rate(900, Duration::from_secs(10)), ", 90 tok/s");
        let mut p = Phase::new("generate", 4);
        p.done = 1;
        p.tokens = 512;
        let line = p.line();
        assert!(line.starts_with("generate: 1/4 (25%), "), "{line}");
        assert!(line.ends_with(" tok/s"), "{line}");
    }
}
