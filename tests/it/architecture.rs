//! The shape of `src/` that the layers rely on, checked on the source itself (the import
//! graph of [`crate::module_graph`]): every rule of the picture in `src/lib.rs`'s module
//! docs, transitively — a module that may not depend on another may not reach it through a
//! third either — and no cycle between files. A broken rule names the chain of imports,
//! file and line, that breaks it.

use std::path::{Path, PathBuf};

use crate::module_graph::{Edge, Graph, rust_files};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn graph() -> Graph {
    Graph::read(&src())
}

/// The top-level module of a file under `src/` (`stages/runner.rs` → `stages`).
fn module(file: &str) -> &str {
    file.split('/').next().unwrap_or(file).trim_end_matches(".rs")
}

/// One rule: no file of the modules `from` reaches a file of the modules `never`.
struct Rule {
    what: &'static str,
    from: &'static [&'static str],
    never: &'static [&'static str],
}

/// Everything above the core, the layers that run and drive stages, and the top.
const ABOVE_CORE: &[&str] = &[
    "stages",
    "config",
    "cluster",
    "pipeline",
    "preflight",
    "record",
    "report",
    "viewer",
    "settings",
    "cli",
    "commands",
];

/// The rules of the picture in `src/lib.rs`, bottom up.
const RULES: &[Rule] = &[
    Rule {
        what: "the terminal, the errors and the backoff are leaves",
        from: &["terminal", "error", "backoff"],
        never: &[
            "store",
            "log",
            "events",
            "metrics",
            "manifest",
            "competition",
            "sandbox",
            "providers",
            "query",
            "check",
            "progress",
            "stages",
            "config",
            "cluster",
            "pipeline",
            "preflight",
            "record",
            "report",
            "viewer",
            "settings",
            "cli",
            "commands",
        ],
    },
    Rule {
        what: "the store reaches nothing above it",
        from: &["store"],
        never: &[
            "log",
            "events",
            "metrics",
            "manifest",
            "competition",
            "sandbox",
            "providers",
            "query",
            "check",
            "progress",
            "stages",
            "config",
            "cluster",
            "pipeline",
            "preflight",
            "record",
            "report",
            "viewer",
            "settings",
            "cli",
            "commands",
        ],
    },
    Rule {
        what: "the events are the vocabulary below everything that runs: they reach only the log and the store",
        from: &["events", "log"],
        never: &[
            "metrics",
            "manifest",
            "competition",
            "sandbox",
            "providers",
            "query",
            "check",
            "stages",
            "config",
            "cluster",
            "pipeline",
            "preflight",
            "record",
            "report",
            "viewer",
            "settings",
            "cli",
            "commands",
        ],
    },
    Rule {
        what: "the statistics are pure",
        from: &["metrics"],
        never: &[
            "store",
            "log",
            "manifest",
            "competition",
            "sandbox",
            "providers",
            "query",
            "check",
            "progress",
            "stages",
            "config",
            "cluster",
            "pipeline",
            "preflight",
            "record",
            "report",
            "viewer",
            "settings",
            "cli",
            "commands",
        ],
    },
    Rule {
        what: "the core never reaches up into what runs, reads or drives the stages",
        from: &[
            "store",
            "log",
            "events",
            "metrics",
            "manifest",
            "competition",
            "sandbox",
            "providers",
            "query",
            "check",
            "progress",
        ],
        never: ABOVE_CORE,
    },
    Rule {
        what: "the providers answer requests and run nothing",
        from: &["providers"],
        never: &["sandbox"],
    },
    Rule {
        what: "the sandbox runs code and asks no model",
        from: &["sandbox"],
        never: &["providers"],
    },
    Rule {
        what: "the stages never reach the engines, the pipeline, the read side or the command line",
        from: &["stages"],
        never: &[
            "config",
            "cluster",
            "pipeline",
            "preflight",
            "record",
            "report",
            "viewer",
            "settings",
            "cli",
            "commands",
        ],
    },
    Rule {
        what: "the engines sit below the pipeline and never call back up",
        from: &["config", "cluster"],
        never: &[
            "pipeline",
            "preflight",
            "record",
            "report",
            "viewer",
            "settings",
            "cli",
            "commands",
        ],
    },
    Rule {
        what: "the pipeline is handed resolved settings and never sees the command line",
        from: &["pipeline", "preflight"],
        never: &["record", "report", "viewer", "settings", "cli", "commands"],
    },
    Rule {
        what: "the read side (show, view, report) reads the store and never runs a stage",
        from: &["record", "report", "viewer"],
        never: &[
            "sandbox",
            "providers",
            "stages",
            "config",
            "cluster",
            "pipeline",
            "preflight",
            "settings",
            "cli",
            "commands",
        ],
    },
    Rule {
        what: "only the settings and the commands see the clap types",
        from: &["settings"],
        never: &["commands"],
    },
];

/// `from`'s first chain of imports to a file of `never`, as lines of `file:line path`.
fn breaks(graph: &Graph, rule: &Rule) -> Vec<String> {
    let mut found = Vec::new();
    for file in graph.files.iter().filter(|f| rule.from.contains(&module(f))) {
        for (to, chain) in graph.reach(file) {
            if rule.never.contains(&module(&to)) {
                found.push(format!("{file} reaches {to}: {}", show(&chain)));
            }
        }
    }
    found
}

