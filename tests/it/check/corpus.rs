//! Reads the labelled corpus (`tests/fixtures/leakage/*.py`) and scores the leakage detector on it.
//!
//! Each file starts with header comments: `# expect: kind, kind` (or `none`), `# format:
//! modular|mono`, optionally `# note: ...` and `# known-gap: why`. A known gap is a file whose
//! expectation the detector is known not to meet; it stays in the metrics as the miss or false
//! alarm it is. Invariant: expectations are never derived from the detector's output.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ml2b::check::{FindingKind, Format, check};

pub struct Case {
    /// File name; files named `heldout_*` were written after the detector was frozen.
    pub name: String,
    pub format: Format,
    pub expected: BTreeSet<FindingKind>,
    pub known_gap: Option<String>,
    pub source: String,
}

impl Case {
    pub fn held_out(&self) -> bool {
        self.name.starts_with("heldout_")
    }

    /// The kinds the checker reports on this file.
    pub fn found(&self) -> BTreeSet<FindingKind> {
        check(&self.source, self.format)
            .into_iter()
            .map(|f| f.kind)
            .collect()
    }
}

fn header<'a>(source: &'a str, key: &str) -> Option<&'a str> {
    source
        .lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix(&format!("# {key}:")).map(str::trim))
}

pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/leakage")
}

/// The report printed by the test and the example: all files, development files, held-out files.
pub fn report(cases: &[Case]) -> String {
    let dev: Vec<&Case> = cases.iter().filter(|c| !c.held_out()).collect();
    let held: Vec<&Case> = cases.iter().filter(|c| c.held_out()).collect();
    let mut out = Metrics::compute(cases.iter()).table("all", cases.len());
    out.push('\n');
    out.push_str(&Metrics::compute(dev.iter().copied()).table("development", dev.len()));
    out.push('\n');
    out.push_str(&Metrics::compute(held.iter().copied()).table("held-out", held.len()));
    out
}

/// Every corpus file, sorted by name. Panics on a malformed header (a broken corpus is a bug).
pub fn load() -> Vec<Case> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("corpus directory")
        .map(|e| e.expect("corpus entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let source = std::fs::read_to_string(&path).expect("readable corpus file");
            let expect = header(&source, "expect").unwrap_or_else(|| panic!("{name}: no `# expect:` header"));
            let expected = if expect == "none" {
                BTreeSet::new()
            } else {
                expect
                    .split(',')
                    .map(|k| {
                        k.trim()
                            .parse::<FindingKind>()
                            .unwrap_or_else(|e| panic!("{name}: {e}"))
                    })
                    .collect()
            };
            let format = header(&source, "format")
                .unwrap_or_else(|| panic!("{name}: no `# format:` header"))
                .parse::<Format>()
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let known_gap = header(&source, "known-gap").map(str::to_string);
            Case {
                name,
                format,
                expected,
                known_gap,
                source,
            }
        })
        .collect()
}

#[derive(Default, Clone, Copy)]
pub struct Counts {
    pub tp: usize,
    pub fp: usize,
    pub fn_: usize,
}

impl Counts {
    pub fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }

    pub fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
}

/// Per-file, per-kind confusion counts of the three leakage kinds, plus their sum.
pub struct Metrics {
    pub per_kind: Vec<(FindingKind, Counts)>,
    pub overall: Counts,
    /// (file, kind, "missed" | "false alarm") for every disagreement on a leakage kind.
    pub errors: Vec<(String, FindingKind, &'static str)>,
}

impl Metrics {
    pub fn compute<'a>(cases: impl Iterator<Item = &'a Case>) -> Metrics {
        let kinds: Vec<FindingKind> = FindingKind::ALL.into_iter().filter(|k| k.is_leakage()).collect();
        let mut per_kind: Vec<(FindingKind, Counts)> =
            kinds.iter().map(|k| (*k, Counts::default())).collect();
        let mut errors = Vec::new();
        for case in cases {
            let found = case.found();
            for (kind, counts) in per_kind.iter_mut() {
                match (case.expected.contains(kind), found.contains(kind)) {
                    (true, true) => counts.tp += 1,
                    (false, true) => {
                        counts.fp += 1;
                        errors.push((case.name.clone(), *kind, "false alarm"));
                    }
                    (true, false) => {
                        counts.fn_ += 1;
                        errors.push((case.name.clone(), *kind, "missed"));
                    }
                    (false, false) => {}
                }
            }
        }
        let overall = per_kind.iter().fold(Counts::default(), |acc, (_, c)| Counts {
            tp: acc.tp + c.tp,
            fp: acc.fp + c.fp,
            fn_: acc.fn_ + c.fn_,
        });
        Metrics {
            per_kind,
            overall,
            errors,
        }
    }

    pub fn table(&self, title: &str, files: usize) -> String {
        let mut out = String::new();
        writeln!(
            out,
            "{title}: leakage detector on {files} corpus files (per file and kind)"
        )
        .unwrap();
        writeln!(
            out,
            "{:<38} {:>3} {:>3} {:>3} {:>9} {:>7}",
            "kind", "TP", "FP", "FN", "precision", "recall"
        )
        .unwrap();
        let rows = self
            .per_kind
            .iter()
            .map(|(k, c)| (k.as_str(), *c))
            .chain([("overall (micro)", self.overall)]);
        for (name, c) in rows {
            writeln!(
                out,
                "{:<38} {:>3} {:>3} {:>3} {:>9.3} {:>7.3}",
                name,
                c.tp,
                c.fp,
                c.fn_,
                c.precision(),
                c.recall()
            )
            .unwrap();
        }
        for (file, kind, what) in &self.errors {
            writeln!(out, "  {what}: {kind} in {file}").unwrap();
        }
        out
    }
}
