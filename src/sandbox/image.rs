//! The runtime image of the docker backend (`docker`): Debian bookworm with its
//! `python3` (3.11) and `libgomp1`, nothing more. The packages solutions import are not in
//! it: the backend mounts the managed virtual environment ([`super::pyenv`],
//! `scripts/python-env`) read-only at its own path, and that environment's `bin/python`
//! links to the image's `/usr/bin/python3`; so the environment must be made from a Python
//! [`PYTHON`] at `/usr/bin` (a Debian bookworm host), which the backend checks before a run.
//!
//! The tag is `ml2b-runtime:<16 hex>`, the start of the blake3 of the recipe: a schema
//! name, `assets/execute/Dockerfile`, the debootstrap parameters and
//! `assets/execute/requirements.txt`, each prefixed by its length (u64, little endian).
//! An image with that tag and that `ml2b.recipe` label is reused; otherwise one is built
//! and tagged. Runs are made from the image's id (`sha256:…`), which is what events
//! record: the tag names the recipe, the id names the bytes (two builds of one recipe
//! differ: the Debian archive moves).
//!
//! Two routes make the same content:
//!
//! 1. **Dockerfile** (`assets/execute/Dockerfile`, `FROM debian:bookworm-slim`), when a
//!    registry is reachable: the base image is already present, or
//!    `registry-1.docker.io:443` accepts a TCP connection within 3 s. The build context is
//!    the Dockerfile alone. A failed build falls back to route 2.
//! 2. **Offline**: `debootstrap --variant=minbase --include=python3,libgomp1 bookworm
//!    <dir> http://deb.debian.org/debian` on the host (root, the `debootstrap` package and
//!    the Debian mirror needed; one to two minutes), apt's caches dropped, then `tar -C <dir>
//!    -c .` streamed to the Engine's image import (`POST /images/create?fromSrc=-`, what
//!    `docker import` does) with the image's `PATH` and labels as `changes`.
//!
//! Both carry the labels `ml2b.recipe` (the full hash) and `ml2b.python`. Two processes
//! building at once both succeed; the tag ends on the later image, and each records the
//! id it built.

use std::io::Read;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use bollard::models::ImageInspect;
use bollard::query_parameters::{BuildImageOptionsBuilder, CreateImageOptionsBuilder};
use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use serde::Serialize;

use super::assets;
use super::docker_api::{api, with_client};
use super::error::{SandboxError, io};
use super::steps::{is_root, tail};

/// `assets/execute/Dockerfile`.
pub const DOCKERFILE: &str = include_str!("../../assets/execute/Dockerfile");
/// The Python of the image (Debian bookworm's), as `major.minor`.
pub const PYTHON: &str = "3.11";
/// The offline route: `debootstrap --variant=VARIANT --include=PACKAGES SUITE <dir> MIRROR`.
const VARIANT: &str = "minbase";
const PACKAGES: &str = "python3,libgomp1";
const SUITE: &str = "bookworm";
const MIRROR: &str = "http://deb.debian.org/debian";
/// The Dockerfile's `FROM`.
const BASE: &str = "debian:bookworm-slim";
const REPOSITORY: &str = "ml2b-runtime";
const REGISTRY: (&str, u16) = ("registry-1.docker.io", 443);
const PROBE: Duration = Duration::from_secs(3);
/// The daemon answers an import or a build only once it has read the whole request body,
/// and the client's default timeout (120 s) covers the wait for that answer.
const BUILD_TIMEOUT: Duration = Duration::from_secs(1800);

/// A runtime image as runs are made from it and events record it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImageRef {
    /// `ml2b-runtime:<16 hex>`, from the recipe.
    pub tag: String,
    /// The image's id, `sha256:<64 hex>`, the digest of its configuration.
    pub id: String,
}

/// How a missing image is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// `docker build` of `assets/execute/Dockerfile`.
    Dockerfile,
    /// debootstrap on the host, then an image import.
    Debootstrap,
}

/// The runtime image's recipe (see the module's documentation).
pub struct RuntimeImage;

impl RuntimeImage {
    /// The blake3 of the recipe, as lowercase hex.
    pub fn recipe_hash() -> String {
        let mut hasher = blake3::Hasher::new();
        let fields = [
            "ml2b-runtime-recipe/1",
            DOCKERFILE,
            VARIANT,
            PACKAGES,
            SUITE,
            MIRROR,
            assets::REQUIREMENTS,
        ];
        for field in fields {
            hasher.update(&(field.len() as u64).to_le_bytes());
            hasher.update(field.as_bytes());
        }
        hasher.finalize().to_hex().to_string()
    }

    /// `ml2b-runtime:<the recipe hash's first 16 hex>`.
    pub fn tag() -> String {
        format!("{REPOSITORY}:{}", &Self::recipe_hash()[..16])
    }

