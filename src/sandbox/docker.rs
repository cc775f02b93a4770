//! The `docker` backend: one throwaway container per run, made from the runtime image
//! ([`super::image`]) through the Docker Engine API on the local socket (bollard).
//!
//! The container has no network (`network_mode: none`: a loopback of its own only; in a
//! `--network proxy` run the relay to the proxy listens on it, `super::network`, and the
//! Unix socket to ml2b's link is `/sandbox/proxy.sock`), a
//! read-only root, every capability dropped, `no-new-privileges`, a non-root uid
//! ([`sandbox_user`]), `docker-init` as pid 1 (the harness is never pid 1, which would
//! ignore signals, and orphans are reaped), a private IPC namespace, the daemon's seccomp
//! profile with the local backend's filter ([`seccomp`]) stacked on it, and limits: memory
//! and memory+swap both the memory limit (no swap), CPUs ([`CPUS`]), the pids cgroup at the
//! process limit, `RLIMIT_FSIZE` at the output limit and no core files. Mounts, read-only
//! but `/out` and the tmpfs:
//!
//! ```text
//! <venv>     the managed Python environment, at its own path (its files name it)
//! /sandbox   harness.py, code.py, spec.json: staged copies in a private host folder
//! /data      the competition's public files
//! /out       a fresh host folder owned by the sandbox user: the only writable host path
//! /tmp       tmpfs as large as the output limit
//! /dev/shm   tmpfs of SHM_BYTES (64 MiB, Docker's default, set explicitly), as locally
//! ```
//! Both tmpfs count against the memory limit: their pages are charged to the container's
//! cgroup.
//!
//! The container's command is `python -c LOADER /sandbox/seccomp.bpf <the harness's command
//! line>`: the loader ([`seccomp::loader`]) loads ml2b's filter, then executes the
//! harness, so that a run refuses the same system calls with the same errors under both
//! backends, on top of whatever the daemon's default profile refuses (Docker 20.10, which
//! Debian bookworm ships, lets `AF_VSOCK` sockets and io_uring through; Docker 25 refuses
//! both). The daemon's own profile is checked when the backend starts: one that applies
//! none is said in a warning.
//!
//! The command line, environment and files are the local backend's ([`harness_argv`],
//! [`ENV`]), and the outcome is decided by the same rules ([`classify`]);
//! in addition a run the kernel killed at the memory limit (`State.OOMKilled`) that would
//! otherwise be a `runtime_error` is `out_of_memory`. Memory differs in kind: the local
//! backend bounds each process's address space, so a large allocation fails with
//! `MemoryError`; here the cgroup bounds what the whole run keeps resident (its tmpfs
//! files included), and the kernel kills at the limit instead.
//!
//! Lifecycle: create → attach (stdout and stderr, tails kept; the log driver is `none`, so
//! nothing is kept on the daemon's disk) → start → wait, bounded by the wall-clock limit,
//! past which the container is killed (SIGKILL) and the outcome is `timeout`, while the
//! output folder is measured (bytes and inodes, every [`WATCH`]; past a limit the
//! container is killed and the outcome is `constraint_violation`) → inspect → remove.
//! Unlike the local backend as root, `/out` is a plain host folder here (the daemon may not
//! see a mount made by ml2b): between two measurements a run can write past the output
//! limits, by at most what it writes in [`WATCH`]. A guard ([`Container`]) removes it on every path, errors and panics included.
//! Every container is labelled with its ml2b process ([`OWNER`]) and the blake3 of its code
//! ([`CODE_LABEL`]); [`Docker::new`] removes those whose ml2b process is gone (killed before
//! its guard could run).
//!
//! Every call to the daemon goes through [`with_client`] (`engine`, shared with the image),
//! which says why each runs on a thread and a runtime of its own.
//!
//! The daemon must share this host's filesystem (bind sources are host paths): a local
//! daemon, not a remote one nor ml2b itself in a container.

use std::collections::HashMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::{Duration, Instant};

use bollard::container::LogOutput;
use bollard::models::{
    ContainerCreateBody, DeviceRequest, HostConfig, HostConfigLogConfig, Mount, MountTypeEnum,
    ResourcesUlimits,
};
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, CreateContainerOptions, InspectContainerOptions,
    KillContainerOptionsBuilder, ListContainersOptionsBuilder, RemoveContainerOptionsBuilder,
    StartContainerOptions, WaitContainerOptions,
};
use futures::{Stream, StreamExt};
use tokio::runtime::Runtime;

