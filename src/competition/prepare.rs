//! `ml2b prepare`: rebuild a competition's public and private files from its source, and
//! check them against the checksums its manifest records.
//!
//! Built files (holdout rule; [`super::split`] decides ids and held-out rows):
//! * `public/train.csv`: `id`, then every source column (targets and weight included), the
//!   training rows in id order;
//! * `public/test.csv`: `id` and the feature columns (source columns minus targets and
//!   weight; the weight stays when `columns.weight_is_feature`), the held-out rows in id
//!   order;
//! * `public/sample_submission.csv`: `id` and the prediction columns with a constant,
//!   valid prediction from the training rows (mean, most frequent label, class shares);
//! * `private/answers.csv`: `id`, the targets (and weight) of the held-out rows.
//!
//! The source is a CSV file, gzipped when its name ends in `.gz`, read as the manifest's
//! `[source.format]` says ([`super::source_format`]: its encoding decoded, its delimiter,
//! its decimal commas rewritten as points); the built files are always UTF-8,
//! comma-separated, with a decimal point. Field text is otherwise copied verbatim; CSV is
//! written with `\n` line ends and quotes only where needed, so a rebuild is byte-identical. Files are written atomically (temp file, fsync,
//! rename). A competition with `split.rule = "given"` builds nothing: its files are only
//! hashed and checked.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::source_format;
use super::{Competition, Side, split, terms};
use crate::manifest::competition::{SourceFormat, SplitRule};
use crate::manifest::{CompetitionManifest, ManifestError};
use crate::metrics::grading::registry::MapForm;
use crate::metrics::grading::{InputKind, Metric};

/// Why a competition cannot be prepared.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", path.display())]
    Csv {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{}: {message}", path.display())]
    Data { path: PathBuf, message: String },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("{}: {message}", path.display())]
    Refused { path: PathBuf, message: String },
}

impl crate::error::IsInputError for PrepareError {
    fn is_input_error(&self) -> bool {
        matches!(self, Self::Csv { .. } | Self::Data { .. } | Self::Manifest(_))
    }
}
crate::error::input_error!(PrepareError);

impl PrepareError {
    /// The same error with each path that `relocate` maps replaced: an import prepares in a
    /// staging folder it removes, so its errors name the original files instead.
    pub(crate) fn relocated(self, relocate: impl Fn(&Path) -> Option<PathBuf>) -> Self {
        let to = |path: PathBuf| relocate(&path).unwrap_or(path);
        match self {
            Self::Read { path, source } => Self::Read {
                path: to(path),
                source,
            },
            Self::Csv { path, line, message } => Self::Csv {
                path: to(path),
                line,
                message,
            },
            Self::Data { path, message } => Self::Data {
                path: to(path),
                message,
            },
            Self::Write { path, source } => Self::Write {
                path: to(path),
                source,
            },
            Self::Refused { path, message } => Self::Refused {
                path: to(path),
                message,
            },
            Self::Manifest(e) => Self::Manifest(e),
        }
    }
}

/// One built (or, for a given split, found) file.
#[derive(Clone, Debug)]
pub struct BuiltFile {
    pub side: Side,
    pub name: String,
    pub bytes: Vec<u8>,
    pub blake3: String,
}

/// What prepare measures about a competition (its manifest's `[characteristics]`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measured {
    pub rows: u64,
    pub features: u64,
    pub classes: u64,
    pub domain_term_density: f64,
}

/// Everything prepare derives for one competition.
#[derive(Clone, Debug)]
pub struct Built {
    pub source_blake3: Option<String>,
    pub files: Vec<BuiltFile>,
    pub measured: Measured,
}

/// A raw CSV table: header and records as text.
/// A parsed CSV file: its header and its records.
pub(crate) struct Table {
    pub(crate) path: PathBuf,
    pub(crate) header: Vec<String>,
    pub(crate) rows: Vec<csv::StringRecord>,
}

