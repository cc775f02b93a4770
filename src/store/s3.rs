//! The store on S3-compatible object storage: `s3://BUCKET/PREFIX`, through the
//! `object_store` crate that DataFusion reads Parquet with.
//!
//! Layout under the prefix is the local layout (`objects/blake3/ab/cd/<rest>`,
//! `log/<stage>/{v:020}.parquet`); a key is always named as its URL,
//! `s3://BUCKET/PREFIX/<key>`, in errors. Objects are written with a plain PUT (a name is
//! the hash of its bytes, so a repeated PUT writes the same bytes) and re-hashed on
//! read. A segment is published with a create-if-absent PUT (`If-None-Match: *`):
//!
//! ```text
//!  PUT key (If-None-Match: *)
//!    ├─ 200 ───────────────────────► ours
//!    ├─ 412, or 409 (object_store 0.13 reports both as AlreadyExists)
//!    │     GET key ├─ our bytes ───► ours (an earlier try of ours landed: a lost
//!    │             │                  acknowledgement, or object_store's own retry)
//!    │             ├─ other bytes ─► taken: the caller refreshes and retries at v+1
//!    │             └─ absent ──────► a conflicting write in flight (409): back off, retry
//!    ├─ transport error, 5xx past object_store's retries: back off, retry (the retry
//!    │     answers 412 if the first try landed, and the GET above tells whose it is)
//!    └─ other errors (403, missing bucket, …) ► fail, naming the key
//! ```
//! A server that ignores `If-None-Match` would let two writers both "win" a version and
//! the later one overwrite the earlier: [`S3Bucket::open`] therefore creates a fresh probe
//! key twice under `PREFIX/.ml2b-probe/` and refuses the store when the second create
//! succeeds, before anything is committed.
//!
//! The rest of ml2b is synchronous; every request runs on one process-wide tokio runtime
//! of this module's own ([`block`]) and the caller's thread waits for it, which works from
//! plain threads and from inside another runtime's tasks alike (where a nested
//! `block_on` would panic), just as a local store's `std::fs` calls block.
//!
//! Configuration comes from the standard AWS environment variables (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`/`AWS_DEFAULT_REGION`,
//! `AWS_ENDPOINT_URL` for an S3-compatible service, `AWS_ALLOW_HTTP=true` for a plain-HTTP
//! endpoint), then from explicit `object_store` options (`aws_endpoint`, …) on top.

use std::future::Future;
use std::io;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload};
use rand::Rng;
use tokio::runtime::Runtime;

use crate::backoff::{Backoff, Jitter};

/// The URL scheme of an S3 store.
pub const SCHEME: &str = "s3://";

/// Tries of one create-if-absent PUT before a conflict or transport error is final.
const CREATE_TRIES: u32 = 8;

/// A failure of the S3 backend; each names the URL it concerns.
#[derive(Debug, thiserror::Error)]
pub enum S3Error {
    #[error("`{0}` is not an S3 store URL: expected s3://BUCKET or s3://BUCKET/PREFIX")]
    Url(String),
    #[error("cannot configure the S3 client for {url}")]
    Config {
        url: String,
        #[source]
        source: object_store::Error,
    },
    #[error("S3 request failed for {url}")]
    Request {
        url: String,
        #[source]
        source: object_store::Error,
    },
    #[error("{url} does not exist")]
    Missing { url: String },
    #[error(
        "refusing the store {url}: the server does not honour `If-None-Match: *` (a second \
         create-if-absent PUT of one key under .ml2b-probe/ succeeded), so concurrent writers \
         could overwrite each other's segments; use a server with conditional writes"
    )]
    NoConditionalPut { url: String },
    #[error("{url}: the server answered {tries} create-if-absent PUTs with 409 Conflict")]
    Conflict { url: String, tries: u32 },
    #[error("cannot start the S3 client's runtime")]
    Runtime(#[source] io::Error),
}

/// What a create-if-absent PUT found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Created {
    /// The key holds our bytes: this call (or an earlier try of it) wrote them.
    Ours,
    /// The key holds another writer's bytes.
    Taken,
}

