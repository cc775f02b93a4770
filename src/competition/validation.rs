//! The validation split: the public training rows of a competition split once more, so that
//! an agent (AIDE, `stages::generate::aide`) can score its own attempts without ever
//! touching the held-out features or the private answers.
//!
//! Rule (version 1): the rows of `public/train.csv` are split by
//! [`split::holdout_in`] in the domain [`split::VALIDATION_DOMAIN`] with the manifest's
//! split seed, the given fraction and the manifest's `stratify` (on the first target). The
//! rows keep their ids and their order. Three files are written into a folder:
//!
//! ```text
//! train.csv     the kept rows, every column of public/train.csv
//! test.csv      the validation rows without the target and weight columns (the weight
//!               stays when `columns.weight_is_feature`, as in public/test.csv)
//! answers.csv   the validation rows' id, targets and weight (the private answers' layout)
//! ```
//!
//! So the harness runs on the folder exactly as on `public/`, and the grader scores the
//! predictions against `answers.csv` exactly as against `private/answers.csv`. The bytes
//! are a pure function of `public/train.csv` and the rule's inputs; [`Validation::blake3`]
//! names them, for unit keys.

use std::path::{Path, PathBuf};

use super::prepare::{PrepareError, Table, csv_writer, finish, write_atomic};
use super::{Competition, Side, split};

/// A validation split written to a folder.
#[derive(Clone, Debug)]
pub struct Validation {
    /// Holds `train.csv` and `test.csv` (the harness's public folder) and `answers.csv`.
    pub dir: PathBuf,
    /// blake3 over the three files' blake3s, in the order train, test, answers.
    pub blake3: String,
    pub train_rows: usize,
    pub validation_rows: usize,
}

impl Validation {
    /// The answers file, for the grader.
    pub fn answers(&self) -> PathBuf {
        self.dir.join("answers.csv")
    }
}

