//! A control group per local run, so that the run's memory and processes are bounded as a
//! whole, not per process: `memory.max` / `memory.limit_in_bytes` (and, in cgroup v1,
//! `memory.memsw.limit_in_bytes`: no swap past it) at the memory limit, `pids.max` at the
//! process limit. The first process of the run (`prlimit`) joins the group before it
//! executes anything (writing `0` to the group's `cgroup.procs` from `pre_exec`, through a
//! descriptor opened beforehand), so every process of the run is in it.
//!
//! ```text
//! cgroup v2:  /sys/fs/cgroup/<ml2b's group>/ml2b-run-…/          memory.max, pids.max
//! cgroup v1:  /sys/fs/cgroup/memory/<ml2b's group>/ml2b-run-…/   memory.limit_in_bytes
//!             /sys/fs/cgroup/pids/<ml2b's group>/ml2b-run-…/     pids.max
//! ```
//!
//! Where the host does not allow it (no write access to the hierarchy, v2 without the
//! memory and pids controllers delegated to ml2b's group), [`RunGroup::create`] says why
//! and the caller falls back to the per-process limits alone. The groups are removed when
//! the run ends; those of an ml2b process that no longer exists (killed) are removed by the
//! next one of the same pid namespace ([`RunGroup::create`] sweeps once per process). The
//! group's name says whose it is: `ml2b-run-<pid namespace inode>-<pid>-<n>`.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::job::Limits;
use super::rundir::pid_namespace;

/// Why a run cannot have a control group of its own here.
#[derive(Debug, thiserror::Error)]
pub enum CgroupUnavailable {
    #[error("no memory and pids controllers of ml2b's own control group were found in /proc/self/cgroup")]
    NotFound,
    #[error("cgroup v2 has no {0} controller for ml2b's group (not delegated)")]
    NotDelegated(&'static str),
    #[error("{what} {}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The control group(s) of one run: one folder in v2, one per controller in v1.
pub(super) struct RunGroup {
    dirs: Vec<PathBuf>,
    /// `cgroup.procs` of each, opened for writing.
    procs: Vec<File>,
    /// Where the kernel counts OOM kills (`memory.events` or `memory.oom_control`).
    oom: PathBuf,
}

static RUNS: AtomicU32 = AtomicU32::new(0);

/// Where ml2b's own group is, per controller.
enum Hierarchy {
    V1 { memory: PathBuf, pids: PathBuf },
    V2(PathBuf),
}

fn hierarchy() -> Result<Hierarchy, CgroupUnavailable> {
    let text = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| CgroupUnavailable::Io {
        what: "reading",
        path: "/proc/self/cgroup".into(),
        source: e,
    })?;
    let root = Path::new("/sys/fs/cgroup");
    let (mut memory, mut pids, mut unified) = (None, None, None);
    for line in text.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let path = path.trim_start_matches('/');
        for c in controllers.split(',') {
            match c {
                "memory" => memory = Some(root.join("memory").join(path)),
                "pids" => pids = Some(root.join("pids").join(path)),
                _ => {}
            }
        }
        if controllers.is_empty() {
            unified = Some(path.to_string());
        }
    }
    match (memory, pids, unified) {
        (Some(memory), Some(pids), _) if memory.is_dir() && pids.is_dir() => {
            Ok(Hierarchy::V1 { memory, pids })
        }
        (_, _, Some(path)) if root.join("cgroup.controllers").is_file() => Ok(Hierarchy::V2(root.join(path))),
        _ => Err(CgroupUnavailable::NotFound),
    }
}

fn write(path: &Path, value: &str) -> Result<(), CgroupUnavailable> {
    std::fs::write(path, value).map_err(|e| CgroupUnavailable::Io {
        what: "writing",
        path: path.to_path_buf(),
        source: e,
    })
}

fn make(dir: &Path) -> Result<(), CgroupUnavailable> {
    std::fs::create_dir(dir).map_err(|e| CgroupUnavailable::Io {
        what: "creating",
        path: dir.to_path_buf(),
        source: e,
    })
}

