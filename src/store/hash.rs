//! Content hashes and the stable key encoding.
//!
//! Every name in the store is a BLAKE3 hash. [`Hash`] is the 32-byte value, shown
//! and parsed as 64 lowercase hex digits. [`KeyHasher`] computes unit keys and
//! event ids from an explicit, versioned encoding — never from `std::hash` — so a
//! key is the same on every machine and every ml2b release that keeps
//! [`KEY_ENCODING`].
//!
//! Encoding (all integers little-endian u64):
//! ```text
//! "ml2b-key" KEY_ENCODING domain-len domain { tag len bytes }*
//!   tag: b's' string, b'b' bytes, b'u' integer, b'h' hash, b'l' list length, b'j' JSON
//! ```
//! JSON fields are written with `serde_json`, whose output is deterministic for
//! structs (declaration order) and `BTreeMap`s; values hashed this way must not
//! contain `HashMap`s.

use std::fmt;
use std::io::Write;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Version of the key encoding; bumping it changes every key and id.
pub const KEY_ENCODING: u64 = 1;

/// A BLAKE3 hash naming an object, a segment, a unit or an event.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hash(pub [u8; 32]);

/// A string that is not 64 hex digits.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not a hash (expected 64 hex digits)")]
pub struct ParseHashError(pub String);

impl Hash {
    /// Hashes a byte slice (on every core when it is over 1 MiB: a segment a read checks).
    pub fn of(bytes: &[u8]) -> Self {
        if bytes.len() <= 1 << 20 {
            return Self(*blake3::hash(bytes).as_bytes());
        }
        let mut hasher = blake3::Hasher::new();
        hasher.update_rayon(bytes);
        Self(*hasher.finalize().as_bytes())
    }

    /// Lowercase hex, 64 characters.
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }

    /// The first 12 hex digits, for humans.
    pub fn short(&self) -> String {
        self.to_hex()[..12].to_string()
    }
}

impl From<blake3::Hash> for Hash {
    fn from(h: blake3::Hash) -> Self {
        Self(*h.as_bytes())
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({})", self.short())
    }
}

impl FromStr for Hash {
    type Err = ParseHashError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        blake3::Hash::from_hex(s)
            .map(Self::from)
            .map_err(|_| ParseHashError(s.to_string()))
    }
}

impl Serialize for Hash {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for Hash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.is_empty() && TRACING.get() {
            return Ok(Self([0; 32]));
        }
        s.parse().map_err(serde::de::Error::custom)
    }
}

thread_local! {
    /// Set only while [`traced`] runs.
    static TRACING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, which derives an Arrow schema from types by deserializing placeholder values
/// (`serde_arrow`'s `from_type` hands every string field `""`): meanwhile, and on this thread
/// only, an empty string deserializes to a hash, so that a type with hash fields can be
/// traced. Everywhere else an empty string is not a hash.
pub fn traced<T>(f: impl FnOnce() -> T) -> T {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            TRACING.set(self.0);
        }
    }
    let _reset = Reset(TRACING.replace(true));
    f()
}

/// Builds a hash from tagged, length-prefixed fields (see the module docs).
pub struct KeyHasher(blake3::Hasher);

impl KeyHasher {
    /// Starts a key in `domain` (e.g. `"unit"`, `"event"`).
    pub fn new(domain: &str) -> Self {
        let mut h = blake3::Hasher::new();
        h.update(b"ml2b-key");
        h.update(&KEY_ENCODING.to_le_bytes());
        let mut k = Self(h);
        k.field(b'd', domain.as_bytes());
        k
    }

    fn field(&mut self, tag: u8, bytes: &[u8]) {
        self.0.update(&[tag]);
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    /// Adds a string.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.field(b's', s.as_bytes());
        self
    }

    /// Adds raw bytes.
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.field(b'b', b);
        self
    }

    /// Adds an integer.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.field(b'u', &v.to_le_bytes());
        self
    }

    /// Adds a hash.
    pub fn hash(&mut self, h: &Hash) -> &mut Self {
        self.field(b'h', &h.0);
        self
    }

    /// Adds a list of hashes, in the given order.
    pub fn hashes(&mut self, hs: &[Hash]) -> &mut Self {
        self.field(b'l', &(hs.len() as u64).to_le_bytes());
        for h in hs {
            self.hash(h);
        }
        self
    }

    /// Adds a value by its JSON encoding (length-prefixed after writing).
    pub fn json<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<&mut Self, serde_json::Error> {
        let mut buf = Vec::with_capacity(128);
        serde_json::to_writer(&mut buf, value)?;
        self.field(b'j', &buf);
        Ok(self)
    }

    /// The key.
    pub fn finish(&self) -> Hash {
        self.0.finalize().into()
    }
}

/// A writer that hashes what passes through it.
pub(crate) struct HashingWriter<W> {
    pub inner: W,
    pub hasher: blake3::Hasher,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let h = Hash::of(b"abc");
        assert_eq!(h.to_hex().parse::<Hash>().unwrap(), h);
        assert!("xyz".parse::<Hash>().is_err());
    }

    #[test]
    fn an_empty_string_is_a_hash_only_while_tracing() {
        assert!(serde_json::from_str::<Hash>("\"\"").is_err());
        let traced = traced(|| serde_json::from_str::<Hash>("\"\"").unwrap());
        assert_eq!(traced, Hash([0; 32]));
        assert!(serde_json::from_str::<Hash>("\"\"").is_err());
    }

    #[test]
    fn length_prefix_separates_fields() {
        let a = KeyHasher::new("t").str("ab").str("c").finish();
        let b = KeyHasher::new("t").str("a").str("bc").finish();
        assert_ne!(a, b);
    }

    #[test]
    fn domain_separates_keys() {
        let a = KeyHasher::new("unit").str("x").finish();
        let b = KeyHasher::new("event").str("x").finish();
        assert_ne!(a, b);
    }

    #[test]
    fn encoding_is_stable() {
        // Pinned: changing the encoding must be a deliberate KEY_ENCODING bump.
        let k = KeyHasher::new("unit").str("grade").u64(1).finish();
        let mut h = blake3::Hasher::new();
        h.update(b"ml2b-key");
        h.update(&1u64.to_le_bytes());
        for (tag, bytes) in [
            (b'd', b"unit".to_vec()),
            (b's', b"grade".to_vec()),
            (b'u', 1u64.to_le_bytes().to_vec()),
        ] {
            h.update(&[tag]);
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
        }
        assert_eq!(k, Hash::from(h.finalize()));
    }
}