/// Splits `c`'s public training rows, holding out `fraction`, into `dir` (created).
pub fn write(c: &Competition, fraction: f64, dir: &Path) -> Result<Validation, PrepareError> {
    let m = &c.manifest;
    let table = Table::read(&c.file(Side::Public, "train.csv"))?;
    let id = table.column(&m.columns.id)?;
    let (targets, weight) = table.answer_columns(m)?;
    let labels = table.values(targets[0]);
    let stratify = m.split.stratify.then_some(labels.as_slice());
    let n = table.rows.len();
    let a = split::holdout_in(split::VALIDATION_DOMAIN, n, fraction, m.split.seed, stratify);
    let kept: Vec<usize> = (0..n).filter(|&i| !a.held_out[i]).collect();
    let held: Vec<usize> = (0..n).filter(|&i| a.held_out[i]).collect();
    if kept.is_empty() || held.is_empty() {
        return Err(PrepareError::Data {
            path: table.path.clone(),
            message: format!("{n} rows are too few for a validation split of {fraction}"),
        });
    }
    let all: Vec<usize> = (0..table.header.len()).collect();
    let hidden_weight = weight.filter(|_| !m.columns.weight_is_feature);
    let features: Vec<usize> = all
        .iter()
        .copied()
        .filter(|i| !targets.contains(i) && Some(*i) != hidden_weight)
        .collect();
    let answers: Vec<usize> = std::iter::once(id)
        .chain(targets.iter().copied())
        .chain(weight)
        .collect();
    let files = [
        ("train.csv", rows(&table, &kept, &all)),
        ("test.csv", rows(&table, &held, &features)),
        ("answers.csv", rows(&table, &held, &answers)),
    ];
    std::fs::create_dir_all(dir).map_err(|source| PrepareError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut hasher = blake3::Hasher::new();
    for (name, bytes) in &files {
        hasher.update(blake3::hash(bytes).as_bytes());
        write_atomic(&dir.join(name), bytes)?;
    }
    Ok(Validation {
        dir: dir.to_path_buf(),
        blake3: hasher.finalize().to_hex().to_string(),
        train_rows: kept.len(),
        validation_rows: held.len(),
    })
}

/// The CSV of `rows` (source order) restricted to `cols` (their order).
fn rows(table: &Table, rows: &[usize], cols: &[usize]) -> Vec<u8> {
    let mut w = csv_writer();
    w.write_record(cols.iter().map(|&c| table.header[c].as_str()))
        .expect("memory");
    for &r in rows {
        w.write_record(cols.iter().map(|&c| &table.rows[r][c]))
            .expect("memory");
    }
    finish(w)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::competition::Benchmark;

    fn bench() -> Benchmark {
        Benchmark::load(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    fn read(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
        let mut r = csv::Reader::from_path(path).unwrap();
        let header = r.headers().unwrap().iter().map(String::from).collect();
        let rows = r
            .records()
            .map(|x| x.unwrap().iter().map(String::from).collect())
            .collect();
        (header, rows)
    }

    #[test]
    fn the_split_partitions_the_public_training_rows_and_hides_the_targets() {
        let bench = bench();
        let c = bench.select(&["credit-risk".to_string()]).unwrap()[0];
        let dir = tempfile::tempdir().unwrap();
        let v = write(c, 0.2, dir.path()).unwrap();
        let (header, public) = read(&c.file(Side::Public, "train.csv"));
        let (_, public_test) = read(&c.file(Side::Public, "test.csv"));
        let (train_header, train) = read(&v.dir.join("train.csv"));
        let (test_header, test) = read(&v.dir.join("test.csv"));
        let (answers_header, answers) = read(&v.answers());
        let m = &c.manifest;
        assert_eq!(train_header, header);
        assert!(m.columns.targets.iter().all(|t| !test_header.contains(t)));
        assert_eq!(answers_header[0], m.columns.id);
        assert_eq!(answers_header[1..], m.columns.targets[..]);
        assert_eq!((v.train_rows, v.validation_rows), (train.len(), test.len()));

        // Every validation row is a public training row, never a held-out one, with its
        // own target in the answers; kept and validation rows partition the training rows.
        let by_id: BTreeMap<&str, &Vec<String>> = public.iter().map(|r| (r[0].as_str(), r)).collect();
        let held_out: BTreeSet<&str> = public_test.iter().map(|r| r[0].as_str()).collect();
        let target = header.iter().position(|h| *h == m.columns.targets[0]).unwrap();
        for (row, answer) in test.iter().zip(&answers) {
            assert_eq!(row[0], answer[0]);
            assert!(!held_out.contains(row[0].as_str()));
            assert_eq!(by_id[row[0].as_str()][target], answer[1]);
        }
        let mut ids: Vec<&str> = train.iter().chain(&test).map(|r| r[0].as_str()).collect();
        ids.sort_unstable();
        let mut all: Vec<&str> = by_id.keys().copied().collect();
        all.sort_unstable();
        assert_eq!(ids, all);
        assert_eq!(test.len(), (public.len() as f64 * 0.2).round() as usize);

        // Stratified like the competition: both classes in both parts, in proportion.
        let share = |rows: &[Vec<String>], col: usize| {
            rows.iter().filter(|r| r[col] == "bad").count() as f64 / rows.len() as f64
        };
        assert!((share(&train, target) - share(&answers, 1)).abs() < 0.01);

        // Deterministic: the same bytes and hash again.
        let again = write(c, 0.2, &dir.path().join("again")).unwrap();
        assert_eq!(again.blake3, v.blake3);
        assert_ne!(write(c, 0.3, &dir.path().join("other")).unwrap().blake3, v.blake3);
    }

    #[test]
    fn too_few_rows_are_refused_with_the_file() {
        let bench = bench();
        let c = bench.select(&["concrete-strength".to_string()]).unwrap()[0];
        let dir = tempfile::tempdir().unwrap();
        let err = write(c, 0.0, dir.path()).unwrap_err().to_string();
        assert!(err.contains("train.csv") && err.contains("too few"), "{err}");
    }
}
