//! The MLE-bench competitions whose prepared data is not laid out as ml2b's harness reads it
//! (`public/train.csv` with the targets, `public/test.csv` with the id, and the id the
//! sample submission's first column): where the harness's files come from instead, and the
//! column `grade.py` keys rows on. One entry per competition, read from its `prepare.py`
//! (what it writes to `public/` and `private/`) and `grade.py` (the id and target columns
//! it grades), MLE-bench revision 783b15a:
//!
//! | competition | `prepare.py` writes | the harness reads |
//! |---|---|---|
//! | detecting-insults-in-social-commentary | the sample submission `Insult,Date,Comment`; `grade.py` keys on `Comment` | the id `Comment` |
//! | new-york-city-taxi-fare-prediction | the training rows as `labels.csv` | `train.csv` = `labels.csv` |
//! | dog-breed-identification | `labels.csv` (`id,breed`), images `train/`, `test/` | `train.csv` = `labels.csv`; `test.csv` = the sample submission's ids |
//! | histopathologic-cancer-detection | `train_labels.csv` (`id,label`), images `train/`, `test/` | `train.csv` = `train_labels.csv`; `test.csv` = the sample submission's ids |
//! | random-acts-of-pizza | `train.json`, `test.json` (arrays of records) | both as CSV |
//! | text-normalization-challenge-{english,russian}-language | `{en,ru}_train.csv.zip`, `{en,ru}_test_2.csv.zip`; answers keyed by `id` = `{sentence_id}_{token_id}` | both unzipped, with that `id` in front |
//!
//! Every other competition is read as [`Data::Standard`] on both sides. The files
//! `prepare.py` wrote stay in `public/` as they are; the harness's files are added beside
//! them (`import::derive`), and the import notes say how each was made.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::derive::{self, ComposedId, Derivation};
use super::domain;

/// Where the harness's files of one competition come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Layout {
    /// The column `grade.py` keys rows on, where it is not the sample submission's first.
    pub id: Option<&'static str>,
    pub train: Data,
    pub test: Data,
}

