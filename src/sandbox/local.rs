//! The `local` backend: bubblewrap (`bwrap`), resource limits from `prlimit`, and, when ml2b
//! runs as root, an unprivileged uid from `setpriv` (util-linux).
//!
//! The command is `prlimit --as --nproc --fsize --core=0 -- [setpriv --reuid=U --regid=U
//! --clear-groups --no-new-privs --] bwrap … --seccomp FD -- python /sandbox/harness.py …`,
//! with a uid `U` of the run's own when ml2b is root ([`sandbox_uid`]).
//! Inside: every namespace unshared (no network: only a loopback of its own; in a
//! `--network proxy` run the relay to the proxy listens on it, `super::network`), no nested
//! user namespace (`--disable-userns` from bubblewrap 0.8, and the seccomp filter of
//! [`seccomp`], which also refuses the kernel keyrings, mounting and `setns`), a new
//! session, a fresh `/proc`, a minimal `/dev`, read-only but for `/dev/shm`, a tmpfs of
//! [`SHM_BYTES`] (Docker's 64 MiB), the system's `/usr` and the managed Python
//! environment read-only, `/etc` reduced to the dynamic loader's cache, the root itself
//! read-only, `/tmp` a size-limited tmpfs, the harness, code and spec read-only under
//! `/sandbox`, the competition's public files read-only at `/data`, and the output folder
//! the only writable host path, at `/out`. The environment is cleared.
//!
//! Limits, for the run as a whole where the host allows it:
//! - wall clock: the run is killed at the limit; `--die-with-parent` and the pid namespace
//!   make every process of the run die with it;
//! - memory and processes: a control group of the run's own ([`RunGroup`]: `memory.max`,
//!   `pids.max`; cgroup v1 or v2) when ml2b may make one (as root, or with a delegated v2
//!   group); a run the kernel killed at the limit is `out_of_memory`. Always, per process:
//!   the address-space limit (a large allocation fails with `MemoryError`) and
//!   `RLIMIT_NPROC` (counted for the sandbox's uid). Where no group can be made, a warning
//!   says so once and only the per-process limits hold: then what a run keeps in files
//!   of memory is bounded by their sizes (`/tmp`, `/dev/shm`; bubblewrap's `/dev` is a
//!   tmpfs of no size of its own, hence read-only), and what it keeps in kernel objects no
//!   process maps (SysV shared memory, memfds) by nothing but the host;
//! - output: each written file by `RLIMIT_FSIZE`; the output folder's bytes and inodes
//!   (files and folders) by a tmpfs of its own sized to the limits when ml2b is root, and
//!   on every host by measuring the folder while the run goes on (every [`WATCH`]; past a
//!   limit the run is killed) and after it ends (over the limit: `constraint_violation`,
//!   and the outputs are deleted).
//!
//! The run's files are staged in a private folder ([`RunDir`]) that other users cannot
//! enter, and swept by the next ml2b if this one is killed.

use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::cgroup::RunGroup;
use super::error::{SandboxError, io};
use super::job::{Backend, Job, Limits, Run, SHM_BYTES};
use super::model_cache::{self, ModelCache};
use super::network::{PROXY_SOCKET, proxy_env};
use super::proxy::Link;
use super::rundir::{RunDir, unmount};
use super::seccomp;
use super::steps::{
    Captured, ENV, Ended, Usage, classify, deliver, drop_links, harness_argv, is_root, sockets, stage_run,
};
use crate::events::Outcome;

/// Runs started by this process (for [`sandbox_uid`]).
static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// The unprivileged uid (and gid) of a run when ml2b is root: one of its own, so that
/// `RLIMIT_NPROC`, which counts per uid, bounds each run alone and concurrent runs (`-j N`,
/// several ml2b processes) never share a budget. Drawn from 1,000,000 upwards, by this
/// process's pid and a counter, above any uid a system assigns to accounts.
pub(super) fn sandbox_uid() -> u32 {
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 64;
    1_000_000 + (std::process::id() % 50_000) * 64 + run
}

