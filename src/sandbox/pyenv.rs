//! The managed Python environment solutions run in: a virtual environment made on first
//! use from the system interpreter and `assets/execute/requirements.txt` (compiled in, see
//! [`super::assets`]), and reused while neither changes.
//!
//! Location: `$ML2B_VENV`, default `/var/tmp/ml2b-venv`. Base interpreter:
//! `$ML2B_BASE_PYTHON`, else `/usr/bin/python3` (the sandbox mounts only system folders, so
//! the base must not live under a home directory), else `python3` on `PATH`. The folder's
//! `.ml2b-stamp` holds the base's path, a newline and the requirements verbatim (trailing
//! newlines trimmed); `scripts/python-env` keeps the same stamp, so either may create the
//! environment and the other reuses it. `$ML2B_PYTHON` skips all of this.
//!
//! An external agent with a `requirements` lock gets an environment of its own the same way
//! ([`ensure_env`], [`agent_venv_dir`]), installed with `--no-deps`: exactly the lock.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::error::SandboxError;

fn base_python() -> PathBuf {
    if let Some(p) = std::env::var_os("ML2B_BASE_PYTHON") {
        return PathBuf::from(p);
    }
    let system = Path::new("/usr/bin/python3");
    if system.is_file() {
        system.to_path_buf()
    } else {
        PathBuf::from("python3")
    }
}

/// The environment's folder.
pub fn venv_dir() -> PathBuf {
    std::env::var_os("ML2B_VENV").map_or_else(|| PathBuf::from("/var/tmp/ml2b-venv"), PathBuf::from)
}

/// The Python to run solutions with, creating the environment when needed. `on_create` is
/// called before a (slow) creation starts; what it returns (e.g. a spinner) is dropped when
/// the creation ends.
pub fn ensure<G>(on_create: impl FnOnce() -> G) -> Result<PathBuf, SandboxError> {
    if let Some(p) = std::env::var_os("ML2B_PYTHON") {
        return Ok(PathBuf::from(p));
    }
    let env = Env {
        dir: venv_dir(),
        requirements: super::assets::REQUIREMENTS,
        name: "assets/execute/requirements.txt",
        no_deps: false,
    };
    ensure_env(&env, on_create)
}

/// A virtual environment to make (or reuse) from a requirements text.
pub struct Env<'a> {
    pub dir: PathBuf,
    pub requirements: &'a str,
    /// What the requirements are, for errors (their file).
    pub name: &'a str,
    /// The requirements are a complete lock: install exactly them (`pip --no-deps`).
    pub no_deps: bool,
}

/// Where the environment of the external agent `name` lives: `$ML2B_AGENTS_VENVS/<name>`,
/// default `/var/tmp/ml2b-agents/<name>`.
pub fn agent_venv_dir(name: &str) -> PathBuf {
    std::env::var_os("ML2B_AGENTS_VENVS")
        .map_or_else(|| PathBuf::from("/var/tmp/ml2b-agents"), PathBuf::from)
        .join(name)
}

/// The Python of `env`, creating the environment when its stamp (the base's path and the
/// requirements) is not what it holds.
pub fn ensure_env<G>(env: &Env<'_>, on_create: impl FnOnce() -> G) -> Result<PathBuf, SandboxError> {
    let io = |what: String| move |source| SandboxError::Io { what, source };
    let req = env.requirements;
    let base = base_python();
    let want = format!("{}\n{}", base.display(), req.trim_end_matches('\n'));
    let venv = &env.dir;
    let python = venv.join("bin/python");
    let stamp = venv.join(".ml2b-stamp");
    let have = std::fs::read_to_string(&stamp).unwrap_or_default();
    if python.is_file() && have.trim_end_matches('\n') == want {
        return Ok(python);
    }
    let _progress = on_create();
    let run = |cmd: &mut Command, what: &str| -> Result<(), SandboxError> {
        let out = cmd.output().map_err(io(what.to_string()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(SandboxError::Unavailable(format!(
                "{what} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )))
        }
    };
    if venv.exists() {
        std::fs::remove_dir_all(venv).map_err(io(format!("removing the stale {}", venv.display())))?;
    }
    run(
        Command::new(&base).args(["-m", "venv"]).arg(venv),
        &format!(
            "creating the Python environment with {} (Debian: apt-get install python3-venv)",
            base.display()
        ),
    )?;
    let requirements = super::assets::materialize("requirements.txt", req)?;
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]);
    if env.no_deps {
        pip.arg("--no-deps");
    }
    pip.arg("-r").arg(&requirements);
    run(
        &mut pip,
        &format!("installing {} (needs PyPI on first use)", env.name),
    )?;
    std::fs::write(&stamp, &want).map_err(io(format!("writing {}", stamp.display())))?;
    Ok(python)
}