/// Where one of the harness's files (`train.csv`, `test.csv`) comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Data {
    /// `public/<its name>` as the preparation wrote it.
    Standard,
    /// Another CSV of `public/`, the same bytes.
    Csv(&'static str),
    /// A JSON array of records in `public/`, as CSV.
    Json(&'static str),
    /// The one CSV in a zip archive of `public/`, with a composed id in front.
    ZippedCsv {
        zip: &'static str,
        id: Option<ComposedId>,
    },
    /// The sample submission's id column: the test rows are files named by id.
    SampleIds,
}

const STANDARD: Layout = Layout {
    id: None,
    train: Data::Standard,
    test: Data::Standard,
};

const TOKEN_ID: Option<ComposedId> = Some(ComposedId {
    name: "id",
    parts: &["sentence_id", "token_id"],
    separator: "_",
});

/// The competitions laid out otherwise (see the module docs).
const LAYOUTS: &[(&str, Layout)] = &[
    (
        "detecting-insults-in-social-commentary",
        Layout {
            id: Some("Comment"),
            ..STANDARD
        },
    ),
    (
        "new-york-city-taxi-fare-prediction",
        Layout {
            train: Data::Csv("labels.csv"),
            ..STANDARD
        },
    ),
    (
        "dog-breed-identification",
        Layout {
            id: None,
            train: Data::Csv("labels.csv"),
            test: Data::SampleIds,
        },
    ),
    (
        "histopathologic-cancer-detection",
        Layout {
            id: None,
            train: Data::Csv("train_labels.csv"),
            test: Data::SampleIds,
        },
    ),
    (
        "random-acts-of-pizza",
        Layout {
            id: None,
            train: Data::Json("train.json"),
            test: Data::Json("test.json"),
        },
    ),
    (
        "text-normalization-challenge-english-language",
        Layout {
            id: None,
            train: Data::ZippedCsv {
                zip: "en_train.csv.zip",
                id: TOKEN_ID,
            },
            test: Data::ZippedCsv {
                zip: "en_test_2.csv.zip",
                id: TOKEN_ID,
            },
        },
    ),
    (
        "text-normalization-challenge-russian-language",
        Layout {
            id: None,
            train: Data::ZippedCsv {
                zip: "ru_train.csv.zip",
                id: TOKEN_ID,
            },
            test: Data::ZippedCsv {
                zip: "ru_test_2.csv.zip",
                id: TOKEN_ID,
            },
        },
    ),
];

/// The layout of `competition`: its entry, else [`Data::Standard`] on both sides.
pub(super) fn layout(competition: &str) -> Layout {
    LAYOUTS
        .iter()
        .find(|(id, _)| *id == competition)
        .map_or(STANDARD, |(_, l)| *l)
}

/// One of the harness's files, resolved: its header (and, for `train.csv`, its first rows,
/// the domain's evidence), and what the draft adds to make it.
pub(super) struct Resolved {
    pub header: Vec<String>,
    pub rows: Vec<csv::StringRecord>,
    pub more: bool,
    /// Its blake3, when known before staging.
    pub blake3: Option<String>,
    pub generated: Option<Vec<u8>>,
    pub derived: Option<Derivation>,
    /// The file it is made from (for errors and notes), and the note saying how.
    pub from: PathBuf,
    pub note: Option<String>,
}

impl Data {
    /// Resolves the harness's file `name` (`train.csv` or `test.csv`) from the prepared
    /// `public/` folder, reading its first `rows` rows; `hashes` are the public files'
    /// blake3s, `sample` the sample submission and its id column.
    pub(super) fn resolve(
        self,
        name: &'static str,
        public: &Path,
        hashes: &BTreeMap<String, String>,
        sample: (&Path, &str),
        rows: usize,
    ) -> Result<Resolved, String> {
        let path = |file: &str| public.join(file);
        if !matches!(self, Data::Standard) && hashes.contains_key(name) {
            return Err(format!(
                "{} already has {name}, which ml2b would make from other files",
                public.display()
            ));
        }
        let from_bytes = |bytes: Vec<u8>, from: PathBuf, note: String| {
            let (header, records, more) =
                head_of(&bytes, rows).map_err(|e| format!("{}: {e}", from.display()))?;
            Ok::<_, String>(Resolved {
                header,
                rows: records,
                more,
                blake3: Some(blake3::hash(&bytes).to_hex().to_string()),
                generated: Some(bytes),
                derived: None,
                from,
                note: Some(note),
            })
        };
        match self {
            Data::Standard => {
                let from = path(name);
                if !from.is_file() {
                    return Err(format!(
                        "{} has no {name}: ml2b's harness reads train.csv and test.csv, and this \
                         competition's data is in no layout ml2b reads (it needs a custom loader)",
                        public.display()
                    ));
                }
                let (header, rows, more) = domain::head(&from, rows)?;
                Ok(Resolved {
                    header,
                    rows,
                    more,
                    blake3: None,
                    generated: None,
                    derived: None,
                    from,
                    note: None,
                })
            }
            Data::Csv(file) => {
                let from = path(file);
                let blake3 = hashes
                    .get(file)
                    .cloned()
                    .ok_or_else(|| format!("{} has no {file}", public.display()))?;
                let (header, rows, more) = domain::head(&from, rows)?;
                Ok(Resolved {
                    header,
                    rows,
                    more,
                    blake3: Some(blake3),
                    generated: None,
                    derived: Some(Derivation::Link {
                        target: format!("public/{file}"),
                    }),
                    from,
                    note: Some(format!(
                        "data: the harness's {name} is {file} (the same bytes), where MLE-bench's \
                         preparation writes these rows"
                    )),
                })
            }
            Data::Json(file) => {
                let from = path(file);
                let bytes = derive::json_records_csv(&from)?;
                let note = format!(
                    "data: the harness's {name} holds the records of {file}, one row each (a \
                     list or object as its JSON text, null as an empty cell)"
                );
                from_bytes(bytes, from, note)
            }
            Data::ZippedCsv { zip, id } => {
                let from = path(zip);
                if !from.is_file() {
                    return Err(format!("{} has no {zip}", public.display()));
                }
                let (header, rows, more) = derive::zip_csv_head(&from, id, rows)?;
                let with_id = id.map_or(String::new(), |id| {
                    format!(
                        ", with the column `{}` = {} in front (the id the answers hold)",
                        id.name,
                        id.parts
                            .iter()
                            .map(|p| format!("`{p}`"))
                            .collect::<Vec<_>>()
                            .join(&format!(" `{}` ", id.separator))
                    )
                });
                Ok(Resolved {
                    header,
                    rows,
                    more,
                    blake3: None,
                    generated: None,
                    derived: Some(Derivation::ZipCsv { id }),
                    from,
                    note: Some(format!(
                        "data: the harness's {name} is the CSV inside {zip}{with_id}"
                    )),
                })
            }
            Data::SampleIds => {
                let (path, column) = sample;
                let mut reader =
                    csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
                let col = reader
                    .headers()
                    .map_err(|e| format!("{}: {e}", path.display()))?
                    .iter()
                    .position(|h| h == column)
                    .ok_or_else(|| format!("{} has no id column `{column}`", path.display()))?;
                let mut ids = Vec::new();
                for (i, r) in reader.records().enumerate() {
                    let r = r.map_err(|e| format!("{}: row {}: {e}", path.display(), i + 2))?;
                    ids.push(r[col].to_string());
                }
                let note = format!(
                    "data: the harness's {name} is the id column `{column}` of {}: the test rows \
                     are files named by id",
                    path.file_name().unwrap_or_default().to_string_lossy()
                );
                from_bytes(derive::ids_csv(column, &ids), path.to_path_buf(), note)
            }
        }
    }
}

/// The header and first `n` records of CSV `bytes`, and whether there are more.
fn head_of(bytes: &[u8], n: usize) -> Result<(Vec<String>, Vec<csv::StringRecord>, bool), csv::Error> {
    let mut reader = csv::Reader::from_reader(bytes);
    let header = reader.headers()?.iter().map(String::from).collect();
    let mut records = reader.records();
    let rows = records.by_ref().take(n).collect::<Result<Vec<_>, _>>()?;
    Ok((header, rows, records.next().is_some()))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::metrics::grading::mle_bench::MLE_BENCH_GRADERS;

    #[test]
    fn every_entry_is_an_mle_bench_competition_once() {
        let known: HashSet<&str> = MLE_BENCH_GRADERS
            .iter()
            .flat_map(|g| g.competitions.iter().copied())
            .collect();
        let ids: HashSet<&str> = LAYOUTS.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids.len(), LAYOUTS.len());
        for id in ids {
            assert!(known.contains(id), "{id}");
            assert_ne!(layout(id), STANDARD, "{id}");
        }
        assert_eq!(layout("spaceship-titanic"), STANDARD);
    }
}
