//! Manifests: the strictly checked TOML files under `manifests/` that describe
//! what the benchmark runs on.
//!
//! Every manifest is parsed with unknown keys rejected, and every error names
//! the file, the line and the key (or field) that is wrong.

pub mod agents;
pub mod cluster;
pub mod competition;
mod file;
pub mod languages;
pub mod models;
pub mod network;
pub mod sandbox;
pub mod task;
pub mod templates;
pub mod verbatim;

pub use competition::CompetitionManifest;
pub use file::{ManifestError, load, load_optional, parse};
pub use languages::{Language, Languages, Tier};
pub use models::{Model, Models};
pub use task::TaskText;

pub use crate::events::serde_name;
