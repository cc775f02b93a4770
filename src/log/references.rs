//! What events name outside their own row, and the check that each of those still exists.
//!
//! A log shows most damage by itself (a gap, a broken chain, a changed byte), but not the
//! loss of its last segments, nor of an object its events name. The events written later
//! show it, because they name what they read:
//!
//! ```text
//! column (any log)        names                                 must be
//! upstream: list<utf8>    event ids                             an event of an intact segment
//! <name>_blake3: utf8     an object (code, prompt, response,    an object under objects/
//!                         predictions, a table's result)        (whose hash `verify` checks)
//! inputs: list<utf8>      `<stage>=<head>`: the head of each    an intact segment of log/<stage>/
//!                         log a table was computed from
//! ```
//! The rules go by column name and type, so they hold for every log and every schema
//! version without knowing the stages. An event id hashes its stage's name, so the one log
//! that can hold an upstream id is its upstream log. Two lists name the exceptions:
//! [`NOT_OBJECTS`], the `_blake3` columns that hash something the store does not keep, and
//! [`NOT_LOGS`], the `inputs` entries that name no log.
//!
//! "Intact" is what verification read in full without a problem: a damaged segment's
//! events name nothing and are named by no one. One problem is reported per missing
//! object (at its path), per log whose recorded head is gone (at its folder), and per
//! segment whose events name missing upstream events (counted); a value that should name
//! something and does not parse is a problem of its segment.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, AsArray, RecordBatch};

use super::problem::Problem;
use crate::store::{Hash, Store};

/// `_blake3` columns that hash what the store does not keep.
pub const NOT_OBJECTS: [&str; 12] = [
    // grade: the private answers, the MLE-bench leaderboard and the grading program's
    // files, under the benchmark root.
    "answers_blake3",
    "leaderboard_blake3",
    "grader_blake3",
    // translate_validate (and generate, rating): the task texts, back-translations and
    // ratings of the root.
    "english_blake3",
    "text_blake3",
    "back_blake3",
    "ratings_blake3",
    // analyze: the SQL of queries/, compiled into the binary.
    "query_blake3",
    // generate, journal: a request's cache key.
    "request_blake3",
    // journal: the validation split of the training rows, written outside the store.
    "validation_blake3",
    // translate: the task file translated, under the benchmark root, and the instructions,
    // compiled into the binary.
    "source_blake3",
    "instructions_blake3",
];

/// `inputs` entries (`<name>=<hash>`) that name no log: the manifests' fingerprint.
pub const NOT_LOGS: [&str; 1] = ["manifests"];

/// Something an event names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Target {
    Event(Hash),
    Object(Hash),
    Head { stage: String, hash: Hash },
}

/// Where a target was first named: a segment (an index into `segments`) and a column.
#[derive(Clone, Debug)]
struct Naming {
    segment: usize,
    column: Arc<str>,
}

/// What the verified segments hold and name, gathered one segment at a time.
#[derive(Default)]
pub struct References {
    /// Every event id of every log.
    events: HashSet<Hash>,
    /// Every segment of every log: (stage, hash).
    segment_hashes: HashSet<(String, Hash)>,
    /// The segments that name something, by index.
    segments: Vec<PathBuf>,
    /// Everything named, with where it was named first.
    named: HashMap<Target, Naming>,
    /// Values that should name something and do not parse.
    malformed: Vec<Problem>,
}

impl References {
    /// Adds one verified segment of `stage`: its hash, its event ids and what its rows name.
    pub fn add(&mut self, stage: &str, path: &Path, hash: Hash, batches: &[RecordBatch]) {
        self.segment_hashes.insert((stage.to_string(), hash));
        let segment = self.segments.len();
        self.segments.push(path.to_path_buf());
        for batch in batches {
            self.add_batch(segment, batch);
        }
    }

