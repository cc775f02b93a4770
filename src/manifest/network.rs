//! `manifests/network.toml` (optional): the allowlist of `--network proxy`. Without the
//! file, or without a key, ML2B's: Hugging Face, PyTorch and S3, on ports 80 and 443
//! (`sandbox::network`). `--allow-domain` adds to the domains.
//!
//! ```toml
//! [proxy]
//! allow = [".huggingface.co", ".hf.co", ".pytorch.org", ".s3.amazonaws.com"]
//! ports = [80, 443]
//! [proxy.hosts]                      # names the proxy resolves as given, not by DNS:
//! "huggingface.co" = "10.0.0.5"      # an internal mirror on a cluster without internet
//! ```
//! A domain with a leading dot is the domain and every name below it; without, that host
//! alone. The pipeline checks each entry (a host name) and names this file when one is not.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;

use serde::Deserialize;

use super::ManifestError;

/// The file, under the benchmark root.
pub const FILE: &str = "manifests/network.toml";

/// The whole file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkManifest {
    #[serde(default)]
    pub proxy: ProxySection,
}

/// `[proxy]`: what the proxy lets through (a key left out: ML2B's).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxySection {
    pub allow: Option<Vec<String>>,
    pub ports: Option<Vec<u16>>,
    #[serde(default)]
    pub hosts: BTreeMap<String, IpAddr>,
}

impl NetworkManifest {
    /// The network manifest of the benchmark at `root`; the empty one when it has none.
    pub fn load(root: &Path) -> Result<Self, ManifestError> {
        super::load_optional(&root.join(FILE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_optional_and_unknown_ones_refused() {
        let path = Path::new("manifests/network.toml");
        let empty: NetworkManifest = super::super::parse(path, "").unwrap();
        assert_eq!(empty, NetworkManifest::default());
        let some: NetworkManifest = super::super::parse(
            path,
            "[proxy]\nallow = [\".hf.co\"]\n[proxy.hosts]\n\"hf.co\" = \"127.0.0.1\"\n",
        )
        .unwrap();
        assert_eq!(some.proxy.allow, Some(vec![".hf.co".to_string()]));
        assert_eq!(some.proxy.ports, None);
        assert_eq!(some.proxy.hosts["hf.co"].to_string(), "127.0.0.1");
        let bad = super::super::parse::<NetworkManifest>(path, "[proxy]\nallowed = []\n").unwrap_err();
        assert!(bad.to_string().contains("manifests/network.toml:2"), "{bad}");
    }
}
