//! Running an external agent (`--agent external:NAME`): a program nobody here wrote, with
//! the task, the public data and a way to its model, and nothing else.
//!
//! The local backend (bubblewrap) runs it with the same isolation as a solution's run
//! (`local`: namespaces, seccomp, the uid of its own, the limits, a cleared environment),
//! laid out as ML2B's agent containers are:
//!
//! ```text
//! /home/instructions.txt   the unit's prompt in the pair's language (read-only)
//! /home/data/              the competition's public files (read-only)
//! /home/agent/             the agent's folder from manifests/agents.toml (read-only)
//! /home/submission/        where it leaves submission.py (or submission.csv)
//! /home/logs/              anything it wants kept (a journal): stored with the run
//! /home/workspace/         scratch; HOME
//! /sandbox/relay.py        the relay: 127.0.0.1:3128 → /sandbox/proxy.sock → the gateway
//! ```
//! The only way out is the model gateway: the relay of `--network proxy` runs
//! (`assets/execute/relay.py`) listens on the sandbox's loopback and passes each connection
//! through a Unix socket to a listener the caller serves ([`AgentJob::serve`]), so
//! `OPENAI_BASE_URL` (`http://127.0.0.1:3128/v1`) and `ANTHROPIC_BASE_URL` reach it and
//! nothing else does: no interface but the loopback, no DNS. Read-write is `/home` alone
//! (a size-checked folder of the run's own, as a solution's `/out`), `/tmp` and `/dev/shm`.
//! What is kept after the run: `submission/` and `logs/` (regular files only; a link is
//! never followed), stdout and stderr (head and tail).

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use super::error::{SandboxError, io};
use super::job::Limits;
use super::local::{Local, finish, run_group, run_watched, sandbox_uid, venv_root};
use super::network::PROXY_SOCKET;
use super::rundir::RunDir;
use super::seccomp;
use super::steps::is_root;

/// The loopback port the relay listens on inside the sandbox (the gateway's address there).
pub const GATEWAY_PORT: u16 = super::network::PROXY_PORT;

/// One external agent's run.
pub struct AgentJob {
    /// The Python the agent runs with: its own environment, or the managed one.
    pub python: PathBuf,
    /// The agent's folder (`/home/agent`).
    pub agent_dir: PathBuf,
    /// Its command; a first word that is not a path is found in the environment's `bin/`,
    /// then the system's.
    pub command: Vec<String>,
    /// `/home/instructions.txt`.
    pub instructions: Vec<u8>,
    /// The competition's public files (`/home/data`).
    pub public_dir: PathBuf,
    /// Wall clock (the agent's time limit), memory, processes, and what `/home` may hold.
    pub limits: Limits,
    /// Variables the agent gets besides the run's own (`PATH`, `HOME`, the gateway's).
    pub env: Vec<(String, String)>,
    /// Serves the gateway on the listener (bound where the relay reaches it) until the
    /// caller stops it; called before the agent starts.
    pub serve: Box<dyn Fn(UnixListener) -> Result<(), SandboxError> + Send + Sync>,
}

/// How an agent's run ended.
#[derive(Debug)]
pub struct AgentRun {
    /// None when it was killed (the time limit, a signal).
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// `/home` went past the output limits and the run was killed.
    pub over_limits: Option<String>,
    pub wall_seconds: f64,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// `submission/` and `logs/` as the agent left them (regular files only), in the
    /// caller's folder.
    pub kept: PathBuf,
}

/// The folders an agent may write, created for it.
const WRITABLE: [&str; 3] = ["submission", "logs", "workspace"];

impl Local {
    /// Runs `job`; what it leaves is copied to `out_dir` (`submission/`, `logs/`).
    pub fn run_agent(&self, job: &AgentJob, out_dir: &Path) -> Result<AgentRun, SandboxError> {
        let uid = sandbox_uid();
        let owner = is_root().then_some((uid, uid));
        let private = RunDir::create(owner)?;
        let staged = stage(private.path(), job, owner)?;
        let listener =
            UnixListener::bind(&staged.socket).map_err(io(format!("binding {}", staged.socket.display())))?;
        std::fs::set_permissions(&staged.socket, std::fs::Permissions::from_mode(0o666))
            .map_err(io("opening the gateway's socket to the agent".into()))?;
        (job.serve)(listener)?;
        let group = run_group(&job.limits);
        let filter =
            seccomp::memfd(seccomp::Sockets::Inet).map_err(io("writing the seccomp filter".into()))?;
        let mut cmd = self.base(&job.limits, uid, &filter)?;
        mounts(&mut cmd, job, &staged);
        cmd.args(["--remount-ro", "/", "--chdir", "/home/workspace", "--"]);
        cmd.arg(&job.python);
        cmd.arg("/sandbox/relay.py");
        cmd.arg(program(&job.command[0], &job.python));
        cmd.args(&job.command[1..]);
        let cmd = finish(cmd, &filter);
        let exited = run_watched(cmd, group, filter, &job.limits, &staged.home)?;
        let usage = super::steps::Usage::of(&staged.home, &job.limits);
        let over_limits = usage.over(&job.limits);
        let kept = out_dir.join("kept");
        if over_limits.is_none() {
            for dir in ["submission", "logs"] {
                copy_files(&staged.home.join(dir), &kept.join(dir))?;
            }
        }
        Ok(AgentRun {
            exit_code: if exited.timed_out {
                None
            } else {
                exited.status.code()
            },
            timed_out: exited.timed_out,
            over_limits,
            wall_seconds: exited.wall_seconds,
            stdout: exited.stdout.kept().to_vec(),
            stderr: exited.stderr.kept().to_vec(),
            kept,
        })
    }
}