    fn add_batch(&mut self, segment: usize, batch: &RecordBatch) {
        let schema = batch.schema();
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            let name = field.name().as_str();
            let kind = match name {
                "event_id" => Column::EventId,
                "upstream" => Column::Upstream,
                "inputs" => Column::Inputs,
                _ if name.ends_with("_blake3") && !NOT_OBJECTS.contains(&name) => Column::Object,
                _ => continue,
            };
            let column_name: Arc<str> = Arc::from(name);
            for value in strings(column.as_ref()) {
                self.add_value(segment, &column_name, kind, value);
            }
        }
    }

    fn add_value(&mut self, segment: usize, column: &Arc<str>, kind: Column, value: &str) {
        let target = match kind {
            Column::EventId => {
                if let Ok(id) = value.parse() {
                    self.events.insert(id);
                }
                return;
            }
            Column::Upstream => value.parse().map(Target::Event).ok(),
            Column::Object if value.is_empty() => return,
            Column::Object => value.parse().map(Target::Object).ok(),
            Column::Inputs => match head(value) {
                Head::Log(stage, hash) => Some(Target::Head { stage, hash }),
                Head::None => return,
                Head::Malformed => None,
            },
        };
        match target {
            Some(t) => {
                self.named.entry(t).or_insert_with(|| Naming {
                    segment,
                    column: column.clone(),
                });
            }
            None => self.malformed(segment, column, value),
        }
    }

    fn malformed(&mut self, segment: usize, column: &str, value: &str) {
        let path = &self.segments[segment];
        if self.malformed.iter().any(|p| &p.path == path) {
            return;
        }
        self.malformed.push(Problem {
            path: path.clone(),
            message: format!("column `{column}` holds `{value}`, which names nothing"),
        });
    }

    /// Checks that everything named exists; returns one problem per missing thing (per
    /// naming segment for events), sorted.
    pub fn check(self, store: &Store) -> Vec<Problem> {
        let mut problems = self.malformed.clone();
        let mut lost_events: HashMap<usize, (u64, Hash)> = HashMap::new();
        for (target, naming) in &self.named {
            match target {
                Target::Event(id) if !self.events.contains(id) => {
                    let lost = lost_events.entry(naming.segment).or_insert((0, *id));
                    lost.0 += 1;
                    lost.1 = lost.1.min(*id);
                }
                Target::Event(_) => {}
                Target::Object(hash) => problems.extend(self.check_object(store, *hash, naming)),
                Target::Head { stage, hash } => {
                    if !self.segment_hashes.contains(&(stage.clone(), *hash)) {
                        problems.push(self.lost_head(store, stage, hash, naming));
                    }
                }
            }
        }
        for (segment, (count, first)) in lost_events {
            problems.push(Problem {
                path: self.segments[segment].clone(),
                message: format!(
                    "its events name {count} upstream event(s) that no intact segment holds \
                     (e.g. {}): a segment of an upstream log is damaged or gone",
                    first.short()
                ),
            });
        }
        problems.sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
        problems
    }

    fn check_object(&self, store: &Store, hash: Hash, naming: &Naming) -> Option<Problem> {
        let path = store.objects().path(&hash);
        let message = match store.objects().exists(&hash) {
            Ok(true) => return None,
            Ok(false) => format!(
                "missing: named by `{}` in {}",
                naming.column,
                self.segments[naming.segment].display()
            ),
            Err(e) => crate::error::chain(&e),
        };
        Some(Problem { path, message })
    }

    fn lost_head(&self, store: &Store, stage: &str, hash: &Hash, naming: &Naming) -> Problem {
        Problem {
            path: store.log_dir(stage),
            message: format!(
                "{} records head {} of this log (in `{}`), which is none of its intact \
                 segments: its last segment(s) are damaged or gone",
                self.segments[naming.segment].display(),
                hash.short(),
                naming.column
            ),
        }
    }
}

/// How a column's values are read.
#[derive(Clone, Copy, Debug)]
enum Column {
    EventId,
    Upstream,
    Object,
    Inputs,
}

/// One `inputs` entry.
enum Head {
    /// `<stage>=<hash>`.
    Log(String, Hash),
    /// `<stage>=-` (the log was empty) or an entry of [`NOT_LOGS`].
    None,
    Malformed,
}

fn head(value: &str) -> Head {
    let Some((name, hash)) = value.split_once('=') else {
        return Head::Malformed;
    };
    if hash == "-" || NOT_LOGS.contains(&name) {
        return Head::None;
    }
    match (super::stage_log::check_stage_name(name), hash.parse()) {
        (Ok(()), Ok(hash)) => Head::Log(name.to_string(), hash),
        _ => Head::Malformed,
    }
}

/// The values of a `utf8` or `list<utf8>` column, nulls left out; none for other types.
fn strings(column: &dyn Array) -> Vec<&str> {
    if let Some(values) = column.as_string_opt::<i32>() {
        return values.iter().flatten().collect();
    }
    let Some(lists) = column.as_list_opt::<i32>() else {
        return Vec::new();
    };
    let Some(values) = lists.values().as_string_opt::<i32>() else {
        return Vec::new();
    };
    let offsets = lists.value_offsets();
    (0..lists.len())
        .filter(|&row| lists.is_valid(row))
        .flat_map(|row| offsets[row] as usize..offsets[row + 1] as usize)
        .filter(|&i| values.is_valid(i))
        .map(|i| values.value(i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_of_lists_skip_null_rows_and_items() {
        use arrow::array::{ListBuilder, StringArray, StringBuilder};
        let mut b = ListBuilder::new(StringBuilder::new());
        b.values().append_value("a");
        b.values().append_null();
        b.append(true);
        b.values().append_value("hidden");
        b.append(false);
        b.values().append_value("b");
        b.append(true);
        assert_eq!(strings(&b.finish()), vec!["a", "b"]);
        let plain = StringArray::from(vec![Some("x"), None, Some("y")]);
        assert_eq!(strings(&plain), vec!["x", "y"]);
        assert!(strings(&arrow::array::UInt64Array::from(vec![1u64])).is_empty());
    }

    #[test]
    fn inputs_name_heads_of_logs_only() {
        let h = Hash::of(b"x");
        assert!(matches!(head(&format!("generate={h}")), Head::Log(s, x) if s == "generate" && x == h));
        assert!(matches!(head("grade=-"), Head::None));
        assert!(matches!(head(&format!("manifests={h}")), Head::None));
        assert!(matches!(head("generate=nothex"), Head::Malformed));
        assert!(matches!(head("no equals sign"), Head::Malformed));
    }
}