impl Table {
    pub(crate) fn read(path: &Path) -> Result<Self, PrepareError> {
        let bytes = std::fs::read(path).map_err(|source| PrepareError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(path, &bytes)
    }

    fn parse(path: &Path, bytes: &[u8]) -> Result<Self, PrepareError> {
        Self::parse_with(path, bytes, b',')
    }

    /// Reads a source file's (decompressed) bytes as `format` says: decoded, split at its
    /// delimiter, and with a decimal comma, every decimal-comma number of a column that
    /// holds only numbers rewritten with a point ([`super::source_format`]).
    pub(crate) fn parse_source(
        path: &Path,
        bytes: &[u8],
        format: &SourceFormat,
    ) -> Result<Self, PrepareError> {
        let text = source_format::decode(bytes, format.encoding).map_err(|message| PrepareError::Data {
            path: path.to_path_buf(),
            message,
        })?;
        let delimiter = u8::try_from(format.delimiter).map_err(|_| PrepareError::Data {
            path: path.to_path_buf(),
            message: format!("the delimiter {:?} is not ASCII", format.delimiter),
        })?;
        let mut table = Self::parse_with(path, text.as_bytes(), delimiter)?;
        if format.decimal == ',' {
            for col in source_format::decimal_comma_columns(&table.rows, table.header.len()) {
                for row in &mut table.rows {
                    if let Some(point) = source_format::with_decimal_point(&row[col]) {
                        let mut fields: Vec<String> = row.iter().map(str::to_string).collect();
                        fields[col] = point;
                        let position = row.position().cloned();
                        *row = csv::StringRecord::from(fields);
                        row.set_position(position);
                    }
                }
            }
        }
        Ok(table)
    }

    fn parse_with(path: &Path, bytes: &[u8], delimiter: u8) -> Result<Self, PrepareError> {
        let csv_err = |e: csv::Error| PrepareError::Csv {
            path: path.to_path_buf(),
            line: e.position().map_or(1, |p| p.line()),
            message: e.to_string(),
        };
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .delimiter(delimiter)
            .from_reader(bytes);
        let header: Vec<String> = reader
            .headers()
            .map_err(csv_err)?
            .iter()
            .map(str::to_string)
            .collect();
        let rows = reader.records().collect::<Result<Vec<_>, _>>().map_err(csv_err)?;
        Ok(Self {
            path: path.to_path_buf(),
            header,
            rows,
        })
    }

    /// The indices of the manifest's target columns and of its weight column, if any.
    pub(crate) fn answer_columns(
        &self,
        m: &CompetitionManifest,
    ) -> Result<(Vec<usize>, Option<usize>), PrepareError> {
        let targets = m
            .columns
            .targets
            .iter()
            .map(|t| self.column(t))
            .collect::<Result<_, _>>()?;
        let weight = m.columns.weight.as_deref().map(|w| self.column(w)).transpose()?;
        Ok((targets, weight))
    }

    /// Every row's value in column `col`.
    pub(crate) fn values(&self, col: usize) -> Vec<&str> {
        self.rows.iter().map(|r| &r[col]).collect()
    }

    pub(crate) fn column(&self, name: &str) -> Result<usize, PrepareError> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| PrepareError::Data {
                path: self.path.clone(),
                message: format!("has no column `{name}` (columns: {})", self.header.join(", ")),
            })
    }

    fn numbers(&self, col: usize) -> Result<Vec<f64>, PrepareError> {
        self.rows
            .iter()
            .enumerate()
            .map(|(r, row)| {
                row[col]
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| PrepareError::Csv {
                        path: self.path.clone(),
                        line: r as u64 + 2,
                        message: format!("`{}` = `{}` is not a finite number", self.header[col], &row[col]),
                    })
            })
            .collect()
    }
}

/// Builds (or, for a given split, hashes) every file of `c` and measures it.
pub fn build(c: &Competition) -> Result<Built, PrepareError> {
    let density = density_of(c)?;
    match c.manifest.split.rule {
        SplitRule::Holdout => build_holdout(c, density),
        SplitRule::Given => hash_given(c, density),
    }
}

