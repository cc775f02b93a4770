//! A run's network: `none`, a loopback of its own and nothing else (the default), or
//! `proxy`, where the only way out is an allowlisting forward proxy (squid, as ML2B runs
//! it: `environments/runtime/squid.conf`), and every request it saw is recorded.
//!
//! A leaf of the sandbox modules: the policy ([`Network`], [`Allowlist`]) and what a run
//! reports ([`ProxyRequest`]); `proxy` runs it, the backends wire it in.
//!
//! In `proxy` mode a run still has no interface but its own loopback: no route leads
//! anywhere, so a direct TCP connection, a UDP packet or a DNS query fails. The harness
//! listens on the loopback at [`PROXY_PORT`] and passes each connection through a Unix
//! socket (`/sandbox/proxy.sock`) to ml2b, which relays it to squid and records it; the
//! solution sees `HTTP_PROXY` and `HTTPS_PROXY` (and their lower-case twins) naming that
//! port, which pip, `requests`, `urllib`, `huggingface_hub` and `torch.hub` honour. squid
//! resolves names (through DNS, or the allowlist's `hosts`) and allows a request when its
//! host is one of the allowlist's domains or below one, and its port one of its ports;
//! everything else is refused (403, `ERR_ACCESS_DENIED`).
//!
//! The unit key of a run covers its [`Network`] unless it is `none`, so the keys of runs
//! made before networks existed are unchanged.

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};

/// Where a run may connect.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// A loopback of its own, nothing else.
    #[default]
    None,
    /// Through the allowlisting proxy only.
    Proxy(Allowlist),
}

impl Network {
    /// The policy's name, as events record it (`none`, `proxy`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Proxy(_) => "proxy",
        }
    }
}

/// What the proxy lets through.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allowlist {
    /// Domain suffixes: `.huggingface.co` is the domain and every name below it; a name
    /// without a leading dot is that host alone. Sorted, without duplicates.
    pub domains: Vec<String>,
    /// The ports a request may name (a plain request's URL, a `CONNECT`'s target).
    pub ports: Vec<u16>,
    /// Names the proxy resolves to the address given, not through DNS: an internal mirror
    /// of an allowed host on a cluster without internet, or a test's local servers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hosts: BTreeMap<String, IpAddr>,
}

/// ML2B's allowlist: Hugging Face, PyTorch's downloads and S3.
pub const DEFAULT_DOMAINS: [&str; 4] = [".huggingface.co", ".hf.co", ".pytorch.org", ".s3.amazonaws.com"];

/// ML2B's ports: HTTP and HTTPS.
pub const DEFAULT_PORTS: [u16; 2] = [80, 443];

impl Default for Allowlist {
    fn default() -> Self {
        Self::new(
            DEFAULT_DOMAINS.iter().map(|d| d.to_string()),
            DEFAULT_PORTS,
            BTreeMap::new(),
        )
    }
}

impl Allowlist {
    /// An allowlist of `domains` (lower-cased, sorted, deduplicated) and `ports`.
    pub fn new(
        domains: impl IntoIterator<Item = String>,
        ports: impl IntoIterator<Item = u16>,
        hosts: BTreeMap<String, IpAddr>,
    ) -> Self {
        let mut domains: Vec<String> = domains
            .into_iter()
            .map(|d| d.trim().to_ascii_lowercase())
            .collect();
        domains.sort();
        domains.dedup();
        let mut ports: Vec<u16> = ports.into_iter().collect();
        ports.sort_unstable();
        ports.dedup();
        let hosts = hosts
            .into_iter()
            .map(|(name, ip)| (name.trim().to_ascii_lowercase(), ip))
            .collect();
        Self {
            domains,
            ports,
            hosts,
        }
    }

    /// Whether `domain` can be an entry: a host name, optionally with a leading dot.
    pub fn valid_domain(domain: &str) -> bool {
        let name = domain.strip_prefix('.').unwrap_or(domain);
        !name.is_empty()
            && name.len() <= 253
            && name.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    && !label.starts_with('-')
                    && !label.ends_with('-')
            })
    }

    /// Whether the proxy lets a request to `host`:`port` through (what squid's
    /// `dstdomain` and `port` ACLs decide; for the tests of the configuration).
    pub fn allows(&self, host: &str, port: u16) -> bool {
        let host = host.to_ascii_lowercase();
        self.ports.contains(&port)
            && self.domains.iter().any(|d| match d.strip_prefix('.') {
                Some(suffix) => host == suffix || host.ends_with(d.as_str()),
                None => host == *d,
            })
    }
}

/// The port the harness listens on inside the sandbox, which `HTTP_PROXY` names.
pub const PROXY_PORT: u16 = 3128;

/// Where the sandbox reaches ml2b's relay to the proxy.
pub const PROXY_SOCKET: &str = "/sandbox/proxy.sock";

/// The environment a run in `proxy` mode gets, beside the sandbox's own.
pub fn proxy_env() -> Vec<(&'static str, String)> {
    let url = format!("http://127.0.0.1:{PROXY_PORT}");
    ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]
        .into_iter()
        .map(|k| (k, url.clone()))
        .collect()
}

/// One request the proxy saw for a run: one connection (squid serves one request per
/// client connection, `client_persistent_connections off`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProxyRequest {
    /// `GET`, `CONNECT`, …; empty when the connection sent no request line.
    pub method: String,
    /// The host asked for (a plain request's URL, a `CONNECT`'s target).
    pub host: String,
    pub port: u16,
    /// The proxy's status (0: it answered nothing).
    pub status: u16,
    /// False when the proxy refused the request (`ERR_ACCESS_DENIED`); a request it
    /// answered nothing to was not refused.
    pub allowed: bool,
    /// Bytes from the run to the proxy, and back.
    pub sent: u64,
    pub received: u64,
}

/// The most requests an execute event lists; the counts cover them all.
pub const LISTED_REQUESTS: usize = 1000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowlist_matches_domains_and_their_subdomains_on_its_ports() {
        let a = Allowlist::default();
        assert!(a.allows("huggingface.co", 443));
        assert!(a.allows("cdn-lfs.HuggingFace.co", 443));
        assert!(a.allows("download.pytorch.org", 80));
        assert!(!a.allows("huggingface.co", 22));
        assert!(!a.allows("evilhuggingface.co", 443));
        assert!(!a.allows("github.com", 443));
        assert!(!a.allows("www.kaggle.com", 443));
        let exact = Allowlist::new(["mirror.internal".to_string()], [8080], BTreeMap::new());
        assert!(exact.allows("mirror.internal", 8080));
        assert!(!exact.allows("a.mirror.internal", 8080));
    }

    #[test]
    fn a_none_network_serializes_apart_from_a_proxy() {
        assert_eq!(serde_json::to_string(&Network::None).unwrap(), r#""none""#);
        let proxy = serde_json::to_string(&Network::Proxy(Allowlist::default())).unwrap();
        assert!(proxy.starts_with(r#"{"proxy":{"domains":[".hf.co","#), "{proxy}");
        assert!(!proxy.contains("hosts"), "{proxy}");
    }

    #[test]
    fn domains_are_host_names() {
        for good in [".huggingface.co", "hf.co", "a-b.example", ".x1.y2"] {
            assert!(Allowlist::valid_domain(good), "{good}");
        }
        for bad in ["", ".", "..x", "a..b", "-a.b", "a b", "a/b", "*.x", "x:80"] {
            assert!(!Allowlist::valid_domain(bad), "{bad}");
        }
    }
}