use super::docker_api::{api, with_client};
use super::error::{SandboxError, io};
use super::image::{ImageRef, PYTHON};
use super::job::{Backend, Job, Limits, Run, SHM_BYTES};
use super::model_cache::{self, ModelCache};
use super::network::{PROXY_SOCKET, proxy_env};
use super::proxy::Link;
use super::rundir::RunDir;
use super::seccomp;
use super::steps::{self, Captured, ENV, Usage, classify, deliver, drop_links, harness_argv, stage_run};
use crate::events::Outcome;

/// The uid and gid of runs when ml2b is root: above the range the local backend draws its
/// per-run uids from (1,000,000 to 4,199,999), so that no local run's `RLIMIT_NPROC`
/// budget counts a container's processes. (Containers are bounded by their pids cgroup.)
const SANDBOX_UID: u32 = 4_200_000;
/// CPUs a run may use (fewer when the daemon has fewer): [`super::CPUS`], the thread count
/// the environment gives OpenMP and BLAS, so that a run is as fast, relative to its
/// wall-clock limit, as under the local backend, which sets no CPU limit.
const CPUS: i64 = super::CPUS as i64;
/// How long a killed container may take to stop, and its output to drain.
const GRACE: Duration = Duration::from_secs(30);
/// The label of every sandbox container: `<pid namespace>/<pid>` of the ml2b process that
/// made it.
pub const OWNER: &str = "ml2b.sandbox.owner";
/// The label naming the code a container runs: the blake3 of `code.py`, as hex.
pub const CODE_LABEL: &str = "ml2b.code";

/// The Docker backend.
#[derive(Clone, Debug)]
pub struct Docker {
    image: ImageRef,
    nano_cpus: i64,
}

impl Docker {
    /// Connects to the daemon (`/var/run/docker.sock`, or `DOCKER_HOST=unix://…`), checks
    /// that it has `image` (from [`super::image::RuntimeImage::ensure`]), and removes the
    /// containers left by ml2b processes that no longer exist.
    pub fn new(image: ImageRef) -> Result<Self, SandboxError> {
        with_client(|rt, client| {
            rt.block_on(async {
                if let Err(e) = client.inspect_image(&image.id).await {
                    return Err(match e {
                        bollard::errors::Error::DockerResponseServerError { status_code: 404, .. } => {
                            SandboxError::Unavailable(format!(
                                "the Docker daemon has no image {} ({}): build it again",
                                image.id, image.tag
                            ))
                        }
                        e => api(format!("inspecting the image {}", image.tag))(e),
                    });
                }
                let info = client
                    .info()
                    .await
                    .map_err(api("asking the Docker daemon for its CPUs".into()))?;
                sweep(client).await;
                warn_without_seccomp(info.security_options.as_deref().unwrap_or_default());
                let cpus = CPUS.min(info.ncpu.unwrap_or(1).max(1));
                Ok(Self {
                    image,
                    nano_cpus: cpus * 1_000_000_000,
                })
            })
        })
    }

    /// The image runs are made from.
    pub fn image(&self) -> &ImageRef {
        &self.image
    }

