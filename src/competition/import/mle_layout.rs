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
//! | aerial-cactus-identification | `train.csv` (`id,has_cactus`), images in `train.zip`, `test.zip`, no `test.csv` | `test.csv` = the sample submission's ids |
//! | ranzcr-clip-catheter-line-classification | `train.csv`, images `train/`, `test/`, no `test.csv` | `test.csv` = the sample submission's ids |
//! | random-acts-of-pizza | `train.json`, `test.json` (arrays of records) | both as CSV |
//! | text-normalization-challenge-{english,russian}-language | `{en,ru}_train.csv.zip`, `{en,ru}_test_2.csv.zip`; answers keyed by `id` = `{sentence_id}_{token_id}` | both unzipped, with that `id` in front |
//!
//! Every other competition is read as [`Data::Standard`] on both sides. The files
//! `prepare.py` wrote stay in `public/` as they are; the harness's files are added beside
//! them (`import::derive`), and the import notes say how each was made.

use std::path::{Path, PathBuf};

use super::derive::{ComposedId, Derivation};
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
        "aerial-cactus-identification",
        Layout {
            test: Data::SampleIds,
            ..STANDARD
        },
    ),
    (
        "ranzcr-clip-catheter-line-classification",
        Layout {
            test: Data::SampleIds,
            ..STANDARD
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
/// the domain's evidence), and how the import makes it when it is not the preparation's.
pub(super) struct Resolved {
    pub header: Vec<String>,
    pub rows: Vec<csv::StringRecord>,
    pub more: bool,
    /// The file it is (made from), named in errors and notes.
    pub from: PathBuf,
    /// How it is made from `from`, and the note saying so (none for [`Data::Standard`]).
    pub derived: Option<(Derivation, String)>,
}

impl Data {
    /// Resolves the harness's file `name` (`train.csv` or `test.csv`) of the prepared
    /// `public/` folder, reading its first `rows` rows; `sample` is the sample submission
    /// and its id column.
    pub(super) fn resolve(
        self,
        name: &'static str,
        public: &Path,
        sample: (&Path, &str),
        rows: usize,
    ) -> Result<Resolved, String> {
        if !matches!(self, Data::Standard) && public.join(name).exists() {
            return Err(format!(
                "{} already has {name}, which ml2b would make from other files",
                public.display()
            ));
        }
        let (from, derived) = match self {
            Data::Standard => (public.join(name), None),
            Data::Csv(file) => (
                public.join(file),
                Some((
                    Derivation::Link {
                        target: format!("public/{file}"),
                    },
                    format!(
                        "data: the harness's {name} is {file} (the same bytes), where MLE-bench's \
                         preparation writes these rows"
                    ),
                )),
            ),
            Data::Json(file) => (
                public.join(file),
                Some((
                    Derivation::JsonRecords,
                    format!(
                        "data: the harness's {name} holds the records of {file}, one row each (a \
                         list or object as its JSON text, null as an empty cell)"
                    ),
                )),
            ),
            Data::ZippedCsv { zip, id } => (
                public.join(zip),
                Some((
                    Derivation::ZipCsv { id },
                    format!(
                        "data: the harness's {name} is the CSV inside {zip}{}",
                        id.map_or(String::new(), |id| format!(
                            ", with the column `{}` = {} in front (the id the answers hold)",
                            id.name,
                            id.parts
                                .iter()
                                .map(|p| format!("`{p}`"))
                                .collect::<Vec<_>>()
                                .join(&format!(" `{}` ", id.separator))
                        ))
                    ),
                )),
            ),
            Data::SampleIds => {
                let (path, column) = sample;
                let note = format!(
                    "data: the harness's {name} is the id column `{column}` of {}: the test rows \
                     are files named by id",
                    path.file_name().unwrap_or_default().to_string_lossy()
                );
                let ids = Derivation::Ids {
                    column: column.to_string(),
                };
                (path.to_path_buf(), Some((ids, note)))
            }
        };
        if !from.is_file() {
            return Err(match derived {
                None => format!(
                    "{} has no {name}: ml2b's harness reads train.csv and test.csv, and this \
                     competition's data is in no layout ml2b reads (it needs a custom loader)",
                    public.display()
                ),
                Some(_) => format!(
                    "{} has no {}, which MLE-bench's preparation writes",
                    public.display(),
                    from.file_name().unwrap_or_default().to_string_lossy()
                ),
            });
        }
        let (header, rows, more) = match &derived {
            Some((how, _)) => how.head(&from, rows)?,
            None => domain::head(&from, rows)?,
        };
        Ok(Resolved {
            header,
            rows,
            more,
            from,
            derived,
        })
    }
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