    /// The image of the current recipe, built when the daemon lacks it. `on_build` is
    /// called (on this thread) with the route before a slow build starts; what it returns
    /// (e.g. a spinner) is dropped when the build ends.
    pub fn ensure<G>(on_build: impl FnOnce(Route) -> G) -> Result<ImageRef, SandboxError> {
        let tag = Self::tag();
        let found = with_client(|rt, client| rt.block_on(inspect(client, &tag)))?;
        // The label guards against an image tagged by hand.
        if let Some(image) = found
            && let Some(id) = image.id
            && image
                .config
                .and_then(|c| c.labels)
                .and_then(|mut l| l.remove("ml2b.recipe"))
                == Some(Self::recipe_hash())
        {
            return Ok(ImageRef { tag, id });
        }
        let base_present = with_client(|rt, client| rt.block_on(inspect(client, BASE)))?.is_some();
        let route = if base_present || registry_reachable() {
            Route::Dockerfile
        } else {
            Route::Debootstrap
        };
        let _progress = on_build(route);
        tracing::info!("building {tag} ({route:?})");
        if route == Route::Dockerfile {
            match with_client(|rt, client| build(rt, client, &tag)) {
                Ok(()) => return finish(tag),
                Err(e) => {
                    tracing::warn!("building {tag} from the Dockerfile failed ({e}); trying debootstrap")
                }
            }
        }
        debootstrap(&tag)?;
        finish(tag)
    }
}

fn finish(tag: String) -> Result<ImageRef, SandboxError> {
    let image = with_client(|rt, client| rt.block_on(inspect(client, &tag)))?;
    let id = image.and_then(|i| i.id);
    let id =
        id.ok_or_else(|| SandboxError::Unavailable(format!("the image {tag} vanished after its build")))?;
    Ok(ImageRef { tag, id })
}

/// The image `name`, or `None` when the daemon has none of that name.
async fn inspect(client: &bollard::Docker, name: &str) -> Result<Option<ImageInspect>, SandboxError> {
    match client.inspect_image(name).await {
        Ok(image) => Ok(Some(image)),
        Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }) => Ok(None),
        Err(e) => Err(api(format!("inspecting the image {name}"))(e)),
    }
}

/// Whether Docker Hub's registry accepts a TCP connection within [`PROBE`] (name lookup
/// included: it runs on a thread of its own that is left behind when it takes longer).
fn registry_reachable() -> bool {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let addr = REGISTRY.to_socket_addrs().ok().and_then(|mut a| a.next());
        let _ = tx.send(addr.is_some_and(|a| TcpStream::connect_timeout(&a, PROBE).is_ok()));
    });
    rx.recv_timeout(PROBE).unwrap_or(false)
}

