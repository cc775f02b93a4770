//! The client of the Docker Engine API (bollard, on the local socket) that the docker backend
//! and its runtime image share. A leaf of the sandbox modules: `docker` and `image` use it,
//! and it uses neither.
//!
//! The `Backend` trait is synchronous (async callers use `spawn_blocking`); bollard is
//! async. Every call that talks to the daemon ([`with_client`]) runs on a scoped
//! thread of its own with a fresh current-thread tokio runtime and a fresh connection: that
//! works from plain threads, from `spawn_blocking` and from inside an async task alike (where
//! a nested `block_on` would panic), concurrent runs share nothing, and no runtime outlives
//! the call (a pooled hyper connection is bound to the runtime that opened it).

use tokio::runtime::Runtime;

use super::error::{SandboxError, io};

/// Runs `body` with a client of the daemon, on a fresh current-thread runtime on a scoped
/// thread of its own (see the module's documentation). A panic in `body` resumes on the
/// caller's thread.
pub(super) fn with_client<T: Send>(
    body: impl FnOnce(&Runtime, &bollard::Docker) -> Result<T, SandboxError> + Send,
) -> Result<T, SandboxError> {
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(io("starting a tokio runtime".into()))?;
            let client = rt.block_on(connect())?;
            body(&rt, &client)
        });
        worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// A client at the API version the daemon speaks (bollard's default is newer than many
/// daemons accept).
async fn connect() -> Result<bollard::Docker, SandboxError> {
    let unreachable = |e: bollard::errors::Error| {
        SandboxError::Unavailable(format!(
            "cannot reach the Docker daemon ({e}): start it, give this user access to its socket, or use --backend local"
        ))
    };
    let client = bollard::Docker::connect_with_local_defaults().map_err(unreachable)?;
    client.negotiate_version().await.map_err(unreachable)
}

/// Wraps an Engine API error: the request is this layer's `what`, the error its source.
pub(super) fn api(what: String) -> impl FnOnce(bollard::errors::Error) -> SandboxError {
    move |e| SandboxError::Io {
        what,
        source: std::io::Error::other(e),
    }
}
