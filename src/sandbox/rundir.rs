//! Where runs are staged on the host: one private folder per run, under one parent per
//! user, so that nothing a run stages (its code, the harness, its outputs) is visible to
//! other users of the host, even after ml2b was killed before it could clean up.
//!
//! ```text
//! $TMPDIR/ml2b-runs-<uid>/               mode 0711, owned by <uid>: reachable, not listable
//!     <pidns>-<pid>-<random>/            mode 0700, owned by the user the run's processes
//!         sandbox/  harness, code, spec      run as (the local backend's per-run uid
//!         out/      the outputs              when ml2b is root): nobody else may enter
//! ```
//!
//! `<pidns>` is the inode of the pid namespace of the ml2b process that made the folder
//! and `<pid>` its pid. Each ml2b process, on its first run, removes the folders of
//! processes of its own pid namespace that no longer exist ([`sweep`]): the leftovers of a
//! killed ml2b. A folder of another pid namespace is never touched (its pid means nothing
//! here). A parent that exists but is not a directory owned by this user is refused.
//! Callers of a backend keep their own copies of a run's code and outputs in folders of
//! the same kind ([`scratch_dir`]).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::error::{SandboxError, io};

/// The private folder of one run, removed when dropped.
pub(super) struct RunDir {
    dir: tempfile::TempDir,
}

impl RunDir {
    /// Makes a run's folder (mode 0700), handed to `owner` when given; sweeps the parent
    /// once per process.
    pub(super) fn create(owner: Option<(u32, u32)>) -> Result<Self, SandboxError> {
        let dir = scratch_dir()?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .map_err(io("handing the run folder to the sandbox user".into()))?;
        }
        Ok(Self { dir })
    }

    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A private folder (mode 0700) in the runs' parent, named like a run's folder, so that it
/// is swept if ml2b is killed: for what callers of a backend keep of a run (its code, its
/// delivered outputs). Removed when dropped.
pub fn scratch_dir() -> Result<tempfile::TempDir, SandboxError> {
    let parent = parent()?;
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| sweep(&parent));
    tempfile::Builder::new()
        .prefix(&format!("{}-{}-", pid_namespace(), std::process::id()))
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(&parent)
        .map_err(io(format!("creating a run folder in {}", parent.display())))
}

/// `$TMPDIR/ml2b-runs-<uid>`, made if missing, checked (a directory of this user's, not a
/// link) and set to mode 0711.
fn parent() -> Result<PathBuf, SandboxError> {
    let uid = std::fs::metadata("/proc/self")
        .map_err(io("reading /proc/self".into()))?
        .uid();
    let parent = std::env::temp_dir().join(format!("ml2b-runs-{uid}"));
    match std::fs::create_dir(&parent) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            return Err(io(format!("creating {}", parent.display()))(e));
        }
        _ => {}
    }
    let meta = std::fs::symlink_metadata(&parent).map_err(io(format!("reading {}", parent.display())))?;
    if !meta.is_dir() || meta.uid() != uid {
        return Err(SandboxError::Unavailable(format!(
            "{} is not a folder of user {uid}: remove it (someone else may have made it to see the runs)",
            parent.display()
        )));
    }
    std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o711))
        .map_err(io(format!("chmod {}", parent.display())))?;
    Ok(parent)
}

/// The inode of this process's pid namespace (`0` when it cannot be read).
pub(super) fn pid_namespace() -> u64 {
    std::fs::metadata("/proc/self/ns/pid").map_or(0, |m| m.ino())
}

/// Removes the run folders in `parent` made by processes of this pid namespace that no
/// longer exist. Best effort: what cannot be removed is left for the next time.
pub(super) fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let namespace = pid_namespace().to_string();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let mut fields = name.to_str().unwrap_or_default().splitn(3, '-');
        let (Some(ns), Some(pid)) = (fields.next(), fields.next()) else {
            continue;
        };
        let gone = !pid.is_empty()
            && pid.bytes().all(|b| b.is_ascii_digit())
            && !Path::new("/proc").join(pid).exists();
        if ns == namespace && gone {
            tracing::info!(
                "removing the run folder {} left by ml2b process {pid}",
                entry.path().display()
            );
            // The local backend's output folder may be a tmpfs of its own (as root).
            unmount(&entry.path().join("out"));
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Detaches a file system mounted at `path`, if one is (best effort).
pub(super) fn unmount(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return;
    };
    // SAFETY: a valid, NUL-terminated path; failure (nothing mounted there) is ignored.
    unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH | libc::UMOUNT_NOFOLLOW) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_folders_of_dead_processes_of_this_namespace_are_swept() {
        let parent = tempfile::tempdir().unwrap();
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        dead.wait().unwrap();
        let ns = pid_namespace();
        let names = [
            format!("{ns}-{}-abc", dead.id()),
            format!("{ns}-{}-abc", std::process::id()),
            format!("{}-{}-abc", ns + 1, dead.id()),
            "unrelated".to_string(),
        ];
        for n in &names {
            std::fs::create_dir_all(parent.path().join(n).join("out")).unwrap();
        }
        sweep(parent.path());
        let left: Vec<bool> = names.iter().map(|n| parent.path().join(n).exists()).collect();
        assert_eq!(left, [false, true, true, true]);
    }
}
