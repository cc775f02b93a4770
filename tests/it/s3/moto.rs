//! A real S3-compatible server for the tests: moto (from PyPI, in the venv that
//! `scripts/s3-server` makes; `ML2B_MOTO_PYTHON` names its python) behind
//! `tests/it/s3/moto_serve.py`, which serialises its requests (moto's `If-None-Match`
//! check is not atomic). Each test starts its own on a free port of 127.0.0.1 (or of an
//! address of this host that others reach: the Slurm tests' compute nodes) and the server
//! stops when the value is dropped (or when this process ends).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use ml2b::store::{S3Bucket, S3Error, Store};

/// The python of moto's venv: `ML2B_MOTO_PYTHON`, else scripts/s3-server's default venv.
fn python() -> String {
    if let Ok(python) = std::env::var("ML2B_MOTO_PYTHON") {
        return python;
    }
    let default = "/var/tmp/ml2b-moto-venv/bin/python";
    assert!(
        std::path::Path::new(default).exists(),
        "no S3 server for the S3 tests: run scripts/s3-server and set ML2B_MOTO_PYTHON to the python it prints"
    );
    default.to_string()
}

/// A running moto server.
pub struct Moto {
    child: Child,
    /// The address it listens on.
    pub host: String,
    pub port: u16,
}

impl Moto {
    /// Starts a server on `host` (an address of this machine) and waits until it listens.
    pub fn start_on(host: &str) -> Self {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/s3/moto_serve.py");
        let mut child = Command::new(python())
            .args([script, "0", &std::process::id().to_string(), host])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting moto");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("moto did not print its port: {line:?}")
        });
        Self {
            child,
            host: host.to_string(),
            port,
        }
    }

    /// The endpoint a client reaches it at.
    pub fn endpoint(&self) -> Endpoint {
        Endpoint {
            host: self.host.clone(),
            port: self.port,
        }
    }

    /// Creates a bucket.
    pub fn bucket(&self, name: &str) {
        let (status, body) = http(&self.host, self.port, "PUT", &format!("/{name}"), &[]);
        assert_eq!(
            status,
            200,
            "creating bucket {name}: {}",
            String::from_utf8_lossy(&body)
        );
    }

    /// The bytes at `bucket/key`, through a client of the bucket's root.
    pub fn get(&self, bucket: &str, key: &str) -> Vec<u8> {
        self.client(bucket).get_required(key).unwrap().to_vec()
    }

    /// Replaces the bytes at `bucket/key`.
    pub fn put(&self, bucket: &str, key: &str, bytes: &[u8]) {
        self.client(bucket).put(key, bytes.to_vec().into()).unwrap();
    }

    fn client(&self, bucket: &str) -> std::sync::Arc<S3Bucket> {
        let endpoint = self.endpoint().url();
        S3Bucket::open(&format!("s3://{bucket}"), &Endpoint::options(&endpoint)).unwrap()
    }

    /// Flips one bit of the byte at `at` of `bucket/key`.
    pub fn flip_byte(&self, bucket: &str, key: &str, at: usize) {
        let mut bytes = self.get(bucket, key);
        bytes[at] ^= 0x20;
        self.put(bucket, key, &bytes);
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The settings of a client of a server on `port` of `host`: as `object_store` options
/// and as the AWS environment variables a worker process reads.
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

impl Endpoint {
    /// A server on `port` of 127.0.0.1.
    pub fn loopback(port: u16) -> Self {
        Self {
            host: "127.0.0.1".into(),
            port,
        }
    }

    fn url(&self) -> String {
        format!("http://{}:{}", self.host, self.port)
    }

    /// Opens `s3://…` through this endpoint.
    pub fn open(&self, url: &str) -> Result<Store, S3Error> {
        Store::open_s3(url, &Self::options(&self.url()))
    }

    /// Opens `s3://…` through this endpoint with a client that gives up on a request after
    /// `timeout` (`object_store`'s syntax: `1s`, `500ms`).
    pub fn open_with_timeout(&self, url: &str, timeout: &str) -> Result<Store, S3Error> {
        let endpoint = self.url();
        let mut options = Self::options(&endpoint).to_vec();
        options.push(("timeout", timeout));
        Store::open_s3(url, &options)
    }

    /// The client options of `endpoint`.
    fn options(endpoint: &str) -> [(&'static str, &str); 5] {
        [
            ("aws_endpoint", endpoint),
            ("aws_allow_http", "true"),
            ("aws_access_key_id", "test"),
            ("aws_secret_access_key", "test"),
            ("aws_region", "us-east-1"),
        ]
    }

    /// The environment that makes `Store::open_location` reach this endpoint.
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("AWS_ENDPOINT_URL", self.url()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", "test".into()),
            ("AWS_SECRET_ACCESS_KEY", "test".into()),
            ("AWS_REGION", "us-east-1".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// One plain HTTP/1.1 request (moto checks no signature); returns the status and body.
fn http(host: &str, port: u16, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect((host, port)).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/octet-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut response = Vec::new();
    s.read_to_end(&mut response).unwrap();
    let end = find(&response, b"\r\n\r\n").expect("an HTTP response head");
    let head = String::from_utf8_lossy(&response[..end]);
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap();
    assert!(
        !head.to_ascii_lowercase().contains("transfer-encoding: chunked"),
        "a chunked response: {head}"
    );
    (status, response[end + 4..].to_vec())
}

/// Where `needle` first occurs in `hay`.
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
