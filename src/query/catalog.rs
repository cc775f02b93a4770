//! The SQL of `queries/`, compiled into the binary.
//!
//! Views (`queries/views/*.sql`) are registered in every session that has a benchmark
//! root, in [`VIEWS`] order (each may read the ones before it); tables
//! (`queries/*.sql`) are what the `analyze` stage runs and `ml2b report` renders, in
//! [`TABLES`] order. A query's identity is the blake3 of its text, which analyze events
//! record, so editing a file changes every event derived from it.

/// A named SQL text.
#[derive(Clone, Copy, Debug)]
pub struct Query {
    /// The file stem: the view's or the table's name.
    pub name: &'static str,
    pub sql: &'static str,
}

impl Query {
    /// The blake3 of the text, as analyze events name it.
    pub fn blake3(&self) -> crate::store::Hash {
        crate::store::Hash::of(self.sql.as_bytes())
    }

    /// The first comment line: what the table is.
    pub fn title(&self) -> &'static str {
        self.sql
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("--"))
            .map_or(self.name, str::trim)
    }

    /// The whole leading comment, without its `--` markers.
    pub fn description(&self) -> String {
        self.sql
            .lines()
            .map_while(|l| l.strip_prefix("--"))
            .map(|l| l.strip_prefix(' ').unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

macro_rules! queries {
    ($dir:literal: $($name:literal),* $(,)?) => {
        [$(Query { name: $name, sql: include_str!(concat!("../../queries/", $dir, $name, ".sql")) }),*]
    };
}

/// The views, in registration order.
pub const VIEWS: [Query; 4] = queries!("views/": "repeated_keys", "runs", "cells", "task_variance");

/// The tables of the paper, in report order.
pub const TABLES: [Query; 10] = queries!("": "aup", "pass_rate", "rp_matrix", "pass_rate_by_tier",
    "variance_by_task", "variance_tiers", "spearman", "failures", "leakage", "cost");

/// The table named `name`.
pub fn table(name: &str) -> Option<&'static Query> {
    TABLES.iter().find(|q| q.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sql_file_is_compiled_in() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("queries");
        for (sub, known) in [("", &TABLES[..]), ("views", &VIEWS[..])] {
            let mut on_disk: Vec<String> = std::fs::read_dir(dir.join(sub))
                .unwrap()
                .filter_map(|e| {
                    let name = e.unwrap().file_name().into_string().unwrap();
                    name.strip_suffix(".sql").map(str::to_string)
                })
                .collect();
            on_disk.sort();
            let mut names: Vec<String> = known.iter().map(|q| q.name.to_string()).collect();
            names.sort();
            assert_eq!(on_disk, names, "queries/{sub}");
        }
    }

    #[test]
    fn every_query_is_documented() {
        for q in TABLES.iter().chain(&VIEWS) {
            assert!(q.sql.starts_with("-- "), "{} has no leading comment", q.name);
            assert!(q.title().len() > 10, "{}", q.name);
        }
    }
}
