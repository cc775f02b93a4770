//! The shape of `src/` that the layers rely on, checked on the source itself: the core
//! never reaches up into the stages or the commands, and no command drives another
//! through its clap types (they call the pipeline).

use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The file's lines with `//` comments cut off (enough for paths: no string in `src/`
/// spells a `crate::` path).
fn code_lines(path: &Path) -> Vec<(usize, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split("//").next().unwrap_or("").to_string()))
        .collect()
}

#[test]
fn the_core_never_imports_the_stages_or_the_commands() {
    let core = [
        "query",
        "log",
        "store",
        "metrics",
        "sandbox",
        "providers",
        "events",
        "record",
    ];
    let mut found = Vec::new();
    for dir in core {
        for file in rust_files(&src().join(dir)) {
            for (n, line) in code_lines(&file) {
                if line.contains("crate::stages") || line.contains("crate::commands") {
                    found.push(format!("{}:{n}: {}", file.display(), line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "core modules reach up:\n{}", found.join("\n"));
}

#[test]
fn no_command_builds_a_clap_struct() {
    let literal = regex::Regex::new(r"\b[A-Z]\w*Args\s*\{").unwrap();
    let mut found = Vec::new();
    for file in rust_files(&src().join("commands")) {
        for (n, line) in code_lines(&file) {
            let destructuring = line.trim_start().starts_with("let ");
            if literal.is_match(&line) && !destructuring {
                found.push(format!("{}:{n}: {}", file.display(), line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "commands build clap structs:\n{}",
        found.join("\n")
    );
}
