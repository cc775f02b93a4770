//! Static checks on an ML2B submission (MODULAR_PREDICT or MONO_PREDICT), run before executing it.
//!
//! [`check`] parses the source with tree-sitter's Python grammar and runs four passes:
//! - `syntax`: what CPython would reject (tree-sitter repairs errors and accepts some Python 2);
//! - `loader`: what ML2B's loader drops or keeps at the top level (dropped code, global mutable
//!   state, `global` statements) and network imports anywhere in the file;
//! - `signatures`: the functions the format needs and how many positional arguments they take;
//! - `leakage`: an abstract interpretation of the contract functions that follows where training
//!   rows and validation rows flow, to find validation leakage and selection on training rows.
//!
//! Invariants:
//! - `check` accepts any input and always returns findings: a parser that cannot be set up or
//!   gives up is reported as one `SyntaxError` finding on line 1 ([`try_check`] returns it as a
//!   typed [`CheckError`]). Analysis time is bounded (a step budget in the leakage pass) and runs
//!   on its own large-stack thread, so deeply nested input cannot overflow the caller's stack.
//! - Findings are sorted by (line, kind, message); no (kind, line, message) appears twice, and the
//!   leakage pass reports each (kind, line) once.
//! - Lines are 1-based lines of `source`; a finding about the whole file (a missing function) is
//!   on line 1.
//! - When the source has a syntax error, only `SyntaxError` findings are returned: the loader
//!   rejects such a file before anything else matters, and the other passes would read a tree
//!   that tree-sitter repaired by guessing.

mod finding;
mod leakage;
mod loader;
mod signatures;
mod syntax;

pub use crate::events::{Format, ParseFormatError};
pub use finding::{CheckError, Finding, FindingKind, ParseFindingKindError};

/// Runs every check; a parser failure becomes a `SyntaxError` finding on line 1.
pub fn check(source: &str, format: Format) -> Vec<Finding> {
    try_check(source, format).unwrap_or_else(|e| {
        vec![Finding::new(
            FindingKind::SyntaxError,
            1,
            format!("could not parse the file: {e}"),
        )]
    })
}

/// Stack for the analysis thread: the passes recurse over the syntax tree, and debug builds
/// use large frames, so deeply nested expressions would overflow a default 2 MiB test thread.
const ANALYSIS_STACK: usize = 256 * 1024 * 1024;

/// Runs every check, reporting a parser that cannot be set up or gives up as an error.
///
/// The work runs on a scoped thread with a large stack (reserved, not committed); if that thread
/// cannot be started it runs on the calling thread.
pub fn try_check(source: &str, format: Format) -> Result<Vec<Finding>, CheckError> {
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("ml2b-static-check".into())
            .stack_size(ANALYSIS_STACK)
            .spawn_scoped(scope, || run_checks(source, format));
        match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => run_checks(source, format),
        }
    })
}

fn run_checks(source: &str, format: Format) -> Result<Vec<Finding>, CheckError> {
    let tree = syntax::parse(source)?;
    let root = tree.root_node();
    let mut out = syntax::errors(root, source);
    if out.is_empty() {
        let kept = loader::check(root, source, &mut out);
        signatures::check(&kept, source, format, &mut out);
        leakage::check(root, source, format, &kept, &mut out);
    }
    out.sort_by(|a, b| (a.line, a.kind, &a.message).cmp(&(b.line, b.kind, &b.message)));
    let mut seen = std::collections::HashSet::new();
    out.retain(|f| seen.insert((f.kind, f.line, f.message.clone())));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_serialize_in_snake_case_and_are_sorted() {
        let src = "import requests\nx = 1 + 1\ndef train_and_predict(data, X_val):\n    return X_val\n";
        let found = check(src, Format::Mono);
        assert_eq!(found.iter().map(|f| f.line).collect::<Vec<_>>(), vec![1, 2]);
        let json = serde_json::to_string(&found[0]).unwrap();
        assert!(
            json.starts_with(r#"{"kind":"network_import","line":1,"message":"#),
            "{json}"
        );
        assert_eq!(serde_json::to_string(&Format::Modular).unwrap(), r#""modular""#);
    }

    #[test]
    fn kinds_and_formats_parse_from_their_names() {
        for kind in FindingKind::ALL {
            assert_eq!(kind.as_str().parse::<FindingKind>(), Ok(kind));
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{kind}\""));
        }
        assert!("leakage".parse::<FindingKind>().is_err());
        assert_eq!("MONO_PREDICT".parse::<Format>(), Ok(Format::Mono));
        assert_eq!("modular".parse::<Format>(), Ok(Format::Modular));
        assert_eq!("both".parse::<Format>(), Err(ParseFormatError("both".into())));
    }

    #[test]
    fn syntax_errors_suppress_other_findings() {
        let src = "import requests\nx = [\ndef train(data):\n    return 1\n";
        let found = check(src, Format::Modular);
        assert!(!found.is_empty());
        assert!(
            found.iter().all(|f| f.kind == FindingKind::SyntaxError),
            "{found:?}"
        );
    }

    #[test]
    fn pathological_inputs_stay_fast_and_shallow() {
        let terms = vec!["X_val['a'].mean()"; 2000].join(" + ");
        let deep =
            format!("def train_and_predict(data, X_val):\n    x = X_val['b'] - ({terms})\n    return x\n");
        let found = check(&deep, Format::Mono);
        assert!(
            found.iter().all(|f| f.kind != FindingKind::SyntaxError),
            "{found:?}"
        );
        let mut nest = String::from("def train_and_predict(data, X_val):\n");
        for i in 0..12 {
            nest.push_str(&format!("{}for i{i} in range(3):\n", "    ".repeat(i + 1)));
        }
        nest.push_str(&format!(
            "{}data = h1(data, X_val)\n    return data\n",
            "    ".repeat(13)
        ));
        for d in 1..8 {
            nest.push_str(&format!(
                "def h{d}(a, b):\n    for k in range(2):\n        a = h{}(a, b)\n        a = h{}(b, a)\n    return a\n",
                d + 1,
                d + 1
            ));
        }
        let started = std::time::Instant::now();
        let _ = check(&nest, Format::Mono);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "took {:?}",
            started.elapsed()
        );
    }

    #[test]
    fn empty_and_odd_inputs_do_not_panic() {
        for src in [
            "",
            "\n\n",
            "def",
            "class A(:\n",
            "\u{feff}import os\n",
            "x = '\u{00e9}'\n",
            "if 1:\n\tpass\n",
        ] {
            let _ = check(src, Format::Modular);
            let _ = check(src, Format::Mono);
        }
    }
}