fn show(chain: &[Edge]) -> String {
    chain
        .iter()
        .map(|e| format!("{}:{} ({})", e.from, e.line, e.path))
        .collect::<Vec<_>>()
        .join(" → ")
}

#[test]
fn every_layer_rule_holds_transitively() {
    let graph = graph();
    assert!(
        graph.files.len() > 100,
        "the graph read {} files",
        graph.files.len()
    );
    let mut found = Vec::new();
    for rule in RULES {
        for line in breaks(&graph, rule) {
            found.push(format!("{}: {line}", rule.what));
        }
    }
    assert!(
        found.is_empty(),
        "{} imports break the layers:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn only_the_command_line_sees_the_clap_types() {
    let graph = graph();
    let allowed = ["cli", "settings", "commands"];
    let found: Vec<String> = graph
        .edges
        .iter()
        .filter(|e| e.to == "cli.rs" && !allowed.contains(&module(&e.from)))
        .map(|e| format!("{}:{} ({})", e.from, e.line, e.path))
        .collect();
    assert!(
        found.is_empty(),
        "below the commands, files see crate::cli:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_two_files_import_each_other_even_through_others() {
    let cycles = graph().cycles();
    assert!(
        cycles.is_empty(),
        "files in import cycles (a child's use of its own mod.rs included):\n{}",
        cycles
            .iter()
            .map(|c| c.join(" ⇄ "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn lib_rs_only_declares_the_modules() {
    let text = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let code: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with("#!["))
        .filter(|l| !l.starts_with("pub mod ") && !l.starts_with("mod "))
        .collect();
    assert!(
        code.is_empty(),
        "src/lib.rs holds more than module declarations: {code:?}"
    );
}

#[test]
fn the_graph_sees_imports_of_every_kind() {
    // The reader is a small parser: check it on the forms the rules rely on.
    let graph = graph();
    let has = |from: &str, to: &str| graph.edges.iter().any(|e| e.from == from && e.to == to);
    // `use crate::a::{b::C, d}` groups, through a re-export to the defining file.
    assert!(has("pipeline.rs", "cluster/engine.rs"));
    assert!(has("sandbox/job.rs", "events/vocabulary.rs"));
    // `super::` paths, and a path in code (`crate::error::chain(…)`), not a `use`.
    assert!(has("cluster/plan.rs", "cluster/arrays.rs"));
    assert!(has("providers/mod.rs", "error.rs"));
    // `#[cfg(test)]` code is not part of the graph.
    assert!(!graph.files.iter().any(|f| f.ends_with("_tests.rs")));
    // Declaring a child is not importing it.
    assert!(!has("lib.rs", "stages/mod.rs"));
}

#[test]
fn a_rule_broken_through_a_third_file_is_named_with_its_chain() {
    // The checks themselves can fail: a tree where the events reach a stage through the
    // sandbox, and two files that import each other.
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("lib.rs", "pub mod events;\npub mod sandbox;\npub mod stages;\n"),
        ("events/mod.rs", "mod vocabulary;\npub use vocabulary::Format;\n"),
        (
            "events/vocabulary.rs",
            "use crate::sandbox::run;\npub enum Format {}\n",
        ),
        ("sandbox/mod.rs", "pub fn run() { crate::stages::go() }\n"),
        ("stages/mod.rs", "pub mod a;\npub mod b;\npub fn go() {}\n"),
        ("stages/a.rs", "use super::b::B;\npub struct A;\n"),
        ("stages/b.rs", "use super::a::A;\npub struct B;\n"),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let graph = Graph::read(dir.path());
    let events = RULES.iter().find(|r| r.from == ["events", "log"]).unwrap();
    assert_eq!(
        breaks(&graph, events),
        [
            "events/mod.rs reaches sandbox/mod.rs: events/mod.rs:2 (events::vocabulary::Format) → \
             events/vocabulary.rs:1 (sandbox::run)",
            "events/mod.rs reaches stages/mod.rs: events/mod.rs:2 (events::vocabulary::Format) → \
             events/vocabulary.rs:1 (sandbox::run) → sandbox/mod.rs:1 (stages::go)",
            "events/vocabulary.rs reaches sandbox/mod.rs: events/vocabulary.rs:1 (sandbox::run)",
            "events/vocabulary.rs reaches stages/mod.rs: events/vocabulary.rs:1 (sandbox::run) → \
             sandbox/mod.rs:1 (stages::go)",
        ]
    );
    assert_eq!(graph.cycles(), [["stages/a.rs", "stages/b.rs"]]);
}

#[test]
fn no_command_builds_a_clap_struct() {
    let literal = regex::Regex::new(r"\b[A-Z]\w*Args\s*\{").unwrap();
    let mut found = Vec::new();
    for file in rust_files(&src().join("commands")) {
        for (n, line) in std::fs::read_to_string(&file).unwrap().lines().enumerate() {
            let line = line.split("//").next().unwrap_or("");
            let destructuring = line.trim_start().starts_with("let ");
            if literal.is_match(line) && !destructuring {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "commands build clap structs:\n{}",
        found.join("\n")
    );
}
