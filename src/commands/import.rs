//! `ml2b import`: bring competitions from another layout (see `competition::import`).

use super::ExitStatus;
use crate::cli::ImportArgs;
use crate::settings::GlobalSettings;

/// Runs `ml2b import`.
pub fn import(_settings: &GlobalSettings, _args: &ImportArgs) -> anyhow::Result<ExitStatus> {
    anyhow::bail!("import is not built yet")
}