    /// Isolation, limits and mounts (see the module's documentation).
    fn host_config(&self, job: &Job, stage: &Staged, venv: &Path) -> HostConfig {
        // The daemon resolves nothing against our working directory: sources are absolute.
        let bind = |source: &Path, target: &Path, read_only: bool| Mount {
            target: Some(target.display().to_string()),
            source: Some(
                std::path::absolute(source)
                    .unwrap_or_else(|_| source.to_path_buf())
                    .display()
                    .to_string(),
            ),
            typ: Some(MountTypeEnum::BIND),
            read_only: Some(read_only),
            ..Default::default()
        };
        let ulimit = |name: &str, value: i64| ResourcesUlimits {
            name: Some(name.into()),
            soft: Some(value),
            hard: Some(value),
        };
        let bytes = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let memory = bytes(job.limits.memory_bytes);
        let output = bytes(job.limits.output_bytes);
        HostConfig {
            network_mode: Some("none".into()),
            memory: Some(memory),
            memory_swap: Some(memory),
            nano_cpus: Some(self.nano_cpus),
            pids_limit: Some(bytes(job.limits.processes)),
            ulimits: Some(vec![ulimit("fsize", output), ulimit("core", 0)]),
            readonly_rootfs: Some(true),
            tmpfs: Some(HashMap::from([(
                "/tmp".to_string(),
                format!("rw,nosuid,nodev,size={output},mode=1777"),
            )])),
            shm_size: Some(bytes(SHM_BYTES)),
            cap_drop: Some(vec!["ALL".into()]),
            security_opt: Some(vec!["no-new-privileges".into()]),
            init: Some(true),
            ipc_mode: Some("private".into()),
            oom_score_adj: Some(1000),
            device_requests: job.gpus.as_ref().map(|g| {
                vec![DeviceRequest {
                    driver: Some("nvidia".into()),
                    device_ids: Some(g.devices.iter().map(|d| d.index.to_string()).collect()),
                    capabilities: Some(vec![vec!["gpu".into()]]),
                    ..Default::default()
                }]
            }),
            log_config: Some(HostConfigLogConfig {
                typ: Some("none".into()),
                config: None,
            }),
            mounts: Some(
                [
                    bind(venv, venv, true),
                    bind(&stage.sandbox, Path::new("/sandbox"), true),
                    bind(&job.public_dir, Path::new("/data"), true),
                    bind(&stage.out, Path::new("/out"), false),
                ]
                .into_iter()
                // The relay's socket, writable (connecting to a socket writes to it).
                .chain(
                    job.proxy
                        .as_ref()
                        .map(|_| bind(&stage.sandbox.join("proxy.sock"), Path::new(PROXY_SOCKET), false)),
                )
                .chain(
                    job.model_cache
                        .as_ref()
                        .map(|c| bind(&c.dir, Path::new(model_cache::MOUNT), true)),
                )
                .collect(),
            ),
            ..Default::default()
        }
    }

    /// The container: the harness's command line and environment, as the sandbox user.
    fn config(&self, job: &Job, stage: &Staged, venv: &Path) -> ContainerCreateBody {
        let (uid, gid) = sandbox_user();
        ContainerCreateBody {
            image: Some(self.image.id.clone()),
            entrypoint: Some(entrypoint(job)),
            env: Some(env(job)),
            user: Some(format!("{uid}:{gid}")),
            working_dir: Some("/tmp".into()),
            hostname: Some("sandbox".into()),
            // A proxy run's relay listens on the loopback, which a disabled network lacks.
            network_disabled: Some(job.proxy.is_none()),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            labels: Some(HashMap::from([
                (OWNER.to_string(), owner()),
                (CODE_LABEL.to_string(), stage.code_hash.clone()),
            ])),
            host_config: Some(self.host_config(job, stage, venv)),
            ..Default::default()
        }
    }
}

impl Backend for Docker {
    fn name(&self) -> &'static str {
        "docker"
    }

    fn image(&self) -> Option<String> {
        Some(self.image.id.clone())
    }

    fn run(&self, job: &Job, out_dir: &Path) -> Result<Run, SandboxError> {
        let venv = venv_of(&job.python)?;
        let private = RunDir::create(None)?;
        let stage = Staged::new(private.path(), job)?;
        let link = job
            .proxy
            .as_ref()
            .map(|p| Link::open(p, &stage.sandbox.join("proxy.sock")))
            .transpose()?;
        let config = self.config(job, &stage, &venv);
        let ended = with_client(|rt, client| {
            let created = rt
                .block_on(client.create_container(None::<CreateContainerOptions>, config))
                .map_err(api("creating the sandbox container".into()))?;
            let container = Container {
                rt,
                client,
                id: created.id,
            };
            rt.block_on(container.run(&job.limits, &stage.out))
        })?;
        drop_links(&stage.out);
        // Docker reports death by signal N as exit code 128 + N, which `classify` reads back.
        let status = std::process::ExitStatus::from_raw((ended.exit_code & 0xff) << 8);
        let seen = steps::Ended {
            status,
            timed_out: ended.timed_out,
            wall_seconds: ended.wall_seconds,
            stdout: &ended.stdout,
            stderr: &ended.stderr,
        };
        let mut execution = classify(job, &stage.out, &seen);
        execution.requests = link.map(Link::finish);
        if ended.oom_killed && execution.outcome == Outcome::RuntimeError {
            execution.outcome = Outcome::OutOfMemory;
            execution.detail = Some(format!(
                "killed by the kernel at the {}-byte memory limit",
                job.limits.memory_bytes
            ));
        }
        deliver(execution, job, &stage.out, out_dir)
    }
}