/// The bubblewrap backend.
#[derive(Clone, Debug)]
pub struct Local {
    bwrap: PathBuf,
    /// Whether this bubblewrap has `--disable-userns` (0.8.0 and later).
    disable_userns: bool,
}

/// Whether `bwrap --version` says 0.8 or later.
fn supports_disable_userns(bwrap: &Path) -> bool {
    let Ok(out) = Command::new(bwrap).arg("--version").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let version: Vec<u32> = text
        .split_whitespace()
        .last()
        .unwrap_or_default()
        .split('.')
        .map_while(|n| n.parse().ok())
        .collect();
    version.as_slice() >= [0, 8].as_slice()
}

impl Local {
    /// Finds `bwrap`, `prlimit` and (as root) `setpriv`, or says how to install them.
    pub fn new() -> Result<Self, SandboxError> {
        let bwrap = which("bwrap").ok_or_else(|| {
            SandboxError::Unavailable(
                "the local sandbox needs bubblewrap: install it (Debian/Ubuntu: `apt-get install bubblewrap`, Fedora: `dnf install bubblewrap`) or use --backend docker".into(),
            )
        })?;
        for tool in ["prlimit", "setpriv"] {
            if which(tool).is_none() {
                return Err(SandboxError::Unavailable(format!(
                    "the local sandbox needs `{tool}` from util-linux (Debian: `apt-get install util-linux`)"
                )));
            }
        }
        let disable_userns = supports_disable_userns(&bwrap);
        if !disable_userns {
            tracing::warn!(
                "bubblewrap is older than 0.8: nested user namespaces are closed by the seccomp filter only"
            );
        }
        Ok(Self {
            bwrap,
            disable_userns,
        })
    }

    fn command(&self, job: &Job, stage: &Staged, seccomp: &OwnedFd) -> Result<Command, SandboxError> {
        let mut cmd = self.base(&job.limits, stage.uid, seccomp)?;
        self.harness_mounts(&mut cmd, job, stage);
        // The root bwrap builds is a tmpfs: make it read-only once every mount point exists.
        cmd.args(["--remount-ro", "/", "--chdir", "/tmp", "--"]);
        cmd.args(harness_argv(job));
        Ok(finish(cmd, seccomp))
    }

    /// What every run under bubblewrap starts with: the limits, the unprivileged uid, the
    /// namespaces, the seccomp filter, the cleared environment ([`ENV`]), the system's
    /// folders read-only, `/proc`, a minimal `/dev`, `/dev/shm` and `/tmp`. The caller adds
    /// its mounts, then `--remount-ro / … -- PROGRAM`, then [`finish`]es the command.
    pub(super) fn base(&self, limits: &Limits, uid: u32, seccomp: &OwnedFd) -> Result<Command, SandboxError> {
        let root = is_root();
        let mut cmd = Command::new("prlimit");
        let nproc = if root {
            limits.processes
        } else {
            limits.processes + tasks_of(current_uid())
        };
        cmd.arg(format!("--as={}", limits.memory_bytes))
            .arg(format!("--nproc={nproc}"))
            .arg(format!("--fsize={}", limits.output_bytes))
            .arg("--core=0")
            .arg("--");
        if root {
            cmd.args(["setpriv", &format!("--reuid={uid}"), &format!("--regid={uid}")])
                .args(["--clear-groups", "--no-new-privs", "--"]);
        }
        cmd.arg(&self.bwrap);
        cmd.args(["--unshare-all", "--unshare-user"]);
        if self.disable_userns {
            cmd.arg("--disable-userns");
        }
        cmd.arg("--seccomp").arg(seccomp.as_raw_fd().to_string());
        cmd.args(["--die-with-parent", "--new-session", "--hostname", "sandbox"]);
        cmd.arg("--clearenv");
        for (k, v) in ENV {
            cmd.args(["--setenv", k, v]);
        }
        cmd.args(["--ro-bind", "/usr", "/usr"]);
        for dir in ["/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"] {
            match std::fs::symlink_metadata(dir) {
                Ok(m) if m.file_type().is_symlink() => {
                    let target = std::fs::read_link(dir).map_err(io(format!("reading the link {dir}")))?;
                    cmd.arg("--symlink").arg(target).arg(dir);
                }
                Ok(m) if m.is_dir() => {
                    cmd.args(["--ro-bind", dir, dir]);
                }
                _ => {}
            }
        }
        for file in ["/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime"] {
            cmd.args(["--ro-bind-try", file, file]);
        }
        cmd.args(["--proc", "/proc", "--dev", "/dev"]);
        cmd.args([
            "--size",
            &SHM_BYTES.to_string(),
            "--perms",
            "1777",
            "--tmpfs",
            "/dev/shm",
        ]);
        cmd.args(["--remount-ro", "/dev"]);
        cmd.args(["--size", &limits.output_bytes.to_string(), "--tmpfs", "/tmp"]);
        Ok(cmd)
    }