/// The labels both routes give the image.
fn labels() -> [(&'static str, String); 2] {
    [
        ("ml2b.recipe", RuntimeImage::recipe_hash()),
        ("ml2b.python", PYTHON.to_string()),
    ]
}

/// Route 1: `docker build` with the Dockerfile as the whole context.
fn build(rt: &tokio::runtime::Runtime, client: &bollard::Docker, tag: &str) -> Result<(), SandboxError> {
    let context = tempfile::tempdir().map_err(io("creating a build context".into()))?;
    std::fs::write(context.path().join("Dockerfile"), DOCKERFILE)
        .map_err(io("writing the build context".into()))?;
    let tar = Command::new("tar")
        .arg("-C")
        .arg(context.path())
        .args(["-cf", "-", "Dockerfile"])
        .output()
        .map_err(io("running tar".into()))?;
    if !tar.status.success() {
        return Err(SandboxError::Unavailable(format!(
            "tar failed on the build context: {}",
            String::from_utf8_lossy(&tar.stderr).trim()
        )));
    }
    let options = BuildImageOptionsBuilder::new()
        .dockerfile("Dockerfile")
        .t(tag)
        .rm(true)
        .forcerm(true)
        .labels(&labels().into_iter().map(|(k, v)| (k.to_string(), v)).collect())
        .build();
    let client = client.clone().with_timeout(BUILD_TIMEOUT);
    rt.block_on(async {
        let mut progress = client.build_image(options, None, Some(bollard::body_full(tar.stdout.into())));
        while let Some(info) = progress.next().await {
            let info = info.map_err(api(format!("building {tag}")))?;
            if let Some(error) = info.error {
                return Err(SandboxError::Unavailable(format!("building {tag}: {error}")));
            }
            if let Some(line) = info
                .stream
                .as_deref()
                .map(str::trim_end)
                .filter(|l| !l.is_empty())
            {
                tracing::debug!("docker build: {line}");
            }
        }
        Ok(())
    })
}

/// Route 2: debootstrap into a temporary folder, then import it.
fn debootstrap(tag: &str) -> Result<(), SandboxError> {
    let tool = ["/usr/sbin/debootstrap", "/sbin/debootstrap", "/usr/bin/debootstrap"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .ok_or_else(|| {
            SandboxError::Unavailable(format!(
                "no registry is reachable to build {tag} from assets/execute/Dockerfile, and the offline route needs debootstrap (Debian: `apt-get install debootstrap`)"
            ))
        })?;
    if !is_root() {
        return Err(SandboxError::Unavailable(format!(
            "no registry is reachable to build {tag} from assets/execute/Dockerfile, and the offline route (debootstrap) needs root: run it once as root"
        )));
    }
    // Disk-backed (/tmp may be a tmpfs) and allowing device files, which debootstrap makes.
    let rootfs = tempfile::Builder::new()
        .prefix("ml2b-rootfs-")
        .tempdir_in("/var/tmp")
        .map_err(io("creating a folder for debootstrap under /var/tmp".into()))?;
    let started = std::time::Instant::now();
    let out = Command::new(tool)
        .arg(format!("--variant={VARIANT}"))
        .arg(format!("--include={PACKAGES}"))
        .arg(SUITE)
        .arg(rootfs.path())
        .arg(MIRROR)
        .stdin(Stdio::null())
        .output()
        .map_err(io(format!("running {tool}")))?;
    if !out.status.success() {
        let log = [&out.stdout[..], &out.stderr[..]].concat();
        return Err(SandboxError::Unavailable(format!(
            "debootstrap of {SUITE} from {MIRROR} failed ({}): {}",
            out.status,
            tail(&log, 2000).trim()
        )));
    }
    for cache in ["var/cache/apt/archives", "var/lib/apt/lists"] {
        empty(&rootfs.path().join(cache));
    }
    tracing::info!(
        "debootstrap of {SUITE} took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let started = std::time::Instant::now();
    with_client(|rt, client| import(rt, client, rootfs.path(), tag))?;
    tracing::info!("importing {tag} took {:.1} s", started.elapsed().as_secs_f64());
    let started = std::time::Instant::now();
    rootfs
        .close()
        .map_err(io("removing the debootstrap folder".into()))?;
    tracing::debug!(
        "removing the debootstrap folder took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Removes the files directly in `dir` (a cache: failures only leave the image larger).
fn empty(dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Streams `tar -C rootfs -c .` into an image import tagged `tag`.
fn import(
    rt: &tokio::runtime::Runtime,
    client: &bollard::Docker,
    rootfs: &Path,
    tag: &str,
) -> Result<(), SandboxError> {
    let (repo, version) = tag.split_once(':').expect("a tag has a colon");
    let mut tar = Command::new("tar")
        .args(["--numeric-owner", "-C"])
        .arg(rootfs)
        .args(["-cf", "-", "."])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io("running tar".into()))?;
    let (tx, rx) = futures::channel::mpsc::channel(4);
    let pump = pump(tar.stdout.take().expect("piped"), tx);
    let mut changes =
        vec!["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string()];
    changes.extend(labels().map(|(k, v)| format!("LABEL {k}={v}")));
    let options = CreateImageOptionsBuilder::new()
        .from_src("-")
        .repo(repo)
        .tag(version)
        .changes(changes)
        .build();
    let client = client.clone().with_timeout(BUILD_TIMEOUT);
    let imported = rt.block_on(async {
        let mut progress = client.create_image(Some(options), Some(bollard::body_try_stream(rx)), None);
        while let Some(info) = progress.next().await {
            info.map_err(api(format!("importing {tag}")))?;
        }
        Ok(())
    });
    let _ = pump.join();
    let mut errors = String::new();
    if let Some(mut stderr) = tar.stderr.take() {
        let _ = stderr.read_to_string(&mut errors);
    }
    let status = tar.wait().map_err(io("waiting for tar".into()))?;
    imported?;
    if !status.success() {
        return Err(SandboxError::Unavailable(format!(
            "tar of the debootstrapped folder failed ({status}): {}",
            errors.trim()
        )));
    }
    Ok(())
}

/// Copies `from` into `to` in 1 MiB chunks on a thread of its own; stops when the receiver
/// is gone (the import failed), which in turn stops tar on a broken pipe.
fn pump(
    mut from: impl Read + Send + 'static,
    mut to: futures::channel::mpsc::Sender<Result<Bytes, std::io::Error>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let chunk = match from.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => Ok(Bytes::copy_from_slice(&buf[..n])),
                Err(e) => Err(e),
            };
            let failed = chunk.is_err();
            if futures::executor::block_on(to.send(chunk)).is_err() || failed {
                return;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tag_follows_the_recipe() {
        let tag = RuntimeImage::tag();
        assert_eq!(tag, RuntimeImage::tag());
        let (repo, version) = tag.split_once(':').unwrap();
        assert_eq!(repo, "ml2b-runtime");
        assert_eq!(version.len(), 16);
        assert!(RuntimeImage::recipe_hash().starts_with(version));
    }

    #[test]
    fn the_dockerfile_installs_what_debootstrap_includes() {
        for package in PACKAGES.split(',') {
            assert!(DOCKERFILE.contains(package), "{package}");
        }
        assert!(DOCKERFILE.contains(&format!("FROM {BASE}")));
        assert!(BASE.contains(SUITE));
    }
}