/// A bucket and a prefix in it: the root of one store.
pub struct S3Bucket {
    /// The configuration the client was built from.
    config: AmazonS3Builder,
    client: Arc<dyn ObjectStore>,
    bucket: String,
    /// The prefix, without leading or trailing `/` (empty: the bucket's root).
    prefix: String,
}

/// Shows the URL only: the configuration holds credentials.
impl std::fmt::Debug for S3Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("S3Bucket").field(&self.root_url()).finish()
    }
}

/// Splits `s3://BUCKET/PREFIX` into the bucket and the prefix (maybe empty).
pub fn parse_url(url: &str) -> Result<(String, String), S3Error> {
    let bad = || S3Error::Url(url.to_string());
    let rest = url.strip_prefix(SCHEME).ok_or_else(bad)?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    let prefix = prefix.trim_matches('/');
    let bucket_ok = !bucket.is_empty()
        && bucket
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._".contains(&b));
    let prefix_ok = prefix.is_empty() || Path::parse(prefix).is_ok_and(|p| p.as_ref() == prefix);
    if bucket_ok && prefix_ok {
        Ok((bucket.to_string(), prefix.to_string()))
    } else {
        Err(bad())
    }
}

impl S3Bucket {
    /// Opens `s3://BUCKET/PREFIX`, configured from the AWS environment and then `options`
    /// (`object_store` keys such as `aws_endpoint`), and checks that the server honours
    /// `If-None-Match: *` (see the module docs).
    pub fn open(url: &str, options: &[(&str, &str)]) -> Result<Arc<Self>, S3Error> {
        let (bucket, prefix) = parse_url(url)?;
        let config = |source| S3Error::Config {
            url: url.to_string(),
            source,
        };
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(&bucket);
        for (key, value) in options {
            builder = builder.with_config(key.parse().map_err(config)?, *value);
        }
        let client = builder.clone().build().map_err(config)?;
        let me = Arc::new(Self {
            config: builder,
            client: Arc::new(client),
            bucket,
            prefix,
        });
        me.probe()?;
        Ok(me)
    }

    /// A client of the bucket for another engine (DataFusion), with connections of its
    /// own: this module's client belongs to this module's runtime, the engine's to the
    /// caller's. Its keys are full keys (`PREFIX/log/…`); `s3://BUCKET` is its URL.
    pub fn new_client(&self) -> Result<(String, Arc<dyn ObjectStore>), S3Error> {
        let client = self.config.clone().build().map_err(|source| S3Error::Config {
            url: self.root_url(),
            source,
        })?;
        Ok((format!("{SCHEME}{}", self.bucket), Arc::new(client)))
    }

    /// The store's URL: `s3://BUCKET/PREFIX`.
    pub fn root_url(&self) -> String {
        self.url("")
    }

    /// The URL of `key` (relative to the prefix; empty: the prefix itself).
    pub fn url(&self, key: &str) -> String {
        let full = self.path(key);
        format!("{SCHEME}{}/{}", self.bucket, full.as_ref())
            .trim_end_matches('/')
            .to_string()
    }

    fn path(&self, key: &str) -> Path {
        match (self.prefix.is_empty(), key.is_empty()) {
            (true, _) => Path::from(key),
            (false, true) => Path::from(self.prefix.as_str()),
            (false, false) => Path::from(format!("{}/{key}", self.prefix)),
        }
    }

    fn request(&self, key: &str) -> impl FnOnce(object_store::Error) -> S3Error + use<> {
        let url = self.url(key);
        move |source| S3Error::Request { url, source }
    }

    /// The bytes at `key`, or `None` when there is no such key.
    pub fn get(&self, key: &str) -> Result<Option<Bytes>, S3Error> {
        let (client, path) = (self.client.clone(), self.path(key));
        block(async move { get(client.as_ref(), &path).await })?.map_err(self.request(key))
    }

    /// The bytes at `key`, which must exist.
    pub fn get_required(&self, key: &str) -> Result<Bytes, S3Error> {
        self.get(key)?
            .ok_or_else(|| S3Error::Missing { url: self.url(key) })
    }