fn density_of(c: &Competition) -> Result<f64, PrepareError> {
    let terms = &c.manifest.characteristics.domain_terms;
    let en = c.task("en")?;
    let missing = terms::missing(&en.description, terms);
    if let Some(term) = missing.first() {
        return Err(ManifestError::Invalid {
            path: c.manifest_path.clone(),
            field: "characteristics.domain_terms".into(),
            message: format!("`{term}` does not occur in the English description"),
        }
        .into());
    }
    Ok(terms::density(&en.description, terms))
}

fn build_holdout(c: &Competition, domain_term_density: f64) -> Result<Built, PrepareError> {
    let m = &c.manifest;
    let source_path = c.dir.join(&m.source.file);
    let source_bytes = std::fs::read(&source_path).map_err(|source| PrepareError::Read {
        path: source_path.clone(),
        source,
    })?;
    let source_blake3 = blake3::hash(&source_bytes).to_hex().to_string();
    let table = Table::parse_source(
        &source_path,
        &decompressed(&source_path, source_bytes)?,
        &m.source.format,
    )?;
    if table.header.contains(&m.columns.id) {
        return Err(PrepareError::Data {
            path: source_path,
            message: format!(
                "already has a column `{}`; prepare adds the id column itself",
                m.columns.id
            ),
        });
    }
    let (targets, weight) = table.answer_columns(m)?;
    let labels = table.values(targets[0]);
    let stratify = m.split.stratify.then_some(labels.as_slice());
    let assignment = split::holdout(table.rows.len(), m.split.test_fraction, m.split.seed, stratify);
    if assignment.test_rows().next().is_none() || assignment.train_rows().next().is_none() {
        return Err(PrepareError::Data {
            path: source_path,
            message: format!("{} rows are too few to split", table.rows.len()),
        });
    }

    let hidden_weight = weight.filter(|_| !m.columns.weight_is_feature);
    let features: Vec<usize> = (0..table.header.len())
        .filter(|i| !targets.contains(i) && Some(*i) != hidden_weight)
        .collect();
    let answer_cols: Vec<usize> = targets.iter().copied().chain(weight).collect();
    let all: Vec<usize> = (0..table.header.len()).collect();
    let id = m.columns.id.as_str();
    let train: Vec<usize> = assignment.train_rows().collect();
    let test: Vec<usize> = assignment.test_rows().collect();

    let train_csv = write_rows(&table, id, &assignment.ids, &train, &all)?;
    let test_csv = write_rows(&table, id, &assignment.ids, &test, &features)?;
    let answers_csv = write_rows(&table, id, &assignment.ids, &test, &answer_cols)?;
    let sample_csv = sample_submission(m, &table, &targets, &train, &test, &assignment.ids)?;

    let classes = if m.task.is_classification() {
        labels.iter().collect::<BTreeSet<_>>().len() as u64
    } else {
        0
    };
    let file = |side, name: &str, bytes: Vec<u8>| BuiltFile {
        side,
        name: name.into(),
        blake3: blake3::hash(&bytes).to_hex().to_string(),
        bytes,
    };
    Ok(Built {
        source_blake3: Some(source_blake3),
        files: vec![
            file(Side::Public, "train.csv", train_csv),
            file(Side::Public, "test.csv", test_csv),
            file(Side::Public, "sample_submission.csv", sample_csv),
            file(Side::Private, "answers.csv", answers_csv),
        ],
        measured: Measured {
            rows: table.rows.len() as u64,
            features: features.len() as u64,
            classes,
            domain_term_density,
        },
    })
}

/// The bytes of a source file, gunzipped when its name ends in `.gz`.
pub(crate) fn decompressed(path: &Path, bytes: Vec<u8>) -> Result<Vec<u8>, PrepareError> {
    if path.extension().is_none_or(|e| e != "gz") {
        return Ok(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len() * 4);
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut out).map_err(|e| {
        PrepareError::Data {
            path: path.to_path_buf(),
            message: format!("is not valid gzip: {e}"),
        }
    })?;
    Ok(out)
}

pub(crate) fn csv_writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new())
}

