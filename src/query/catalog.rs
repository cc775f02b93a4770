//! The SQL of `queries/`, compiled into the binary.
//!
//! Views (`queries/views/*.sql`) are registered in every session that has a benchmark
//! root, in [`VIEWS`] order (each may read the ones before it); tables
//! (`queries/*.sql`) are what the `analyze` stage runs and `ml2b report` renders, in
//! [`TABLES`] order. A query's identity is the blake3 of its text, which analyze events
//! record, so editing a file changes every event derived from it.
//!
//! That is why each query's title, the heading `ml2b report` gives its table, lives here
//! and not in the file: a file's leading comment is prose that wraps mid-sentence, and
//! rewording a heading must not re-derive the table (nor break the events of older
//! stores, which `ml2b verify --rerun` re-derives from the compiled-in text).
//!
//! A table whose query changed keeps its earlier texts as [`SUPERSEDED`]
//! (`queries/superseded/<table>.<n>.sql`, never edited): `analyze` runs only the current
//! text, while `verify --rerun` and `ml2b show` find an old event's query by its blake3
//! among both ([`by_blake3`]), so a store analyzed by an earlier ml2b re-derives as it did.

/// A named SQL text.
#[derive(Clone, Copy, Debug)]
pub struct Query {
    /// The file stem: the view's or the table's name.
    pub name: &'static str,
    /// A short, complete heading: what the table is, without a full stop.
    pub title: &'static str,
    pub sql: &'static str,
}