/// The uid and gid of runs: [`SANDBOX_UID`] when ml2b is root (it hands `/out` over to
/// it), else ml2b's own, which owns `/out` already.
fn sandbox_user() -> (u32, u32) {
    match std::fs::metadata("/proc/self") {
        Ok(m) if m.uid() != 0 => (m.uid(), m.gid()),
        _ => (SANDBOX_UID, SANDBOX_UID),
    }
}

/// The value of [`OWNER`] for this process.
fn owner() -> String {
    format!("{}/{}", pid_namespace(), std::process::id())
}

fn pid_namespace() -> String {
    std::fs::read_link("/proc/self/ns/pid").map_or_else(|_| "unknown".into(), |p| p.display().to_string())
}

/// Removes the sandbox containers made by ml2b processes of this pid namespace that no
/// longer exist. Best effort: a failure leaves them for the next time.
async fn sweep(client: &bollard::Docker) {
    let filters = HashMap::from([("label", vec![OWNER])]);
    let options = ListContainersOptionsBuilder::new()
        .all(true)
        .filters(&filters)
        .build();
    let Ok(containers) = client.list_containers(Some(options)).await else {
        return;
    };
    let namespace = pid_namespace();
    for container in containers {
        let owner = container.labels.as_ref().and_then(|l| l.get(OWNER));
        let Some((ns, pid)) = owner.and_then(|o| o.rsplit_once('/')) else {
            continue;
        };
        let gone = pid.bytes().all(|b| b.is_ascii_digit()) && !Path::new("/proc").join(pid).exists();
        if let (true, true, Some(id)) = (ns == namespace, gone, container.id) {
            tracing::info!(container = %id, "removing a sandbox container left by ml2b process {pid}");
            let _ = client.remove_container(&id, Some(remove_options())).await;
        }
    }
}

fn remove_options() -> bollard::query_parameters::RemoveContainerOptions {
    RemoveContainerOptionsBuilder::new().force(true).v(true).build()
}

/// The virtual environment holding `python` (`<venv>/bin/python`), after checking that it
/// runs in the image: made from `/usr/bin/python3` at version [`PYTHON`].
fn venv_of(python: &Path) -> Result<PathBuf, SandboxError> {
    let venv = python
        .parent()
        .and_then(Path::parent)
        .filter(|v| python.is_absolute() && *v != Path::new("/"))
        .ok_or_else(|| {
            SandboxError::Unavailable(format!(
                "the docker backend runs the python of a virtual environment given by its absolute path, not {}",
                python.display()
            ))
        })?;
    let cfg_path = venv.join("pyvenv.cfg");
    let cfg = std::fs::read_to_string(&cfg_path).map_err(|_| {
        SandboxError::Unavailable(format!(
            "the docker backend runs the python of a virtual environment, and {} is not in one (no {})",
            python.display(),
            cfg_path.display()
        ))
    })?;
    let field = |key: &str| {
        cfg.lines()
            .filter_map(|l| l.split_once('='))
            .find(|(k, _)| k.trim() == key)
            .map_or("?", |(_, v)| v.trim())
    };
    let (home, version) = (field("home"), field("version"));
    if home != "/usr/bin" || !(version == PYTHON || version.starts_with(&format!("{PYTHON}."))) {
        return Err(SandboxError::Unavailable(format!(
            "{}: the environment was made from Python {version} in {home}, but the runtime image has Python {PYTHON} in /usr/bin; remake it from a Python {PYTHON} at /usr/bin/python3 or use --backend local",
            cfg_path.display()
        )));
    }
    Ok(venv.to_path_buf())
}

/// The container's environment: the sandbox's, the proxy's in a `--network proxy` run, and
/// the model cache's.
fn env(job: &Job) -> Vec<String> {
    let proxy = job.proxy.as_ref().map_or_else(Vec::new, |_| proxy_env());
    let cache = job
        .model_cache
        .as_ref()
        .map_or_else(Vec::new, |_| ModelCache::env().to_vec());
    ENV.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .chain(proxy.into_iter().chain(cache).map(|(k, v)| format!("{k}={v}")))
        .collect()
}

/// The container's command: the seccomp loader, then the harness's command line.
fn entrypoint(job: &Job) -> Vec<String> {
    let python = job.python.to_string_lossy().into_owned();
    let loader = [python, "-c".into(), seccomp::loader(), SECCOMP_FILE.into()];
    loader
        .into_iter()
        .chain(harness_argv(job).iter().map(|a| a.to_string_lossy().into_owned()))
        .collect()
}

/// Where the container sees the staged filter.
const SECCOMP_FILE: &str = "/sandbox/seccomp.bpf";