pub(crate) fn finish(w: csv::Writer<Vec<u8>>) -> Vec<u8> {
    w.into_inner().expect("writing to memory cannot fail")
}

fn write_rows(
    table: &Table,
    id: &str,
    ids: &[u64],
    rows: &[usize],
    cols: &[usize],
) -> Result<Vec<u8>, PrepareError> {
    let mut w = csv_writer();
    let header = std::iter::once(id).chain(cols.iter().map(|&c| table.header[c].as_str()));
    w.write_record(header).expect("memory");
    let mut record = csv::StringRecord::new();
    for &r in rows {
        record.clear();
        record.push_field(&ids[r].to_string());
        for &c in cols {
            record.push_field(&table.rows[r][c]);
        }
        w.write_record(&record).expect("memory");
    }
    Ok(finish(w))
}

/// The constant prediction columns of the sample submission.
fn sample_submission(
    m: &CompetitionManifest,
    table: &Table,
    targets: &[usize],
    train: &[usize],
    test: &[usize],
    ids: &[u64],
) -> Result<Vec<u8>, PrepareError> {
    let metric = m.metric().ok_or_else(|| PrepareError::Refused {
        path: PathBuf::from(&m.source.file),
        message: "a program-graded competition has a given split, never a holdout".into(),
    })?;
    let train_labels = || -> Vec<&str> { train.iter().map(|&r| &table.rows[r][targets[0]]).collect() };
    let (header, values): (Vec<String>, Vec<String>) = match metric.input_kind() {
        InputKind::Values | InputKind::WeightedValues | InputKind::MultiValues => {
            let mut values = Vec::new();
            for &t in targets {
                let all = table.numbers(t)?;
                let mean = train.iter().map(|&r| all[r]).sum::<f64>() / train.len() as f64;
                values.push(format!("{mean}"));
            }
            (targets.iter().map(|&t| table.header[t].clone()).collect(), values)
        }
        InputKind::Labels => (
            vec![table.header[targets[0]].clone()],
            vec![most_frequent(&train_labels())[0].to_string()],
        ),
        InputKind::LabelLists => {
            let value = match metric {
                Metric::Map(MapForm::Kaggle { k }) => {
                    let singles: Vec<&str> =
                        train_labels().iter().flat_map(|l| l.split_whitespace()).collect();
                    most_frequent(&singles)
                        .into_iter()
                        .take(k)
                        .collect::<Vec<_>>()
                        .join(" ")
                }
                _ => most_frequent(&train_labels())[0].to_string(),
            };
            (vec![table.header[targets[0]].clone()], vec![value])
        }
        InputKind::Probabilities => class_shares(&table.header[targets[0]], &train_labels()),
    };
    let mut w = csv_writer();
    w.write_record(std::iter::once(m.columns.id.as_str()).chain(header.iter().map(String::as_str)))
        .expect("memory");
    let mut test_ids: Vec<u64> = test.iter().map(|&r| ids[r]).collect();
    test_ids.sort_unstable();
    for id in test_ids {
        w.write_record(std::iter::once(id.to_string()).chain(values.iter().cloned()))
            .expect("memory");
    }
    Ok(finish(w))
}

/// Labels by descending count, ties in label order.
fn most_frequent<'a>(labels: &[&'a str]) -> Vec<&'a str> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for l in labels {
        *counts.entry(l).or_default() += 1;
    }
    let mut by_count: Vec<(&str, usize)> = counts.into_iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    by_count.into_iter().map(|(l, _)| l).collect()
}

/// Class shares: one column per class, or for two classes one column (named after the
/// target) with the share of the larger label, as the grader reads binary probabilities.
fn class_shares(target: &str, labels: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for l in labels {
        *counts.entry(l).or_default() += 1;
    }
    let mut classes: Vec<(&str, usize)> = counts.into_iter().collect();
    if classes.iter().all(|(l, _)| l.trim().parse::<f64>().is_ok()) {
        classes.sort_by(|a, b| {
            a.0.trim()
                .parse::<f64>()
                .unwrap()
                .total_cmp(&b.0.trim().parse::<f64>().unwrap())
        });
    }
    let n = labels.len() as f64;
    if classes.len() == 2 {
        (
            vec![target.to_string()],
            vec![format!("{}", classes[1].1 as f64 / n)],
        )
    } else {
        classes
            .iter()
            .map(|(l, c)| (l.to_string(), format!("{}", *c as f64 / n)))
            .unzip()
    }
}

