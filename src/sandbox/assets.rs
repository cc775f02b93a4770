//! The harness and its requirements, compiled into the binary: an installed `ml2b` needs
//! no source checkout to run solutions, and every event can name the exact harness by hash.

use std::path::PathBuf;

use super::error::SandboxError;

/// `assets/execute/harness.py`.
pub const HARNESS: &str = include_str!("../../assets/execute/harness.py");
/// `assets/grade/mle_bench_program.py`: runs MLE-bench's own grade.py in the sandbox.
pub const MLE_BENCH_PROGRAM: &str = include_str!("../../assets/grade/mle_bench_program.py");
/// `assets/execute/relay.py`: the way out of a `--network proxy` run (`super::network`).
pub const RELAY: &str = include_str!("../../assets/execute/relay.py");
/// `assets/execute/requirements.txt`.
pub const REQUIREMENTS: &str = include_str!("../../assets/execute/requirements.txt");

/// The blake3 of an asset, as recorded in unit keys.
pub fn hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// Writes `text` once to a content-named file in the temp folder and returns its path.
pub fn materialize(name: &str, text: &str) -> Result<PathBuf, SandboxError> {
    let path = std::env::temp_dir().join(format!("ml2b-{}-{name}", &hash(text)[..16]));
    if std::fs::read(&path).is_ok_and(|b| b == text.as_bytes()) {
        return Ok(path);
    }
    crate::store::write_atomic(&path, text.as_bytes()).map_err(|source| SandboxError::Io {
        what: format!("writing {}", path.display()),
        source,
    })?;
    Ok(path)
}