/// Warns when the daemon's security options (`name=seccomp,profile=…`) show no seccomp
/// profile: the container then has ml2b's filter only.
fn warn_without_seccomp(options: &[String]) {
    let profile = options
        .iter()
        .find(|o| o.split(',').any(|f| f == "name=seccomp"))
        .and_then(|o| o.split(',').find_map(|f| f.strip_prefix("profile=")));
    if matches!(profile, None | Some("unconfined")) {
        tracing::warn!(
            "the Docker daemon applies no seccomp profile ({options:?}): runs have ml2b's system-call filter only"
        );
    }
}

/// The private folder of one run: `sandbox/` (`harness.py`, `code.py`, `spec.json`,
/// `seccomp.bpf`, at `/sandbox`) and `out/` (at `/out`, owned by the sandbox user).
struct Staged {
    sandbox: PathBuf,
    out: PathBuf,
    code_hash: String,
}

impl Staged {
    fn new(dir: &Path, job: &Job) -> Result<Self, SandboxError> {
        let code_hash =
            crate::store::hash_file_hex(&job.code).map_err(io(format!("reading {}", job.code.display())))?;
        let staged = Self {
            sandbox: dir.join("sandbox"),
            out: dir.join("out"),
            code_hash,
        };
        stage_run(job, &staged.sandbox, &staged.out, sandbox_user())?;
        let filter = staged.sandbox.join("seccomp.bpf");
        std::fs::write(&filter, seccomp::filter(steps::sockets(job)))
            .map_err(io(format!("writing {}", filter.display())))?;
        std::fs::set_permissions(&filter, std::fs::Permissions::from_mode(0o644))
            .map_err(io(format!("chmod {}", filter.display())))?;
        Ok(staged)
    }
}

/// How a container ended.
struct Ended {
    exit_code: i32,
    oom_killed: bool,
    timed_out: bool,
    wall_seconds: f64,
    stdout: Captured,
    stderr: Captured,
}

/// Returns once the output folder `out` is past `limits` (measured every [`WATCH`]).
async fn flooded(out: &Path, limits: &Limits) {
    loop {
        tokio::time::sleep(WATCH).await;
        if Usage::of(out, limits).over(limits).is_some() {
            return;
        }
    }
}

/// How often the output folder is measured while the run goes on.
const WATCH: Duration = Duration::from_millis(200);

/// A created container, removed (forcibly) when dropped. Dropped outside any `block_on`
/// of its runtime, since it blocks on that runtime.
struct Container<'a> {
    rt: &'a Runtime,
    client: &'a bollard::Docker,
    id: String,
}

impl Container<'_> {
    async fn run(&self, limits: &Limits, out: &Path) -> Result<Ended, SandboxError> {
        let attach = AttachContainerOptionsBuilder::new()
            .stdout(true)
            .stderr(true)
            .stream(true)
            .build();
        let output = self
            .client
            .attach_container(&self.id, Some(attach))
            .await
            .map_err(api("attaching to the sandbox container".into()))?
            .output;
        let drained = tokio::spawn(drain(output));
        let started = Instant::now();
        self.client
            .start_container(&self.id, None::<StartContainerOptions>)
            .await
            .map_err(api("starting the sandbox container".into()))?;
        // Ended, or to be killed: at the wall-clock limit (`timed_out`) or when the output
        // folder grows past its limits (which `classify` then reports).
        let (ended, timed_out) = tokio::select! {
            waited = tokio::time::timeout(limits.wall, self.wait()) => match waited {
                Ok(waited) => (waited.map(|()| true)?, false),
                Err(_) => (false, true),
            },
            () = flooded(out, limits) => (false, false),
        };
        if !ended {
            let kill = KillContainerOptionsBuilder::new().signal("KILL").build();
            // Fails only when the run ended meanwhile.
            let _ = self.client.kill_container(&self.id, Some(kill)).await;
            tokio::time::timeout(GRACE, self.wait()).await.map_err(|_| {
                SandboxError::Unavailable(format!("the container {} did not stop when killed", self.id))
            })??;
        }
        let wall_seconds = started.elapsed().as_secs_f64();
        let (stdout, stderr) = tokio::time::timeout(GRACE, drained)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let state = self
            .client
            .inspect_container(&self.id, None::<InspectContainerOptions>)
            .await
            .map_err(api("inspecting the sandbox container".into()))?
            .state
            .unwrap_or_default();
        let exit_code = state.exit_code.ok_or_else(|| {
            SandboxError::Unavailable(format!("the Docker daemon reported no exit code for {}", self.id))
        })?;
        Ok(Ended {
            exit_code: i32::try_from(exit_code).unwrap_or(255),
            oom_killed: state.oom_killed.unwrap_or(false),
            timed_out,
            wall_seconds,
            stdout,
            stderr,
        })
    }

    /// Until the container is not running (a non-zero exit is not an error here).
    async fn wait(&self) -> Result<(), SandboxError> {
        let mut waited = self.client.wait_container(&self.id, None::<WaitContainerOptions>);
        match waited.next().await {
            Some(Err(bollard::errors::Error::DockerContainerWaitError { .. }) | Ok(_)) | None => Ok(()),
            Some(Err(e)) => Err(api("waiting for the sandbox container".into())(e)),
        }
    }
}