    /// A solution's run: the managed Python, the harness, code and spec under `/sandbox`,
    /// the GPUs, the model cache and the relay to the proxy when asked, the public files at
    /// `/data` and the output folder at `/out`.
    fn harness_mounts(&self, cmd: &mut Command, job: &Job, stage: &Staged) {
        // After /tmp: a venv under /tmp must not be hidden by the tmpfs.
        let venv = venv_root(&job.python);
        cmd.arg("--ro-bind").arg(&venv).arg(&venv);
        cmd.arg("--ro-bind")
            .arg(&stage.harness)
            .arg("/sandbox/harness.py");
        cmd.arg("--ro-bind").arg(&stage.code).arg("/sandbox/code.py");
        cmd.arg("--ro-bind").arg(&stage.spec).arg("/sandbox/spec.json");
        if let Some(gpus) = &job.gpus {
            for node in gpus.nodes() {
                cmd.args(["--dev-bind", &node, &node]);
            }
            cmd.args(["--setenv", "CUDA_VISIBLE_DEVICES", &gpus.visible()]);
        }
        if let Some(cache) = &job.model_cache {
            cmd.arg("--ro-bind").arg(&cache.dir).arg(model_cache::MOUNT);
            for (k, v) in ModelCache::env() {
                cmd.args(["--setenv", k, &v]);
            }
        }
        if job.proxy.is_some() {
            cmd.arg("--ro-bind").arg(&stage.relay).arg("/sandbox/relay.py");
            cmd.arg("--bind").arg(&stage.socket).arg(PROXY_SOCKET);
            for (k, v) in proxy_env() {
                cmd.args(["--setenv", k, &v]);
            }
        }
        cmd.arg("--ro-bind").arg(&job.public_dir).arg("/data");
        cmd.arg("--bind").arg(&stage.out).arg("/out");
    }
}

/// The command's own environment (bubblewrap's, not the run's), its pipes, and the seccomp
/// filter's descriptor passed on.
pub(super) fn finish(mut cmd: Command, seccomp: &OwnedFd) -> Command {
    cmd.env_clear().env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: the hook only calls fcntl, which is async-signal-safe.
    unsafe { cmd.pre_exec(seccomp::inherit(seccomp)) };
    cmd
}

fn which(tool: &str) -> Option<PathBuf> {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"]
        .iter()
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file())
}

fn current_uid() -> u32 {
    std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid())
}

/// Tasks (threads) the user owns now: `RLIMIT_NPROC` counts them all.
fn tasks_of(uid: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
        .map(|e| std::fs::read_dir(e.path().join("task")).map_or(1, |t| t.count() as u64))
        .sum()
}

/// The virtual environment holding `python` (`<venv>/bin/python`), not its target.
pub(super) fn venv_root(python: &Path) -> PathBuf {
    python
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| python.to_path_buf(), Path::to_path_buf)
}

