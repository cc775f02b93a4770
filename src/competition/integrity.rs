//! The data files a run uses, checked against the blake3 their manifest records, at use.
//!
//! `execute` checks a competition's public files before it runs a solution on them, `grade`
//! (and `verify --rerun`, which re-grades) its private files before it scores against them
//! and its MLE-bench leaderboard (`mle_bench.leaderboard_blake3`) before it ranks against it,
//! `grade-file` and `grade-sample` likewise: a changed answer, or a manifest whose checksum
//! is wrong, stops the unit with [`DataError::Mismatch`] naming the file, both hashes and the
//! manifest field, instead of grading against data the manifest does not describe.
//!
//! Hashing gigabytes for every run would cost more than the run, so a file's hash is reused
//! ([`file_hash`], which the stages also hash the benchmark's files with for their unit keys)
//! while its identity is unchanged: device, inode, size, modification and status-change
//! times (the status-change time cannot be set back by `touch`, so a file rewritten and then
//! given its old modification time still counts as changed). Hashes are remembered in the
//! process and, across processes, in `<cache>/data-hashes.tsv` (`$ML2B_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/ml2b`, else `~/.cache/ml2b`), one line per file:
//! `blake3 \t dev \t ino \t size \t mtime_ns \t ctime_ns \t path`. The cache file is only a
//! shortcut: it is rewritten whole through a temporary file and a rename, a line that does
//! not parse is ignored, and failing to write it never fails a run.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{Competition, Side};

/// A data file that is not what its manifest says.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error(
        "{} does not match its manifest: blake3 {got}, but {} records {expected} ({field}); restore the file, or fix the manifest",
        path.display(), manifest.display()
    )]
    Mismatch {
        path: PathBuf,
        manifest: PathBuf,
        /// The manifest field that records the hash: `files.public`, `files.private`,
        /// `mle_bench.leaderboard_blake3`.
        field: &'static str,
        expected: String,
        got: String,
    },
    #[error("cannot read {}, which {} lists in {field}", path.display(), manifest.display())]
    Read {
        path: PathBuf,
        manifest: PathBuf,
        field: &'static str,
        #[source]
        source: std::io::Error,
    },
}

/// What identifies a file's content without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Identity {
    fn of(meta: &std::fs::Metadata) -> Self {
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.len(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        }
    }
}

type Known = HashMap<PathBuf, (Identity, String)>;

/// Hashes known in this process (loaded from the cache file on first use).
static KNOWN: Mutex<Option<Known>> = Mutex::new(None);

impl Competition {
    /// Checks every file the manifest lists on `side` against its recorded blake3.
    pub fn verify_files(&self, side: Side) -> Result<(), DataError> {
        let (files, field) = match side {
            Side::Public => (&self.manifest.files.public, "files.public"),
            Side::Private => (&self.manifest.files.private, "files.private"),
        };
        for (name, expected) in files {
            self.verify_file(&self.file(side, name), expected, field)?;
        }
        Ok(())
    }

    /// Checks one file against the blake3 that the manifest's `field` records; returns it.
    pub(crate) fn verify_file(
        &self,
        path: &Path,
        expected: &str,
        field: &'static str,
    ) -> Result<crate::store::Hash, DataError> {
        let got = blake3_of(path).map_err(|source| DataError::Read {
            path: path.to_path_buf(),
            manifest: self.manifest_path.clone(),
            field,
            source,
        })?;
        if got != expected {
            return Err(DataError::Mismatch {
                path: path.to_path_buf(),
                manifest: self.manifest_path.clone(),
                field,
                expected: expected.to_string(),
                got,
            });
        }
        Ok(got.parse().expect("the cache holds 64 hex digits"))
    }
}

/// The file's blake3, from the cache while its identity is unchanged: what every reader of
/// the benchmark's files hashes them with (the stages' unit keys name task texts and
/// answers by it), so that a file is hashed once, not once per unit and once more here.
pub(crate) fn file_hash(path: &Path) -> std::io::Result<crate::store::Hash> {
    let hex = blake3_of(path)?;
    Ok(hex.parse().expect("the cache holds 64 hex digits"))
}