impl RunGroup {
    /// Makes the group of a run with `limits`.
    pub(super) fn create(limits: &Limits) -> Result<Self, CgroupUnavailable> {
        let hierarchy = hierarchy()?;
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| match &hierarchy {
            Hierarchy::V1 { memory, pids } => [memory, pids].into_iter().for_each(|p| sweep(p)),
            Hierarchy::V2(parent) => sweep(parent),
        });
        let name = format!(
            "ml2b-run-{}-{}-{}",
            pid_namespace(),
            std::process::id(),
            RUNS.fetch_add(1, Ordering::Relaxed)
        );
        let mut group = Self {
            dirs: vec![],
            procs: vec![],
            oom: PathBuf::new(),
        };
        let memory = limits.memory_bytes.to_string();
        let processes = limits.processes.to_string();
        match hierarchy {
            Hierarchy::V1 { memory: m, pids: p } => {
                let (m, p) = (m.join(&name), p.join(&name));
                make(&m)?;
                group.dirs.push(m.clone());
                make(&p)?;
                group.dirs.push(p.clone());
                write(&m.join("memory.limit_in_bytes"), &memory)?;
                if m.join("memory.memsw.limit_in_bytes").exists() {
                    write(&m.join("memory.memsw.limit_in_bytes"), &memory)?;
                }
                write(&p.join("pids.max"), &processes)?;
                group.oom = m.join("memory.oom_control");
            }
            Hierarchy::V2(parent) => {
                let dir = parent.join(&name);
                make(&dir)?;
                group.dirs.push(dir.clone());
                let controllers = std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
                for c in ["memory", "pids"] {
                    if !controllers.split_whitespace().any(|x| x == c) {
                        return Err(CgroupUnavailable::NotDelegated(c));
                    }
                }
                write(&dir.join("memory.max"), &memory)?;
                write(&dir.join("memory.swap.max"), "0").ok();
                write(&dir.join("pids.max"), &processes)?;
                group.oom = dir.join("memory.events");
            }
        }
        for dir in &group.dirs {
            let path = dir.join("cgroup.procs");
            let file =
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(|e| CgroupUnavailable::Io {
                        what: "opening",
                        path,
                        source: e,
                    })?;
            group.procs.push(file);
        }
        Ok(group)
    }

    /// For `CommandExt::pre_exec`: moves the child into the group (`0` is "myself").
    pub(super) fn join(&self) -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
        let fds: Vec<i32> = self.procs.iter().map(AsRawFd::as_raw_fd).collect();
        move || {
            for &fd in &fds {
                // SAFETY: write(2) is async-signal-safe; `fd` was opened before the fork.
                if unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) } != 1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        }
    }

    /// Whether the kernel killed a process of the run at the memory limit.
    pub(super) fn oom_killed(&self) -> bool {
        std::fs::read_to_string(&self.oom)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.strip_prefix("oom_kill "))
            .any(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0))
    }
}

impl Drop for RunGroup {
    /// Kills what is left of the run and removes the group.
    fn drop(&mut self) {
        for dir in &self.dirs {
            remove(dir);
        }
    }
}

/// Kills the processes of the group `dir` and removes it (retrying while they die).
fn remove(dir: &Path) {
    for _ in 0..100 {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.lines().filter_map(|p| p.trim().parse::<i32>().ok()) {
            // SAFETY: kill(2) with a pid read from the run's own group.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    tracing::warn!("could not remove the control group {}", dir.display());
}

/// Removes the groups in `parent` of ml2b processes of this pid namespace that no longer
/// exist (a group of another pid namespace is left alone: its pid means nothing here).
fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("ml2b-run-")) else {
            continue;
        };
        let mut fields = rest.split('-');
        let (ns, pid) = (
            fields.next().unwrap_or_default(),
            fields.next().unwrap_or_default(),
        );
        let gone = !pid.is_empty()
            && pid.bytes().all(|b| b.is_ascii_digit())
            && !Path::new("/proc").join(pid).exists();
        if ns == pid_namespace().to_string() && gone {
            remove(&entry.path());
        }
    }
}