/// What a run is staged as in its private folder.
struct Staged {
    relay: PathBuf,
    socket: PathBuf,
    instructions: PathBuf,
    home: PathBuf,
}

fn stage(dir: &Path, job: &AgentJob, owner: Option<(u32, u32)>) -> Result<Staged, SandboxError> {
    let inputs = dir.join("sandbox");
    std::fs::create_dir_all(&inputs).map_err(io(format!("creating {}", inputs.display())))?;
    let chmod = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode))
            .map_err(io(format!("chmod {}", p.display())))
    };
    chmod(&inputs, 0o755)?;
    let staged = Staged {
        relay: inputs.join("relay.py"),
        socket: inputs.join("proxy.sock"),
        instructions: inputs.join("instructions.txt"),
        home: dir.join("home"),
    };
    for (path, bytes) in [
        (&staged.relay, super::assets::RELAY.as_bytes()),
        (&staged.instructions, &job.instructions[..]),
    ] {
        std::fs::write(path, bytes).map_err(io(format!("writing {}", path.display())))?;
        chmod(path, 0o644)?;
    }
    for sub in std::iter::once("").chain(WRITABLE) {
        let path = staged.home.join(sub);
        std::fs::create_dir_all(&path).map_err(io(format!("creating {}", path.display())))?;
        chmod(&path, 0o755)?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&path, Some(uid), Some(gid))
                .map_err(io("handing the agent's home to the sandbox user".into()))?;
        }
    }
    Ok(staged)
}

/// The agent's mounts and environment (after [`Local::base`]).
fn mounts(cmd: &mut std::process::Command, job: &AgentJob, staged: &Staged) {
    let venv = venv_root(&job.python);
    cmd.arg("--ro-bind").arg(&venv).arg(&venv);
    cmd.arg("--bind").arg(&staged.home).arg("/home");
    cmd.arg("--ro-bind")
        .arg(&staged.instructions)
        .arg("/home/instructions.txt");
    cmd.arg("--ro-bind").arg(&job.public_dir).arg("/home/data");
    cmd.arg("--ro-bind").arg(&job.agent_dir).arg("/home/agent");
    cmd.arg("--ro-bind").arg(&staged.relay).arg("/sandbox/relay.py");
    cmd.arg("--bind").arg(&staged.socket).arg(PROXY_SOCKET);
    let path = format!("{}:/usr/bin:/bin", venv.join("bin").display());
    let fixed = [
        ("PATH", path.as_str()),
        ("HOME", "/home/workspace"),
        ("TMPDIR", "/tmp"),
    ];
    for (k, v) in fixed {
        cmd.args(["--setenv", k, v]);
    }
    for (k, v) in &job.env {
        cmd.args(["--setenv", k, v]);
    }
}

/// The program of a command: a path as it is, `python`/`python3` the agent's Python, else
/// the first of its environment's `bin/` and the system's folders that has it (the relay
/// executes it by path).
fn program(first: &str, python: &Path) -> PathBuf {
    if first.contains('/') {
        return PathBuf::from(first);
    }
    if first == "python" || first == "python3" {
        return python.to_path_buf();
    }
    let venv_bin = venv_root(python).join("bin");
    [venv_bin.as_path(), Path::new("/usr/bin"), Path::new("/bin")]
        .iter()
        .map(|d| d.join(first))
        .find(|p| p.is_file())
        .unwrap_or_else(|| Path::new("/usr/bin").join(first))
}

/// Copies the regular files below `from` to `to` (links and anything else are left).
fn copy_files(from: &Path, to: &Path) -> Result<(), SandboxError> {
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    std::fs::create_dir_all(to).map_err(io(format!("creating {}", to.display())))?;
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_files(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)
                .map_err(io(format!("keeping {}", entry.path().display())))?;
        }
    }
    Ok(())
}
