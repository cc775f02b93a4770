//! MLE-bench's per-competition `config.yaml`, read for the few keys the importer needs.
//!
//! The files are written by MLE-bench's maintainers in one plain shape (top-level `key:
//! value` scalars, and one level of nested mappings such as `dataset:` and `grader:`):
//! ```yaml
//! id: spooky-author-identification
//! name: Spooky Author Identification
//! description: mlebench/competitions/spooky-author-identification/description.md
//! dataset:
//!   answers: spooky-author-identification/prepared/private/test.csv
//!   sample_submission: spooky-author-identification/prepared/public/sample_submission.csv
//! grader:
//!   name: multi-class-log-loss
//!   grade_fn: mlebench.competitions.spooky-author-identification.grade:grade
//! ```
//! This reader takes exactly that subset: comments and blank lines are skipped, lists
//! (`prizes:` items) are skipped, quoted scalars are unquoted. Anything it does not
//! understand under a key it needs is an error naming the file and line, never a guess.
//! Paths under `dataset:` are relative to the data directory `mlebench prepare` wrote.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::ImportError;

/// What the importer reads of one `config.yaml`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    pub path: PathBuf,
    /// `name`: the competition's title.
    pub name: Option<String>,
    /// `grader.name`.
    pub grader: Option<String>,
    /// `dataset.answers`, relative to the data directory.
    pub answers: Option<String>,
    /// `dataset.sample_submission`, relative to the data directory.
    pub sample_submission: Option<String>,
}

impl Config {
    /// Reads `path`.
    pub fn read(path: &Path) -> Result<Self, ImportError> {
        let text = std::fs::read_to_string(path).map_err(|source| ImportError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(path, &text)
    }

    /// Parses the text of `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ImportError> {
        let keys = flatten(path, text)?;
        let get = |k: &str| keys.get(k).cloned();
        Ok(Self {
            path: path.to_path_buf(),
            name: get("name"),
            grader: get("grader.name"),
            answers: get("dataset.answers"),
            sample_submission: get("dataset.sample_submission"),
        })
    }
}

/// `section.key` → scalar, for top-level scalars and one level of nesting.
fn flatten(path: &Path, text: &str) -> Result<BTreeMap<String, String>, ImportError> {
    let mut out = BTreeMap::new();
    let mut section: Option<String> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = strip_comment(raw);
        if line.trim().is_empty() {
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        let body = line.trim();
        if body.starts_with('-') {
            continue; // a list item (prizes); never a key the importer reads
        }
        let Some((key, value)) = body.split_once(':') else {
            return Err(ImportError::invalid(
                path,
                format!("line {}: `{body}` is not `key: value`", n + 1),
            ));
        };
        let (key, value) = (key.trim(), unquote(value.trim()));
        if !indented {
            if value.is_empty() {
                section = Some(key.to_string());
            } else {
                section = None;
                out.insert(key.to_string(), value);
            }
        } else if let Some(s) = &section
            && !value.is_empty()
        {
            out.insert(format!("{s}.{key}"), value);
        }
    }
    Ok(out)
}

/// The line without a trailing `# comment` (a `#` inside quotes is kept).
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if i == 0 || line[..i].ends_with([' ', '\t']) => return &line[..i],
            _ => {}
        }
    }
    line
}

fn unquote(value: &str) -> String {
    let v = value.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v[1..v.len() - 1].to_string();
        }
    }
    if v == "null" || v == "~" {
        return String::new();
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_keys_of_a_real_config() {
        let text = "id: nomad2018-predict-transparent-conductors\n\
            name: Nomad2018 Predicting Transparent Conductors\n\
            competition_type: simple\n\
            awards_medals: false\n\
            prizes:\n  - position: 1\n    value: 2496\n\
            description: mlebench/competitions/nomad2018/description.md\n\n\
            dataset:\n  answers: nomad/prepared/private/test.csv # the answers\n  \
            sample_submission: \"nomad/prepared/public/sample_submission.csv\"\n\n\
            grader:\n  name: mean-column-wise-rmsle\n  grade_fn: mlebench.x.grade:grade\n\n\
            preparer: mlebench.x.prepare:prepare\n";
        let c = Config::parse(Path::new("config.yaml"), text).unwrap();
        assert_eq!(
            c.name.as_deref(),
            Some("Nomad2018 Predicting Transparent Conductors")
        );
        assert_eq!(c.grader.as_deref(), Some("mean-column-wise-rmsle"));
        assert_eq!(c.answers.as_deref(), Some("nomad/prepared/private/test.csv"));
        assert_eq!(
            c.sample_submission.as_deref(),
            Some("nomad/prepared/public/sample_submission.csv")
        );
    }

    #[test]
    fn a_line_that_is_not_a_key_names_the_file_and_line() {
        let err = Config::parse(Path::new("c/config.yaml"), "grader:\n  name accuracy\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("c/config.yaml") && err.contains("line 2"), "{err}");
    }
}