fn blake3_of(path: &Path) -> std::io::Result<String> {
    let path = std::fs::canonicalize(path)?;
    let identity = Identity::of(&std::fs::metadata(&path)?);
    let mut guard = KNOWN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let known = guard.get_or_insert_with(load_cache);
    if let Some((seen, hash)) = known.get(&path)
        && *seen == identity
    {
        return Ok(hash.clone());
    }
    // The file may have changed while it was read: remember the hash only if it did not.
    let hash = crate::store::hash_file(&path)?.to_hex();
    if Identity::of(&std::fs::metadata(&path)?) == identity {
        known.insert(path, (identity, hash.clone()));
        save_cache(known);
    }
    Ok(hash)
}

fn cache_file() -> Option<PathBuf> {
    let env = |k| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let dir = env("ML2B_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("ml2b")))
        .or_else(|| env("HOME").map(|d| d.join(".cache/ml2b")))?;
    Some(dir.join("data-hashes.tsv"))
}

fn load_cache() -> Known {
    let Some(text) = cache_file().and_then(|f| std::fs::read_to_string(f).ok()) else {
        return Known::new();
    };
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<(PathBuf, (Identity, String))> {
    let mut f = line.splitn(7, '\t');
    let hash = f.next()?.to_string();
    let identity = Identity {
        dev: f.next()?.parse().ok()?,
        ino: f.next()?.parse().ok()?,
        size: f.next()?.parse().ok()?,
        mtime_ns: f.next()?.parse().ok()?,
        ctime_ns: f.next()?.parse().ok()?,
    };
    let path = PathBuf::from(f.next()?);
    let valid = hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    valid.then_some((path, (identity, hash)))
}

fn save_cache(known: &Known) {
    let Some(file) = cache_file() else { return };
    let mut text = String::new();
    for (path, (i, hash)) in known {
        let Some(path) = path.to_str().filter(|p| !p.contains(['\t', '\n'])) else {
            continue;
        };
        text.push_str(&format!(
            "{hash}\t{}\t{}\t{}\t{}\t{}\t{path}\n",
            i.dev, i.ino, i.size, i.mtime_ns, i.ctime_ns
        ));
    }
    let write = || -> std::io::Result<()> {
        let dir = file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let tmp = tempfile::NamedTempFile::new_in(dir)?;
        std::fs::write(tmp.path(), text)?;
        tmp.persist(&file).map_err(|e| e.error)?;
        Ok(())
    };
    if let Err(e) = write() {
        tracing::debug!("cannot write the data-hash cache {}: {e}", file.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_line_round_trips_and_garbage_is_ignored() {
        let i = Identity {
            dev: 1,
            ino: 2,
            size: 3,
            mtime_ns: 4,
            ctime_ns: -5,
        };
        let hash = "a".repeat(64);
        let line = format!("{hash}\t1\t2\t3\t4\t-5\t/data/x y.csv");
        assert_eq!(
            parse_line(&line),
            Some((PathBuf::from("/data/x y.csv"), (i, hash)))
        );
        assert_eq!(parse_line("zz\t1\t2\t3\t4\t5\t/p"), None);
        assert_eq!(parse_line("garbage"), None);
    }

    #[test]
    fn a_changed_file_is_hashed_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.csv");
        std::fs::write(&path, "a,b\n1,2\n").unwrap();
        let first = blake3_of(&path).unwrap();
        assert_eq!(first, blake3::hash(b"a,b\n1,2\n").to_hex().to_string());
        // Same size, and the old modification time put back: the status-change time moved.
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::fs::write(&path, "a,b\n1,3\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        assert_eq!(
            blake3_of(&path).unwrap(),
            blake3::hash(b"a,b\n1,3\n").to_hex().to_string()
        );
    }
}