/// Reads a pipe to its end, keeping its head and its tail ([`Captured`]).
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Captured> {
    std::thread::spawn(move || {
        let mut kept = Captured::default();
        let mut buf = [0u8; 8192];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            kept.push(&buf[..n]);
        }
        kept
    })
}

impl Backend for Local {
    fn name(&self) -> &'static str {
        "local"
    }

    fn run(&self, job: &Job, out_dir: &Path) -> Result<Run, SandboxError> {
        // Everything the sandbox user must read or write lives in one private folder
        // ([`RunDir`]); the outputs are copied to `out_dir` afterwards, so `out_dir` may be
        // anywhere.
        let uid = sandbox_uid();
        let private = RunDir::create(is_root().then_some((uid, uid)))?;
        let stage = Staged::new(private.path(), job, uid)?;
        let group = run_group(&job.limits);
        let link = job
            .proxy
            .as_ref()
            .map(|p| Link::open(p, &stage.socket))
            .transpose()?;
        let filter = seccomp::memfd(sockets(job)).map_err(io("writing the seccomp filter".into()))?;
        let cmd = self.command(job, &stage, &filter)?;
        let exited = run_watched(cmd, group, filter, &job.limits, &stage.out)?;
        // A solution may leave its outputs as links to host files: never follow them.
        drop_links(&stage.out);
        let ended = Ended {
            status: exited.status,
            timed_out: exited.timed_out,
            wall_seconds: exited.wall_seconds,
            stdout: &exited.stdout,
            stderr: &exited.stderr,
        };
        let mut run = classify(job, &stage.out, &ended);
        run.requests = link.map(Link::finish);
        if exited.oom_killed && run.outcome == Outcome::RuntimeError {
            run.outcome = Outcome::OutOfMemory;
            run.detail = Some(format!(
                "killed by the kernel at the run's {}-byte memory limit",
                job.limits.memory_bytes
            ));
        }
        deliver(run, job, &stage.out, out_dir)
    }
}

/// How a sandboxed command ended, and what it printed.
pub(super) struct Exited {
    pub status: std::process::ExitStatus,
    /// Killed at the wall-clock limit.
    pub timed_out: bool,
    pub wall_seconds: f64,
    /// The kernel killed it at its control group's memory limit.
    pub oom_killed: bool,
    pub stdout: Captured,
    pub stderr: Captured,
}

