//! The CLI's [`Progress`]: indicatif bars on stderr, and the printer's messages.
//!
//! One bar per phase, and below it one spinner line per unit in flight (one per worker of
//! a `-j N` run, showing what it runs and for how long); a spinner for a slow step with no
//! measurable progress (creating the Python environment, building the runtime image). All
//! hidden when stderr is not a terminal or with `--quiet`; messages go through the printer.

use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

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
        }
    }

    fn with_bar(&self, f: impl FnOnce(&ProgressBar)) {
        if let Some(bar) = self.bar.lock().expect("progress lock").as_ref() {
            f(bar);
        }
    }
}

fn style() -> ProgressStyle {
    ProgressStyle::with_template("{prefix:>12.cyan.bold} [{bar:30}] {pos}/{len} {elapsed_precise} {wide_msg}")
        .expect("valid template")
        .progress_chars("=> ")
}

impl Progress for ProgressBars {
    fn begin(&self, phase: &str, total: u64) {
        let bar = self.multi.add(
            ProgressBar::new(total)
                .with_style(style())
                .with_prefix(phase.to_string()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        *self.bar.lock().expect("progress lock") = Some(bar);
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

    fn unit_finished(&self, label: &str, _ok: bool) {
        let mut running = self.running.lock().expect("progress lock");
        if let Some(i) = running.iter().position(|(l, _)| l == label) {
            let (_, worker) = running.remove(i);
            worker.finish_and_clear();
            self.multi.remove(&worker);
        }
        drop(running);
        self.with_bar(|b| b.inc(1));
    }

    fn advance(&self, n: u64) {
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