fn hash_given(c: &Competition, domain_term_density: f64) -> Result<Built, PrepareError> {
    let m = &c.manifest;
    let mut files = Vec::new();
    for (side, names) in [(Side::Public, &m.files.public), (Side::Private, &m.files.private)] {
        for name in names.keys() {
            let path = c.file(side, name);
            let bytes = std::fs::read(&path).map_err(|source| PrepareError::Read { path, source })?;
            files.push(BuiltFile {
                side,
                name: name.clone(),
                blake3: blake3::hash(&bytes).to_hex().to_string(),
                bytes,
            });
        }
    }
    let train = Table::read(&c.file(Side::Public, "train.csv"))?;
    let test = Table::read(&c.file(Side::Public, "test.csv"))?;
    let classes = if m.task.is_classification() {
        let t = train.column(&m.columns.targets[0])?;
        train.rows.iter().map(|r| &r[t]).collect::<BTreeSet<_>>().len() as u64
    } else {
        0
    };
    let features = test.header.iter().filter(|h| **h != m.columns.id).count() as u64;
    Ok(Built {
        source_blake3: None,
        files,
        measured: Measured {
            rows: (train.rows.len() + test.rows.len()) as u64,
            features,
            classes,
            domain_term_density,
        },
    })
}

/// How one file compares with its manifest and with the file on disk.
#[derive(Clone, Debug, Serialize)]
pub struct FileCheck {
    /// Relative to `data/<id>/`.
    pub path: String,
    pub blake3: String,
    /// The manifest's checksum, if it records one.
    pub recorded: Option<String>,
    /// Whether the file on disk has exactly the built bytes.
    pub on_disk: bool,
}

impl FileCheck {
    pub fn matches(&self) -> bool {
        self.on_disk && self.recorded.as_deref() == Some(self.blake3.as_str())
    }
}

/// One competition's prepare check.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub id: String,
    pub files: Vec<FileCheck>,
    /// Problems other than a file's bytes: source checksum, characteristics, stray entries.
    pub problems: Vec<String>,
}

impl Check {
    pub fn ok(&self) -> bool {
        self.problems.is_empty() && self.files.iter().all(FileCheck::matches)
    }
}

/// Compares what was built with the manifest and the disk.
pub fn check(c: &Competition, built: &Built) -> Check {
    let m = &c.manifest;
    let mut problems = Vec::new();
    if let Some(hash) = &built.source_blake3
        && *hash != m.source.blake3
    {
        problems.push(format!(
            "{}: blake3 {hash}, but the manifest records `{}`",
            m.source.file, m.source.blake3
        ));
    }
    let files: Vec<FileCheck> = built
        .files
        .iter()
        .map(|f| {
            let recorded = side_map(m, f.side).get(&f.name).cloned();
            let on_disk = std::fs::read(c.file(f.side, &f.name)).is_ok_and(|b| b == f.bytes);
            FileCheck {
                path: format!("{}/{}", f.side.dir(), f.name),
                blake3: f.blake3.clone(),
                recorded,
                on_disk,
            }
        })
        .collect();
    for side in [Side::Public, Side::Private] {
        for name in side_map(m, side).keys() {
            if !built.files.iter().any(|f| f.side == side && f.name == *name) {
                problems.push(format!(
                    "{}/{name}: recorded in the manifest but not built",
                    side.dir()
                ));
            }
        }
    }
    let ch = &m.characteristics;
    let got = &built.measured;
    for (field, recorded, measured) in [
        ("rows", ch.rows, got.rows),
        ("features", ch.features, got.features),
        ("classes", ch.classes, got.classes),
    ] {
        if recorded != measured {
            problems.push(format!(
                "characteristics.{field} = {recorded}, but the data has {measured}"
            ));
        }
    }
    if (ch.domain_term_density - got.domain_term_density).abs() > 1e-12 {
        problems.push(format!(
            "characteristics.domain_term_density = {}, but the English description gives {}",
            ch.domain_term_density, got.domain_term_density
        ));
    }
    Check {
        id: m.id.clone(),
        files,
        problems,
    }
}

