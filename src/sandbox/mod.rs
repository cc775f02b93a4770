//! Running untrusted solutions: one [`Job`] (a submission, its competition's public files,
//! the harness, limits) in, one [`Run`] (outcome, predictions, result record, output
//! tails) out, behind the [`Backend`] trait.
//!
//! Invariants every backend keeps: the solution sees only the harness, its own code, the
//! competition's public files (read-only) and one writable output folder; no network (in
//! `--network proxy` runs, the allowlisting proxy through a relay, and nothing else); no
//! environment variable of the caller; bounded wall time, memory, processes and output;
//! nothing of the run (process or file outside the output folder) survives it. The outcome
//! taxonomy is [`Outcome`]: the harness claims the ones about the code, the backend alone
//! decides `timeout`, `constraint_violation` and `sandbox_error` (a run whose stdout does not
//! begin with the harness's [`READY`] line never reached the code), from what it observed.
//!
//! Layout: the backends ([`local`], [`docker`], which runs the [`image`]) build on leaves that
//! never import them: `job` (the types above and the [`Backend`] trait), `steps` (the steps
//! every backend takes alike: staging, the harness's command line and environment, the
//! outcome rules), `outputs` (reading what a run left, which it controls), `rundir` (the
//! private folder of each run on the host), `docker_api` (the Docker daemon client of `docker`
//! and `image`) and `error` ([`SandboxError`]); `seccomp`, the system-call filter both
//! backends load (bubblewrap's `--seccomp`, stacked on Docker's profile); the local
//! backend's own `cgroup` (its run-wide limits); `network`, the policy of a run's network,
//! and `proxy`, the allowlisting proxy and the relay that records a run's requests;
//! `model_cache`, a folder of pretrained weights every run sees read-only; `gpu`, the
//! NVIDIA GPUs handed to a run; `agent`, an external agent's run (the local backend). This
//! file only declares and re-exports.

pub mod agent;
pub mod assets;
mod cgroup;
pub mod docker;
mod docker_api;
mod error;
pub mod gpu;
pub mod image;
mod job;
pub mod local;
pub mod model_cache;
pub mod network;
mod outputs;
pub mod proxy;
pub mod pyenv;
mod rundir;
mod seccomp;
mod steps;

pub use cgroup::CgroupUnavailable;
pub use error::SandboxError;
pub use gpu::{GpuSet, Gpus};
pub use job::{Backend, Job, Limits, PREDICTIONS, Run};
pub use model_cache::ModelCache;
pub use network::{Allowlist, Network, ProxyRequest};
pub use outputs::Refused;
pub use proxy::Proxy;
pub use rundir::scratch_dir;
pub use steps::{CPUS, READY, tail};