    /// Whether `key` exists.
    pub fn exists(&self, key: &str) -> Result<bool, S3Error> {
        let (client, path) = (self.client.clone(), self.path(key));
        let head = block(async move { client.head(&path).await })?;
        match head {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.request(key)(e)),
        }
    }

    /// Writes `bytes` at `key`, replacing what is there: only for content-addressed keys,
    /// whose bytes are the same whoever writes them.
    pub fn put(&self, key: &str, bytes: Bytes) -> Result<(), S3Error> {
        let (client, path) = (self.client.clone(), self.path(key));
        block(async move { client.put(&path, PutPayload::from(bytes)).await })?
            .map(drop)
            .map_err(self.request(key))
    }

    /// Writes `bytes` at `key` unless the key exists (see the module docs).
    pub fn create(&self, key: &str, bytes: Bytes) -> Result<Created, S3Error> {
        let (client, path) = (self.client.clone(), self.path(key));
        let outcome = block(async move { create(client.as_ref(), &path, bytes).await })?;
        outcome.map_err(|failure| match failure {
            CreateFailure::Conflict(tries) => S3Error::Conflict {
                url: self.url(key),
                tries,
            },
            CreateFailure::Request(e) => self.request(key)(e),
        })
    }

    /// The names of the keys directly under the folder `dir`, sorted.
    pub fn list_files(&self, dir: &str) -> Result<Vec<String>, S3Error> {
        let listed = self.list_dir(dir)?;
        let mut names: Vec<String> = listed.objects.iter().filter_map(|o| name(&o.location)).collect();
        names.sort();
        Ok(names)
    }

    /// The names of the folders directly under the folder `dir`, sorted.
    pub fn list_dirs(&self, dir: &str) -> Result<Vec<String>, S3Error> {
        let listed = self.list_dir(dir)?;
        let mut names: Vec<String> = listed.common_prefixes.iter().filter_map(name).collect();
        names.sort();
        Ok(names)
    }

    fn list_dir(&self, dir: &str) -> Result<object_store::ListResult, S3Error> {
        let (client, path) = (self.client.clone(), self.path(dir));
        block(async move { client.list_with_delimiter(Some(&path)).await })?.map_err(self.request(dir))
    }

    /// Every key under the folder `dir`, at any depth, relative to it, sorted.
    pub fn list_all(&self, dir: &str) -> Result<Vec<String>, S3Error> {
        let (client, path) = (self.client.clone(), self.path(dir));
        let base = path.clone();
        let listed = block(async move { client.list(Some(&path)).try_collect::<Vec<_>>().await })?
            .map_err(self.request(dir))?;
        let mut keys: Vec<String> = listed
            .iter()
            .filter_map(|o| {
                let parts: Vec<String> = o
                    .location
                    .prefix_match(&base)?
                    .map(|p| p.as_ref().to_string())
                    .collect();
                Some(parts.join("/"))
            })
            .collect();
        keys.sort();
        Ok(keys)
    }

    /// Refuses a server that accepts a second create-if-absent PUT of one key.
    fn probe(&self) -> Result<(), S3Error> {
        let key = format!(".ml2b-probe/{:032x}", rand::rng().random::<u128>());
        let (client, path) = (self.client.clone(), self.path(&key));
        let second = block(async move {
            let once = || client.put_opts(&path, PutPayload::from_static(b"probe"), PutMode::Create.into());
            let outcome = match once().await {
                Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => once().await.map(drop),
                Err(e) => Err(e),
            };
            // The probe key is no part of the store; a failure to remove it harms nothing.
            let _ = client.delete(&path).await;
            outcome
        })?;
        match second {
            Ok(()) => Err(S3Error::NoConditionalPut { url: self.root_url() }),
            Err(object_store::Error::AlreadyExists { .. }) => Ok(()),
            Err(e) => Err(self.request(&key)(e)),
        }
    }
}

/// The last part of a key.
fn name(path: &Path) -> Option<String> {
    path.filename().map(str::to_string)
}