impl Query {
    /// The blake3 of the text, as analyze events name it.
    pub fn blake3(&self) -> crate::store::Hash {
        crate::store::Hash::of(self.sql.as_bytes())
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
    ($dir:literal: $($name:literal => $title:literal),* $(,)?) => {
        [$(Query {
            name: $name,
            title: $title,
            sql: include_str!(concat!("../../queries/", $dir, $name, ".sql")),
        }),*]
    };
}

/// The superseded text `queries/superseded/<name>.<n>.sql` of the table `name`.
macro_rules! superseded {
    ($name:literal, $n:literal, $title:literal) => {
        Query {
            name: $name,
            title: $title,
            sql: include_str!(concat!("../../queries/superseded/", $name, ".", $n, ".sql")),
        }
    };
}

/// The views, in registration order.
pub const VIEWS: [Query; 4] = queries!("views/":
    "repeated_keys" => "Keys that several events of a log share",
    "runs" => "Every planned or generated sample with its execution and grade",
    "cells" => "One row per model, format, competition and language",
    "task_variance" => "Cross-lingual variance of r per model and task",
);

/// The tables of the paper, in report order.
pub const TABLES: [Query; 15] = queries!("":
    "completeness" => "Planned samples and those still without a verdict per model",
    "faults" => "Faults of the environment that left samples without a verdict",
    "aup" => "AUP and pass rate per model and language",
    "pass_rate" => "Pass rate per model and language",
    "rp_matrix" => "Task × language matrix of r per model",
    "pass_rate_by_tier" => "Pass rate per model and resource tier",
    "variance_by_task" => "Cross-lingual variance of r per task and model",
    "variance_tiers" => "Variance within and between resource tiers per model",
    "spearman" => "Spearman correlation of task variance with task characteristics",
    "failures" => "Failure taxonomy per model and language",
    "leakage" => "Leakage findings per model",
    "cost" => "Token usage and cost per model",
    "medals" => "MLE-bench medals per model and language",
    "agents" => "Agent searches per model, agent, competition and language",
    "leaderboard" => "Leaderboard: every entrant overall, per tier and per language, over seeds",
);

/// Earlier texts of tables of [`TABLES`], oldest first per table (`queries/superseded/`).
pub const SUPERSEDED: [Query; 8] = [
    superseded!("cost", 1, "Token usage and cost per model"),
    superseded!("cost", 2, "Token usage and cost per model"),
    superseded!(
        "faults",
        1,
        "Faults of the environment that left samples without a verdict"
    ),
    superseded!("aup", 1, "AUP and pass rate per model and language"),
    superseded!("pass_rate", 1, "Pass rate per model and language"),
    superseded!("rp_matrix", 1, "Task × language matrix of r per model"),
    superseded!("pass_rate_by_tier", 1, "Pass rate per model and resource tier"),
    superseded!("medals", 1, "MLE-bench medals per model and language"),
];

/// The query, current or superseded, whose text has the blake3 `hash`.
pub fn by_blake3(hash: &crate::store::Hash) -> Option<&'static Query> {
    TABLES.iter().chain(&SUPERSEDED).find(|q| q.blake3() == *hash)
}

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
    fn superseded_texts_are_files_of_earlier_versions_of_current_tables() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("queries/superseded");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                e.unwrap()
                    .file_name()
                    .into_string()
                    .unwrap()
                    .strip_suffix(".sql")
                    .map(str::to_string)
            })
            .collect();
        on_disk.sort();
        let mut versions = std::collections::HashMap::<&str, u32>::new();
        let mut names = Vec::new();
        for q in &SUPERSEDED {
            let current = table(q.name).unwrap_or_else(|| panic!("superseded {} is no table", q.name));
            assert_ne!(current.blake3(), q.blake3(), "{} is not superseded", q.name);
            assert_eq!(current.title, q.title, "{}", q.name);
            let n = versions.entry(q.name).or_default();
            *n += 1;
            names.push(format!("{}.{n}", q.name));
            assert_eq!(by_blake3(&q.blake3()).map(|f| f.sql), Some(q.sql));
        }
        names.sort();
        assert_eq!(on_disk, names, "queries/superseded");
    }

    #[test]
    fn every_query_is_documented() {
        for q in TABLES.iter().chain(&VIEWS) {
            assert!(q.sql.starts_with("-- "), "{} has no leading comment", q.name);
            assert!(q.description().len() > q.title.len(), "{}", q.name);
        }
    }

    /// Marks and words after which a heading reads as cut off mid-sentence.
    const DANGLING_MARKS: &[char] = &['/', ',', '·', '×', ':', ';', '(', '-', '—', '='];
    const DANGLING_WORDS: &[&str] = &[
        "a", "and", "as", "at", "by", "for", "from", "in", "of", "on", "or", "per", "than", "that", "the",
        "to", "versus", "which", "whose", "with",
    ];

    /// Why `title` is not a complete heading, if it is not.
    fn incomplete(title: &str) -> Option<&'static str> {
        let last = title.rsplit(' ').next().unwrap_or_default().to_lowercase();
        if !(10..80).contains(&title.chars().count()) {
            Some("not between 10 and 80 characters")
        } else if title != title.trim() || title.contains('\n') {
            Some("not one trimmed line")
        } else if title.ends_with('.') {
            Some("ends with a full stop")
        } else if title.ends_with(DANGLING_MARKS)
            || DANGLING_WORDS.contains(&last.as_str())
            || last.ends_with("'s")
        {
            Some("ends with a connector")
        } else if title.matches('(').count() != title.matches(')').count() {
            Some("leaves a parenthesis open")
        } else {
            None
        }
    }

    #[test]
    fn every_title_is_a_complete_heading() {
        for q in TABLES.iter().chain(&VIEWS) {
            assert_eq!(incomplete(q.title), None, "{}: {:?}", q.name, q.title);
        }
    }

    #[test]
    fn the_completeness_check_catches_cut_headings() {
        for cut in [
            "Pass rate per model and resource tier (high / medium / low): 100 · valid runs /",
            "AUP per model × language in ml2b's convention, with pass rate: the paper's",
            "The failure taxonomy per model and language: runs by execute outcome (ok,",
            "Spearman correlation of each task's cross-lingual variance of r with the task's",
            "Leakage findings per model and",
            "Pass rate (per model",
            "Short",
        ] {
            assert!(incomplete(cut).is_some(), "{cut:?}");
        }
    }

    #[test]
    fn titles_are_unique() {
        let mut titles: Vec<&str> = TABLES.iter().chain(&VIEWS).map(|q| q.title).collect();
        titles.sort_unstable();
        titles.dedup();
        assert_eq!(titles.len(), TABLES.len() + VIEWS.len());
    }
}