impl Drop for Container<'_> {
    fn drop(&mut self) {
        let removed = self
            .rt
            .block_on(self.client.remove_container(&self.id, Some(remove_options())));
        if let Err(e) = removed {
            tracing::warn!(container = %self.id, "could not remove a sandbox container: {e}");
        }
    }
}

type Output = Pin<Box<dyn Stream<Item = Result<LogOutput, bollard::errors::Error>> + Send>>;

/// Reads the attached output to its end, keeping the head and the tail of each stream.
async fn drain(mut output: Output) -> (Captured, Captured) {
    let (mut stdout, mut stderr) = (Captured::default(), Captured::default());
    while let Some(Ok(chunk)) = output.next().await {
        let (kept, bytes) = match chunk {
            LogOutput::StdErr { message } => (&mut stderr, message),
            LogOutput::StdOut { message } | LogOutput::Console { message } => (&mut stdout, message),
            LogOutput::StdIn { .. } => continue,
        };
        kept.push(&bytes);
    }
    (stdout, stderr)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn venv(cfg: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("bin")).unwrap();
        std::fs::write(dir.path().join("pyvenv.cfg"), cfg).unwrap();
        let python = dir.path().join("bin/python");
        (dir, python)
    }

    #[test]
    fn a_bookworm_venv_fits_the_image() {
        let (dir, python) = venv("home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n");
        assert_eq!(venv_of(&python).unwrap(), dir.path());
    }

    #[test]
    fn other_venvs_are_refused_with_the_reason() {
        for (cfg, says) in [
            ("home = /usr/bin\nversion = 3.12.1\n", "Python 3.12.1 in /usr/bin"),
            (
                "home = /opt/py/bin\nversion = 3.11.9\n",
                "Python 3.11.9 in /opt/py/bin",
            ),
        ] {
            let (_dir, python) = venv(cfg);
            let e = venv_of(&python).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("3.11"), "{e}");
        }
        let e = venv_of(Path::new("/usr/bin/python3")).unwrap_err().to_string();
        assert!(e.contains("not in one"), "{e}");
        let e = venv_of(Path::new("venv/bin/python")).unwrap_err().to_string();
        assert!(e.contains("absolute"), "{e}");
    }

    #[test]
    fn a_panic_mid_run_still_removes_the_container() {
        let image = super::super::image::RuntimeImage::ensure(|_| ()).unwrap();
        let label = format!("ml2b.test.panic.{}", std::process::id());
        let panicked = std::panic::catch_unwind(|| {
            with_client::<()>(|rt, client| {
                let config = ContainerCreateBody {
                    image: Some(image.id.clone()),
                    entrypoint: Some(vec!["sleep".into(), "60".into()]),
                    labels: Some(HashMap::from([(label.clone(), String::new())])),
                    network_disabled: Some(true),
                    ..Default::default()
                };
                let created = rt.block_on(client.create_container(None::<CreateContainerOptions>, config));
                let id = created.unwrap().id;
                let _container = Container {
                    rt,
                    client,
                    id: id.clone(),
                };
                rt.block_on(async {
                    client
                        .start_container(&id, None::<StartContainerOptions>)
                        .await
                        .unwrap();
                    panic!("a bug mid-run");
                })
            })
        });
        assert!(panicked.is_err());
        let filters = HashMap::from([("label", vec![label.as_str()])]);
        let options = ListContainersOptionsBuilder::new()
            .all(true)
            .filters(&filters)
            .build();
        let left = with_client(|rt, client| {
            rt.block_on(client.list_containers(Some(options)))
                .map_err(api("listing containers".into()))
        });
        assert_eq!(left.unwrap(), vec![]);
    }
}
