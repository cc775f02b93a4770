//! Every command of README.md and of the guide in `docs/` runs, so the documentation cannot
//! rot.
//!
//! The convention (docs/README.md states it for writers):
//! - a fenced block whose info string is `sh` is run by bash (`-euo pipefail`), the blocks of
//!   one page in order in one fresh folder, with this build's `ml2b` first on `PATH`,
//!   `ML2B_ROOT` the repository (its manifests and bundled data) and `ML2B_STORE` a store in
//!   that folder; it must exit 0. Such blocks use the bundled data offline and small
//!   selections, so the whole guide runs in minutes.
//! - a `sh` block whose first line is `# not run: <why>` (an API key, a GPU, a cluster, a
//!   server that never exits, a placeholder) is not run, but each of its `ml2b …` commands
//!   must parse: the command and every flag exist as written.
//! - the README's two set-up blocks (`scripts/run`, `scripts/test`) name scripts of the
//!   repository (`readme.rs` checks what they are).
//!
//! Output, TOML and file trees go in `text` or `toml` blocks, which are not run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one block may run.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(600);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, then every page of `docs/` in name order.
fn pages() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("the guide is in docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    let mut all = vec![root().join("README.md")];
    all.extend(docs);
    all
}

/// A fenced block: its info string, its first line's number and its text.
#[derive(Debug)]
struct Block {
    info: String,
    line: usize,
    body: String,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => {
                open = Some(Block {
                    info: line.trim_start().trim_start_matches('`').trim().to_string(),
                    line: i + 1,
                    body: String::new(),
                })
            }
            (Some(_), true) => out.push(open.take().unwrap()),
            (Some(b), false) => {
                b.body.push_str(line);
                b.body.push('\n');
            }
            (None, false) => {}
        }
    }
    assert!(open.is_none(), "an unclosed code block");
    out
}

/// The block's commands: lines joined across a trailing `\`, comments and blanks dropped.
fn commands(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in body.lines() {
        let line = line.trim_end();
        if let Some(part) = line.strip_suffix('\\') {
            current.push_str(part);
            current.push(' ');
            continue;
        }
        current.push_str(line);
        let command = std::mem::take(&mut current).trim().to_string();
        if !command.is_empty() && !command.starts_with('#') {
            out.push(command);
        }
    }
    out
}

/// `command` split as a POSIX shell splits words (quotes and backslashes; no expansion).
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => out.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    w.push(c);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => w.extend(chars.next()),
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word);
    out
}

/// Checks that `command` (`ml2b …`, up to a pipe or `;`) parses.
fn parses(command: &str) -> Result<(), String> {
    use clap::Parser;
    let first = command.split(['|', ';', '>']).next().unwrap_or_default();
    let first = first.split("&&").next().unwrap_or_default();
    ml2b::cli::Cli::try_parse_from(words(first))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Runs `body` in `dir` as a page's block runs (see the module docs).
fn run(body: &str, dir: &Path) -> Result<(), String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_ml2b")).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let stdout = dir.join(".block.stdout");
    let stderr = dir.join(".block.stderr");
    let mut child = Command::new("bash")
        .args(["-euo", "pipefail", "-c", body])
        .current_dir(dir)
        .env("PATH", path)
        .env("ML2B_ROOT", root())
        .env("ML2B_STORE", dir.join("store"))
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > BLOCK_TIMEOUT {
            let _ = child.kill();
            return Err(format!("still running after {BLOCK_TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if status.success() {
        return Ok(());
    }
    Err(format!(
        "{status}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        std::fs::read_to_string(&stdout).unwrap_or_default(),
        std::fs::read_to_string(&stderr).unwrap_or_default()
    ))
}

#[test]
fn every_command_of_the_readme_and_the_guide_runs() {
    let mut failures = Vec::new();
    let (mut ran, mut parsed) = (0, 0);
    for page in pages() {
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        let dir = tempfile::tempdir().unwrap();
        for block in blocks(&std::fs::read_to_string(&page).unwrap()) {
            if block.info != "sh" {
                continue;
            }
            let at = format!("{name}:{}", block.line);
            let body = block.body.trim();
            if body == "scripts/run" || body == "scripts/test" {
                if !root().join(body).is_file() {
                    failures.push(format!("{at}: {body} is not a script of the repository"));
                }
                continue;
            }
            for command in commands(body).iter().filter(|c| c.starts_with("ml2b ")) {
                parsed += 1;
                if let Err(e) = parses(command) {
                    failures.push(format!("{at}: `{command}` does not parse:\n{e}"));
                }
            }
            if body.starts_with("# not run:") {
                continue;
            }
            ran += 1;
            let started = Instant::now();
            let result = run(body, dir.path());
            println!("{at}: {:.1} s", started.elapsed().as_secs_f64());
            if let Err(e) = result {
                failures.push(format!("{at}: the block failed:\n{body}\n{e}"));
            }
        }
    }
    println!("{ran} blocks ran, {parsed} ml2b commands parsed");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        ran >= 10,
        "only {ran} blocks ran: the guide shows too little that can run"
    );
}

#[test]
fn the_splitter_splits_as_a_shell_does() {
    assert_eq!(
        words(r#"ml2b query "SELECT a, 'b' FROM t" --format 'csv' x\ y"#),
        ["ml2b", "query", "SELECT a, 'b' FROM t", "--format", "csv", "x y"]
    );
    assert_eq!(
        commands("# c\nml2b run \\\n  --model reference\n\nml2b show x\n"),
        ["ml2b run    --model reference", "ml2b show x"]
    );
}
