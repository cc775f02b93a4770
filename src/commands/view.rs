//! `ml2b view [--root DIR] [--port P] [--bind ADDR] [--bundle DIR]`: the store in a local,
//! read-only web viewer ([`crate::viewer`]), or its pages written as static files.
//!
//! With `--bundle DIR` nothing is served: every page is written under DIR
//! ([`crate::viewer::bundle`]), then the path of `DIR/index.html` is printed on stdout
//! (`--json`: the folder, pages, files and bytes).
//!
//! Opens the store (checking every segment) with the benchmark's manifests, binds, prints
//! on stderr that the viewer is read-only and where it listens (a warning when that is not a
//! loopback address), then the URL on stdout as one line (`http://127.0.0.1:8700/`; with
//! `--port 0` the port the system chose), and serves until the process is stopped.

use std::io::Write;
use std::net::SocketAddr;

use anyhow::Context;

use super::{ExitStatus, InputError};
use crate::competition::Benchmark;
use crate::settings::{GlobalSettings, ViewSettings};
use crate::viewer::Viewer;

/// Runs `ml2b view`.
pub(super) fn view(settings: &GlobalSettings, args: &ViewSettings) -> anyhow::Result<ExitStatus> {
    super::query::require_store(&settings.store)?;
    let bench = Benchmark::load(&args.root)?;
    match &args.bundle {
        Some(dir) => super::runtime()?.block_on(bundle(settings, dir, bench)),
        None => super::runtime()?.block_on(serve(settings, args, bench)),
    }
}

async fn bundle(
    settings: &GlobalSettings,
    dir: &std::path::Path,
    bench: Benchmark,
) -> anyhow::Result<ExitStatus> {
    let viewer = Viewer::open(settings.store.clone(), bench).await?;
    let progress = super::ProgressBars::new(&settings.printer);
    let written = match crate::viewer::bundle::write(viewer, dir, &progress).await {
        Err(e @ crate::viewer::bundle::BundleError::Exists(_)) => {
            return Err(InputError(e.to_string()).into());
        }
        other => other?,
    };
    let index = dir.join("index.html");
    if settings.printer.json {
        settings.printer.json(&serde_json::json!({
            "dir": dir, "index": index, "pages": written.pages, "files": written.files, "bytes": written.bytes,
        }))?;
    } else {
        settings.printer.info(format!(
            "wrote {} pages ({} files, {:.1} MB) to {}",
            written.pages,
            written.files,
            written.bytes as f64 / 1e6,
            dir.display()
        ));
        writeln!(settings.printer.stdout(), "{}", index.display())?;
    }
    Ok(ExitStatus::Success)
}

async fn serve(
    settings: &GlobalSettings,
    args: &ViewSettings,
    bench: Benchmark,
) -> anyhow::Result<ExitStatus> {
    let viewer = Viewer::open(settings.store.clone(), bench).await?;
    let listener = tokio::net::TcpListener::bind(args.address)
        .await
        .map_err(|e| InputError(format!("cannot listen on {}: {e}", args.address)))?;
    let address = listener.local_addr()?;
    // The message first: whoever waits for the URL then has both.
    announce(settings, address);
    let mut stdout = settings.printer.stdout();
    writeln!(stdout, "http://{address}/")?;
    stdout.flush()?;
    crate::viewer::serve(listener, viewer)
        .await
        .context("the viewer stopped")?;
    Ok(ExitStatus::Success)
}

fn announce(settings: &GlobalSettings, address: SocketAddr) {
    let store = settings.store.root().display();
    if address.ip().is_loopback() {
        settings.printer.info(format!(
            "viewing {store} read-only on {address}, bound to loopback only (stop with Ctrl-C)"
        ));
    } else {
        settings.printer.warn(format!(
            "bound to {address}, not a loopback address: every machine that can reach this one can read {store} (read-only)"
        ));
    }
}
