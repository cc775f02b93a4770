//! The `analyze` log: one table of `queries/`, computed over the other logs' heads.
//!
//! Written by `stages::analyze`; read by `ml2b run` (the headline), `ml2b report` and
//! `ml2b verify --rerun`.

use serde::{Deserialize, Serialize};

use crate::log::EventBody;
use crate::store::Hash;

/// One computed table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// The table's name (`queries/<name>.sql`).
    pub name: String,
    pub query_blake3: Hash,
    /// The result's object hash (Parquet).
    pub result_blake3: Hash,
    pub rows: u64,
    pub columns: Vec<String>,
    /// What it read: `<stage>=<head hash or ->` per input log, then `manifests=<hash>`.
    pub inputs: Vec<String>,
}

impl EventBody for Analysis {
    const STAGE: &'static str = "analyze";
    const SCHEMA_VERSION: u32 = 1;
}