async fn get(client: &dyn ObjectStore, path: &Path) -> Result<Option<Bytes>, object_store::Error> {
    match client.get(path).await {
        Ok(found) => found.bytes().await.map(Some),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Why a create-if-absent PUT gave up.
enum CreateFailure {
    /// Every try met a 409 with nothing at the key.
    Conflict(u32),
    Request(object_store::Error),
}

async fn create(client: &dyn ObjectStore, path: &Path, bytes: Bytes) -> Result<Created, CreateFailure> {
    let mut tries = 0;
    loop {
        tries += 1;
        let put = client
            .put_opts(path, PutPayload::from(bytes.clone()), PutMode::Create.into())
            .await;
        let retry = match put {
            Ok(_) => return Ok(Created::Ours),
            Err(object_store::Error::AlreadyExists { .. }) => {
                match get(client, path).await.map_err(CreateFailure::Request)? {
                    Some(found) if found == bytes => return Ok(Created::Ours),
                    Some(_) => return Ok(Created::Taken),
                    None => CreateFailure::Conflict(tries),
                }
            }
            Err(e @ object_store::Error::Generic { .. }) => CreateFailure::Request(e),
            Err(e) => return Err(CreateFailure::Request(e)),
        };
        if tries >= CREATE_TRIES {
            return Err(retry);
        }
        tokio::time::sleep(backoff(tries)).await;
    }
}

/// The wait before another try of a conditional write: equal jitter (half of it kept, so
/// that a retry never comes at once) under 50 ms × 2^(try-1), at most 2 s.
const BACKOFF: Backoff = Backoff {
    base: Duration::from_millis(50),
    max: Duration::from_secs(2),
    jitter: Jitter::Equal,
};

fn backoff(tries: u32) -> Duration {
    BACKOFF.wait(tries.saturating_sub(1))
}

/// Runs `fut` on this module's runtime and waits for it (see the module docs). A panic in
/// `fut` resumes on the caller's thread.
///
/// The wait is `unconstrained`: called from inside another runtime's task (the stage
/// runner's), polling the join handle would otherwise draw on that task's cooperative
/// budget, which never refills while this thread blocks, and once it is spent the handle
/// answers "pending" forever: a busy loop (seen reading a log of a few hundred segments).
fn block<T: Send + 'static>(fut: impl Future<Output = T> + Send + 'static) -> Result<T, S3Error> {
    let task = runtime()?.spawn(fut);
    match futures::executor::block_on(tokio::task::unconstrained(task)) {
        Ok(value) => Ok(value),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(S3Error::Runtime(io::Error::other(e))),
    }
}

/// The process-wide runtime of S3 requests: never dropped, so no caller can drop it
/// inside another runtime, and its pooled connections stay usable.
fn runtime() -> Result<&'static Runtime, S3Error> {
    static RUNTIME: OnceLock<io::Result<Runtime>> = OnceLock::new();
    let built = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("ml2b-s3")
            .enable_all()
            .build()
    });
    built
        .as_ref()
        .map_err(|e| S3Error::Runtime(io::Error::new(e.kind(), e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_into_bucket_and_prefix() {
        let ok = |u: &str| parse_url(u).unwrap();
        assert_eq!(ok("s3://b"), ("b".into(), "".into()));
        assert_eq!(ok("s3://b/"), ("b".into(), "".into()));
        assert_eq!(
            ok("s3://my-bucket/runs/a/"),
            ("my-bucket".into(), "runs/a".into())
        );
        for bad in [
            "s3://",
            "s3:///p",
            "b/p",
            "file:///tmp",
            "s3://B/p",
            "s3://b/a//c",
            "s3://b/a/../c",
        ] {
            let err = parse_url(bad).unwrap_err().to_string();
            assert!(err.contains(bad), "{bad}: {err}");
        }
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        assert!(backoff(1) <= Duration::from_millis(50));
        assert!(backoff(4) >= Duration::from_millis(200));
        assert!((1..40).all(|t| backoff(t) <= Duration::from_secs(2)));
    }
}