fn side_map(m: &CompetitionManifest, side: Side) -> &BTreeMap<String, String> {
    match side {
        Side::Public => &m.files.public,
        Side::Private => &m.files.private,
    }
}

/// Writes the built files whose bytes differ from the disk. Refuses, writing nothing, when
/// the manifest records other checksums (or another source) unless `update_manifest`, which
/// then records the new checksums and characteristics in the manifest (its layout and
/// comments kept). A fresh manifest (no source checksum, no files) is recorded as built.
pub fn write(c: &Competition, built: &Built, update_manifest: bool) -> Result<Vec<String>, PrepareError> {
    let check = check(c, built);
    let m = &c.manifest;
    let fresh = m.source.blake3.is_empty() && m.files.public.is_empty() && m.files.private.is_empty();
    let recorded_differs = check
        .files
        .iter()
        .any(|f| f.recorded.as_ref().is_some_and(|r| *r != f.blake3))
        || !check.problems.is_empty();
    if recorded_differs && !update_manifest && !fresh {
        let mut lines: Vec<String> = check
            .files
            .iter()
            .filter(|f| f.recorded.as_ref().is_some_and(|r| *r != f.blake3))
            .map(|f| {
                format!(
                    "{}: rebuilt blake3 {} differs from the recorded one",
                    f.path, f.blake3
                )
            })
            .collect();
        lines.extend(check.problems.iter().cloned());
        return Err(PrepareError::Refused {
            path: c.manifest_path.clone(),
            message: format!(
                "the rebuilt data does not match the manifest; nothing was written (pass --update-manifest to record the new data):\n  {}",
                lines.join("\n  ")
            ),
        });
    }
    let mut written = Vec::new();
    for (f, fc) in built.files.iter().zip(&check.files) {
        if !fc.on_disk {
            write_atomic(&c.file(f.side, &f.name), &f.bytes)?;
            written.push(fc.path.clone());
        }
    }
    if update_manifest || fresh || check.files.iter().any(|f| f.recorded.is_none()) {
        record(c, built)?;
    }
    Ok(written)
}

/// Writes `bytes` to `path` atomically (`store::write_atomic`), readable by every user: the
/// sandbox reads public files as an unprivileged user.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), PrepareError> {
    crate::store::write_atomic(path, bytes).map_err(|source| PrepareError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Records checksums and measurements in the manifest, keeping its layout.
fn record(c: &Competition, built: &Built) -> Result<(), PrepareError> {
    use toml_edit::{DocumentMut, Item, Table, value};
    let path = &c.manifest_path;
    let text = std::fs::read_to_string(path).map_err(|source| PrepareError::Read {
        path: path.clone(),
        source,
    })?;
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| PrepareError::Data {
            path: path.clone(),
            message: e.to_string(),
        })?;
    if let Some(hash) = &built.source_blake3 {
        doc["source"]["blake3"] = value(hash.as_str());
    }
    let mut files = Table::new();
    for side in [Side::Public, Side::Private] {
        let mut t = Table::new();
        for f in built.files.iter().filter(|f| f.side == side) {
            t.insert(&f.name, value(f.blake3.as_str()));
        }
        files.insert(side.dir(), Item::Table(t));
    }
    files.set_implicit(true);
    doc["files"] = Item::Table(files);
    let ch = &mut doc["characteristics"];
    ch["rows"] = value(built.measured.rows as i64);
    ch["features"] = value(built.measured.features as i64);
    ch["classes"] = value(built.measured.classes as i64);
    ch["domain_term_density"] = value(built.measured.domain_term_density);
    let new_text = doc.to_string();
    CompetitionManifest::parse(path, &new_text)?;
    write_atomic(path, new_text.as_bytes())
}
