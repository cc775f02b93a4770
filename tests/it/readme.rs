//! The README's set-up commands are the ones CI and a newcomer run.

use std::path::Path;

/// The first code block after the line `heading` in README.md.
fn block_after(heading: &str) -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let after = readme
        .split_once(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no line {heading:?}"))
        .1;
    let fenced = after.split_once("```").expect("a code block follows").1;
    let body = fenced.split_once('\n').unwrap().1;
    body.split_once("```").unwrap().0.trim().to_string()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn ci_runs_the_readmes_test_command() {
    let command = block_after("Run the tests:");
    assert_eq!(command, "scripts/test");
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l.trim() == command),
        ".ci/run does not run the README's test command {command:?}:\n{ci}"
    );
    assert!(root().join(command).is_file());
}

#[test]
fn the_readmes_first_command_is_a_script_here() {
    let command = block_after("## Set up");
    assert_eq!(command, "scripts/run");
    assert!(root().join(command).is_file());
}
