//! The CLI's [`Reporter`]: indicatif bars on stderr.
//!
//! One bar per phase, and below it one spinner line per unit in flight (one per worker of
//! a `-j N` run, showing what it runs and for how long); hidden when stderr is not a
//! terminal or with `--quiet`.

use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::log::Committed;
use crate::reporter::Reporter;
use crate::settings::Printer;

/// Draws progress bars for the core's long work.
pub struct ProgressReporter {
    multi: MultiProgress,
    bar: Mutex<Option<ProgressBar>>,
    /// The spinner of each unit in flight, by label.
    running: Mutex<Vec<(String, ProgressBar)>>,
}

impl ProgressReporter {
    /// A reporter that draws only when `printer` allows it.
    pub fn new(printer: &Printer) -> Self {
        let target = if printer.progress {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Self {
            multi: MultiProgress::with_draw_target(target),
            bar: Mutex::new(None),
            running: Mutex::new(Vec::new()),
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

impl Reporter for ProgressReporter {
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
}

/// A spinner on stderr for one slow step with no measurable progress (e.g. creating the
/// Python environment); hidden when `printer` draws no progress. Finishes when dropped.
pub(crate) fn spinner(printer: &Printer, message: &str) -> Spinner {
    let bar = if printer.progress {
        ProgressBar::new_spinner().with_message(message.to_string())
    } else {
        ProgressBar::hidden()
    };
    bar.enable_steady_tick(Duration::from_millis(120));
    Spinner(bar)
}

/// See [`spinner`].
pub(crate) struct Spinner(ProgressBar);

impl Drop for Spinner {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// The managed Python environment (`sandbox::pyenv`), saying so and spinning while it is
/// created on first use.
pub(crate) fn python_env(printer: &Printer) -> Result<std::path::PathBuf, crate::sandbox::SandboxError> {
    crate::sandbox::pyenv::ensure(|| {
        printer.info("creating the Python environment solutions run in (first use; a minute or two)");
        spinner(printer, "installing stages/execute/requirements.txt")
    })
}

/// The docker backend's runtime image, built (with a spinner) when missing.
pub(crate) fn runtime_image(
    printer: &Printer,
) -> Result<crate::sandbox::image::ImageRef, crate::sandbox::SandboxError> {
    crate::sandbox::image::RuntimeImage::ensure(|route| {
        let how = match route {
            crate::sandbox::image::Route::Dockerfile => "docker build of stages/execute/Dockerfile",
            crate::sandbox::image::Route::Debootstrap => {
                "offline: debootstrap of Debian bookworm, then an image import"
            }
        };
        printer.info(format!("building the sandbox's runtime image (first use; {how})"));
        spinner(printer, "building the runtime image")
    })
}

/// The sandbox backend of `--backend` (building the docker image on first use).
pub(crate) fn sandbox(
    printer: &Printer,
    kind: crate::cli::Backend,
) -> anyhow::Result<std::sync::Arc<dyn crate::sandbox::Backend>> {
    Ok(match kind {
        crate::cli::Backend::Local => std::sync::Arc::new(crate::sandbox::local::Local::new()?),
        crate::cli::Backend::Docker => {
            std::sync::Arc::new(crate::sandbox::docker::Docker::new(runtime_image(printer)?)?)
        }
    })
}