/// Spawns `cmd` (in the run's control `group` when there is one, the seccomp `filter`'s
/// descriptor closed here once the child holds it), reads its output and waits for it
/// under `limits`, measuring its output folder `out` ([`watch`]); anything of the run still
/// alive is killed before this returns.
pub(super) fn run_watched(
    mut cmd: Command,
    group: Option<RunGroup>,
    filter: OwnedFd,
    limits: &Limits,
    out: &Path,
) -> Result<Exited, SandboxError> {
    if let Some(group) = &group {
        // SAFETY: the hook only calls write(2), which is async-signal-safe.
        unsafe { cmd.pre_exec(group.join()) };
    }
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(io("starting bubblewrap".into()))?;
    drop(filter);
    let stdout = drain(child.stdout.take().expect("piped"));
    let stderr = drain(child.stderr.take().expect("piped"));
    let (status, timed_out) = watch(&mut child, limits, out, started)?;
    let wall_seconds = started.elapsed().as_secs_f64();
    let oom_killed = group.as_ref().is_some_and(RunGroup::oom_killed);
    // Kills anything of the run still alive before its outputs are read.
    drop(group);
    Ok(Exited {
        status,
        timed_out,
        wall_seconds,
        oom_killed,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

/// How often the output folder is measured while the run goes on.
const WATCH: Duration = Duration::from_millis(200);

/// Waits for the sandbox, killing it at the wall-clock limit (then `timed_out`) or when its
/// output folder grows past the output limits (which [`classify`] then reports).
fn watch(
    child: &mut std::process::Child,
    limits: &Limits,
    out: &Path,
    started: Instant,
) -> Result<(std::process::ExitStatus, bool), SandboxError> {
    let mut measured = started;
    loop {
        if let Some(status) = child.try_wait().map_err(io("waiting for the sandbox".into()))? {
            return Ok((status, false));
        }
        let timed_out = started.elapsed() >= limits.wall;
        let flooded = measured.elapsed() >= WATCH && {
            measured = Instant::now();
            Usage::of(out, limits).over(limits).is_some()
        };
        if timed_out || flooded {
            let _ = child.kill();
            let status = child.wait().map_err(io("reaping the sandbox".into()))?;
            return Ok((status, timed_out));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The control group of a run, or `None` (said once per process) where the host has none
/// to give: the limits are then per process only.
pub(super) fn run_group(limits: &Limits) -> Option<RunGroup> {
    static WARNED: std::sync::Once = std::sync::Once::new();
    match RunGroup::create(limits) {
        Ok(group) => Some(group),
        Err(e) => {
            WARNED.call_once(|| {
                tracing::warn!(
                    "the local sandbox cannot limit a run's memory and processes as a whole here ({}): each process of a run is limited on its own",
                    crate::error::chain(&e)
                );
            });
            None
        }
    }
}

/// The private folder of one run ([`RunDir`]): `sandbox/{spec.json,code.py,harness.py}`
/// (read-only inside) and `out/` (the sandbox user's only writable host folder): as root,
/// a tmpfs of its own as large as the output limit with as many inodes as the file limit
/// ([`mount_out`]), unmounted when dropped.
struct Staged {
    uid: u32,
    spec: PathBuf,
    code: PathBuf,
    harness: PathBuf,
    /// `--network proxy`: the relay and the socket to ml2b's link.
    relay: PathBuf,
    socket: PathBuf,
    out: PathBuf,
    mounted: bool,
}

impl Staged {
    fn new(dir: &Path, job: &Job, uid: u32) -> Result<Self, SandboxError> {
        let inputs = dir.join("sandbox");
        let mut staged = Self {
            uid,
            spec: inputs.join("spec.json"),
            code: inputs.join("code.py"),
            harness: inputs.join("harness.py"),
            relay: inputs.join("relay.py"),
            socket: inputs.join("proxy.sock"),
            out: dir.join("out"),
            mounted: false,
        };
        stage_run(job, &inputs, &staged.out, (staged.uid, staged.uid))?;
        if is_root() {
            static WARNED: std::sync::Once = std::sync::Once::new();
            match mount_out(&staged.out, job, uid) {
                Ok(()) => staged.mounted = true,
                Err(e) => WARNED.call_once(|| {
                    tracing::warn!(
                        "the output folder cannot be a size-limited tmpfs here ({}): its size is checked while the run goes on",
                        crate::error::chain(&e)
                    );
                }),
            }
        }
        Ok(staged)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if self.mounted {
            unmount(&self.out);
        }
    }
}

/// Mounts a tmpfs at `out` bounded by the output limits, owned by `uid`, mode 0755. It
/// holds a little more than the limits (64 KiB, and 2 inodes: its root and one past the
/// limit), so that a run that fills it is always over a limit ([`classify`] then says so)
/// and a run within them has room left for the harness's record.
fn mount_out(out: &Path, job: &Job, uid: u32) -> Result<(), SandboxError> {
    use std::os::unix::ffi::OsStrExt;
    let options = format!(
        "size={},nr_inodes={},mode=0755,uid={uid},gid={uid}",
        job.limits.output_bytes + (64 << 10),
        job.limits.output_files + 2
    );
    let c = |s: &[u8]| std::ffi::CString::new(s).expect("no NUL");
    let (target, options) = (c(out.as_os_str().as_bytes()), c(options.as_bytes()));
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    // SAFETY: valid NUL-terminated strings that outlive the call.
    let mounted = unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            flags,
            options.as_ptr().cast(),
        )
    };
    if mounted != 0 {
        return Err(io("mounting the output folder's tmpfs".into())(
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}
