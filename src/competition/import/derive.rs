//! The harness's `train.csv` and `test.csv` made from data an import finds in another
//! shape: another CSV's bytes under the harness's name, the one CSV inside a zip archive,
//! a JSON array of records, or a column of ids.
//!
//! * [`Derivation::Link`]: the same bytes (a hard link to the staged copy, else a copy);
//! * [`Derivation::ZipCsv`]: the archive's one `.csv` member, rewritten as a CSV with `\n`
//!   line ends and quotes only where needed (the values verbatim), with an id column
//!   [`ComposedId`] prepended when the graded id is made of other columns (MLE-bench's
//!   text normalization: `id` = `{sentence_id}_{token_id}`). Streamed: such files reach
//!   gigabytes;
//! * [`Derivation::JsonRecords`]: a JSON array of objects as CSV, one row per object, the
//!   columns in the order their keys first appear; a string as it is, a number, `true` and
//!   `false` as their JSON text, `null` as an empty cell, an array or object as compact JSON;
//! * [`Derivation::Ids`]: one column of a CSV (the sample submission's ids: the test rows
//!   of a competition whose features are files named by id).
//!
//! The bytes are a pure function of the original, so the header and first rows read when
//! drafting ([`Derivation::head`]) are those of the file written when staging. Every error
//! names the file it read from (the archive and its member, the JSON file) and the row.

use std::fs::File;
use std::io::{BufWriter, Read};
use std::path::{Path, PathBuf};

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::ImportError;

/// A public file written while staging (see the module docs).
#[derive(Clone, Debug)]
pub struct Derived {
    /// Destination, relative to `data/<id>/`.
    pub to: String,
    /// The original it is made from (named in errors).
    pub from: PathBuf,
    pub how: Derivation,
}

/// How a [`Derived`] file is made from its original.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Derivation {
    /// The bytes of `target` (relative to `data/<id>/`, a staged copy of the original).
    Link { target: String },
    /// The CSV member of the zip archive, with `id` prepended when given.
    ZipCsv { id: Option<ComposedId> },
    /// The JSON array of records, as CSV.
    JsonRecords,
    /// The column `column` of the CSV.
    Ids { column: String },
}

/// A CSV's header, its first rows, and whether it has more.
pub(super) type Head = (Vec<String>, Vec<csv::StringRecord>, bool);

impl Derivation {
    /// The header and first `n` rows of what `self` makes of `from` (a [`Derivation::Link`]
    /// reads `from` itself).
    pub(super) fn head(&self, from: &Path, n: usize) -> Result<Head, String> {
        let at = |e: &dyn std::fmt::Display| format!("{}: {e}", from.display());
        let of_bytes =
            |bytes: Result<Vec<u8>, String>| head_of(&bytes.map_err(|m| at(&m))?, n).map_err(|e| at(&e));
        match self {
            Derivation::Link { .. } => super::domain::head(from, n),
            Derivation::ZipCsv { id } => zip_csv_head(from, *id, n),
            Derivation::JsonRecords => of_bytes(json_records_csv(from)),
            Derivation::Ids { column } => of_bytes(ids_csv(from, column)),
        }
    }
}

/// The header and first `n` records of CSV `bytes`, and whether there are more.
fn head_of(bytes: &[u8], n: usize) -> Result<Head, csv::Error> {
    let mut reader = csv::Reader::from_reader(bytes);
    let header = reader.headers()?.iter().map(String::from).collect();
    let mut records = reader.records();
    let rows = records.by_ref().take(n).collect::<Result<Vec<_>, _>>()?;
    Ok((header, rows, records.next().is_some()))
}

/// An id column made of other columns' values joined by a separator, as a competition's
/// preparation made the ids its answers hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComposedId {
    pub name: &'static str,
    pub parts: &'static [&'static str],
    pub separator: &'static str,
}

impl ComposedId {
    /// The header with the id in front, and the positions of its parts; an error when a
    /// part is missing or the header already has the id's name.
    fn header(&self, header: &[String]) -> Result<(Vec<String>, Vec<usize>), String> {
        if header.iter().any(|h| h == self.name) {
            return Err(format!("already has a column `{}`", self.name));
        }
        let parts = self
            .parts
            .iter()
            .map(|p| {
                header
                    .iter()
                    .position(|h| h == p)
                    .ok_or_else(|| format!("has no column `{p}` to make the id `{}` of", self.name))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = vec![self.name.to_string()];
        out.extend(header.iter().cloned());
        Ok((out, parts))
    }

    fn value(&self, record: &csv::StringRecord, parts: &[usize]) -> String {
        parts
            .iter()
            .map(|&p| &record[p])
            .collect::<Vec<_>>()
            .join(self.separator)
    }
}

impl Derived {
    /// Writes the file under `dir` (`data/<id>/` of the staging folder); returns its blake3.
    pub(super) fn write(&self, dir: &Path) -> Result<String, ImportError> {
        let dest = dir.join(&self.to);
        let write_err = |source| ImportError::Write {
            path: dest.clone(),
            source,
        };
        match &self.how {
            Derivation::Link { target } => {
                let target = dir.join(target);
                if std::fs::hard_link(&target, &dest).is_err() {
                    std::fs::copy(&target, &dest).map_err(write_err)?;
                }
            }
            Derivation::JsonRecords => {
                let bytes = json_records_csv(&self.from).map_err(|m| ImportError::invalid(&self.from, m))?;
                crate::store::write_atomic(&dest, &bytes).map_err(write_err)?;
            }
            Derivation::Ids { column } => {
                let bytes = ids_csv(&self.from, column).map_err(|m| ImportError::invalid(&self.from, m))?;
                crate::store::write_atomic(&dest, &bytes).map_err(write_err)?;
            }
            Derivation::ZipCsv { id } => {
                let out = File::create(&dest).map_err(write_err)?;
                let mut w = csv::WriterBuilder::new()
                    .terminator(csv::Terminator::Any(b'\n'))
                    .from_writer(BufWriter::new(out));
                zip_csv(&self.from, *id, usize::MAX, |record| {
                    w.write_record(record).map_err(|e| e.to_string())
                })
                .map_err(|m| ImportError::invalid(&self.from, m))?;
                w.into_inner()
                    .map_err(|e| e.into_error())
                    .and_then(|b| b.into_inner().map_err(|e| e.into_error()))
                    .and_then(|f| f.sync_all())
                    .map_err(write_err)?;
            }
        }
        crate::store::hash_file_hex(&dest).map_err(|source| ImportError::Read { path: dest, source })
    }
}

/// The header and first `n` rows of the CSV member of the zip archive `zip`, as
/// [`Derivation::ZipCsv`] writes them, and whether there are more rows.
fn zip_csv_head(zip: &Path, id: Option<ComposedId>, n: usize) -> Result<Head, String> {
    let mut header = None;
    let mut rows = Vec::new();
    let more = zip_csv(zip, id, n, |record| {
        match header {
            None => header = Some(record.iter().map(String::from).collect()),
            Some(_) => rows.push(record.clone()),
        }
        Ok(())
    })
    .map_err(|m| format!("{}: {m}", zip.display()))?;
    Ok((header.unwrap_or_default(), rows, more))
}

/// Streams the CSV member of `zip` to `emit` as records (the header first, then at most
/// `limit` rows, the composed id in front); returns whether rows were left out. Errors name
/// the member and row.
fn zip_csv(
    zip: &Path,
    id: Option<ComposedId>,
    limit: usize,
    mut emit: impl FnMut(&csv::StringRecord) -> Result<(), String>,
) -> Result<bool, String> {
    let file = File::open(zip).map_err(|e| e.to_string())?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| format!("is not a zip archive: {e}"))?;
    let csvs: Vec<usize> = (0..archive.len())
        .filter(|&i| {
            archive
                .name_for_index(i)
                .and_then(Result::ok)
                .is_some_and(|n| n.to_ascii_lowercase().ends_with(".csv"))
        })
        .collect();
    let [index] = csvs[..] else {
        return Err(format!(
            "holds {} CSV files; ml2b reads an archive that holds one",
            csvs.len()
        ));
    };
    let member = archive.by_index(index).map_err(|e| e.to_string())?;
    let name = member.name().map_err(|e| e.to_string())?.into_owned();
    let mut reader = csv::ReaderBuilder::new().from_reader(member);
    let at = |row: u64, e: &dyn std::fmt::Display| format!("{name} row {row}: {e}");
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| at(1, &e))?
        .iter()
        .map(String::from)
        .collect();
    let (header, parts) = match id {
        Some(id) => id.header(&header).map_err(|m| format!("{name} {m}"))?,
        None => (header, Vec::new()),
    };
    emit(&csv::StringRecord::from(header))?;
    let mut record = csv::StringRecord::new();
    let mut out = csv::StringRecord::new();
    for row in 2u64.. {
        if !reader.read_record(&mut record).map_err(|e| at(row, &e))? {
            break;
        }
        if row - 1 > limit as u64 {
            return Ok(true);
        }
        out.clear();
        if let Some(id) = id {
            out.push_field(&id.value(&record, &parts));
        }
        out.extend(record.iter());
        emit(&out)?;
    }
    Ok(false)
}

/// A JSON array of objects (the file `path`) as CSV (see the module docs).
fn json_records_csv(path: &Path) -> Result<Vec<u8>, String> {
    let mut text = String::new();
    File::open(path)
        .and_then(|mut f| f.read_to_string(&mut text))
        .map_err(|e| format!("cannot read: {e}"))?;
    let mut de = serde_json::Deserializer::from_str(&text);
    let records = de
        .deserialize_seq(RecordsVisitor)
        .and_then(|r| de.end().map(|()| r))
        .map_err(|e| format!("is not a JSON array of objects: {e}"))?;
    let mut columns: Vec<&str> = Vec::new();
    for record in &records {
        for (key, _) in record {
            if !columns.contains(&key.as_str()) {
                columns.push(key);
            }
        }
    }
    let mut w = crate::competition::prepare::csv_writer();
    w.write_record(&columns).expect("memory");
    for record in &records {
        let cells = columns.iter().map(|c| {
            record
                .iter()
                .find(|(k, _)| k == c)
                .map_or(String::new(), |(_, v)| cell(v))
        });
        w.write_record(cells).expect("memory");
    }
    Ok(crate::competition::prepare::finish(w))
}

/// One CSV cell of a JSON value (see the module docs).
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One JSON object, its keys in file order.
type Record = Vec<(String, Value)>;

struct RecordsVisitor;

impl<'de> Visitor<'de> for RecordsVisitor {
    type Value = Vec<Record>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(RecordSeed(record)) = seq.next_element()? {
            out.push(record);
        }
        Ok(out)
    }
}

struct RecordSeed(Record);

impl<'de> serde::Deserialize<'de> for RecordSeed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Record;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Record, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    out.push((k, v));
                }
                Ok(out)
            }
        }
        d.deserialize_map(V).map(RecordSeed)
    }
}

/// The column `column` of the CSV `path`, as a CSV of that one column.
fn ids_csv(path: &Path, column: &str) -> Result<Vec<u8>, String> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| e.to_string())?;
    let col = reader
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .position(|h| h == column)
        .ok_or_else(|| format!("has no column `{column}`"))?;
    let mut w = crate::competition::prepare::csv_writer();
    w.write_record([column]).expect("memory");
    for (i, r) in reader.records().enumerate() {
        let r = r.map_err(|e| format!("row {}: {e}", i + 2))?;
        w.write_record([&r[col]]).expect("memory");
    }
    Ok(crate::competition::prepare::finish(w))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    const TOKENS: ComposedId = ComposedId {
        name: "id",
        parts: &["sentence_id", "token_id"],
        separator: "_",
    };

    fn zip_of(dir: &Path, name: &str, members: &[(&str, &str)]) -> PathBuf {
        let path = dir.join(name);
        let mut w = zip::ZipWriter::new(File::create(&path).unwrap());
        for (member, text) in members {
            w.start_file(*member, zip::write::SimpleFileOptions::default())
                .unwrap();
            w.write_all(text.as_bytes()).unwrap();
        }
        w.finish().unwrap();
        path
    }

    #[test]
    fn a_zipped_csv_gets_its_composed_id_and_keeps_its_values() {
        let dir = tempfile::tempdir().unwrap();
        let text =
            "\"sentence_id\",\"token_id\",\"before\"\n0,0,\"Hello, \"\"you\"\"\"\n0,1,\"1\"\n12,3,\"2.50\"\n";
        let zip = zip_of(dir.path(), "en_test_2.csv.zip", &[("en_test_2.csv", text)]);
        let d = Derived {
            to: "test.csv".into(),
            from: zip.clone(),
            how: Derivation::ZipCsv { id: Some(TOKENS) },
        };
        let out = tempfile::tempdir().unwrap();
        let hash = d.write(out.path()).unwrap();
        let written = std::fs::read_to_string(out.path().join("test.csv")).unwrap();
        assert_eq!(
            written,
            "id,sentence_id,token_id,before\n0_0,0,0,\"Hello, \"\"you\"\"\"\n0_1,0,1,1\n12_3,12,3,2.50\n"
        );
        assert_eq!(hash, blake3::hash(written.as_bytes()).to_hex().to_string());
        let (header, rows, more) = zip_csv_head(&zip, Some(TOKENS), 2).unwrap();
        assert_eq!(header, ["id", "sentence_id", "token_id", "before"]);
        assert_eq!(rows.len(), 2);
        assert_eq!(&rows[1][0], "0_1");
        assert!(more);
        assert!(!zip_csv_head(&zip, None, 3).unwrap().2);
    }

    #[test]
    fn zip_errors_name_the_archive_member_and_row() {
        let dir = tempfile::tempdir().unwrap();
        let two = zip_of(dir.path(), "two.zip", &[("a.csv", "x\n"), ("b.csv", "y\n")]);
        let err = zip_csv_head(&two, None, 5).unwrap_err();
        assert!(
            err.contains("two.zip") && err.contains("holds 2 CSV files"),
            "{err}"
        );
        let ragged = zip_of(
            dir.path(),
            "ragged.zip",
            &[("r.csv", "sentence_id,token_id\n1,2\n3\n")],
        );
        let err = zip_csv_head(&ragged, Some(TOKENS), 5).unwrap_err();
        assert!(err.contains("ragged.zip: r.csv row 3"), "{err}");
        let no_part = zip_of(dir.path(), "p.zip", &[("p.csv", "sentence_id,x\n1,2\n")]);
        let err = zip_csv_head(&no_part, Some(TOKENS), 5).unwrap_err();
        assert!(err.contains("p.csv has no column `token_id`"), "{err}");
    }

    #[test]
    fn json_records_become_rows_in_key_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("train.json");
        std::fs::write(
            &path,
            r#"[
    {"request_id": "t3_a", "requester_received_pizza": false, "subs": ["a", "b"], "n": 3, "t": 1317852607.0, "flair": null, "text": "Hi, \"all\"\nthere"},
    {"request_id": "t3_b", "requester_received_pizza": true, "subs": [], "n": -1, "t": 1.5, "flair": "shroom", "text": ""}
]"#,
        )
        .unwrap();
        let csv = String::from_utf8(json_records_csv(&path).unwrap()).unwrap();
        assert_eq!(
            csv,
            "request_id,requester_received_pizza,subs,n,t,flair,text\n\
             t3_a,false,\"[\"\"a\"\",\"\"b\"\"]\",3,1317852607.0,,\"Hi, \"\"all\"\"\nthere\"\n\
             t3_b,true,[],-1,1.5,shroom,\n"
        );
        std::fs::write(&path, "{\"a\": 1}").unwrap();
        let err = Derivation::JsonRecords.head(&path, 5).unwrap_err();
        assert!(
            err.contains("train.json: is not a JSON array of objects"),
            "{err}"
        );
    }

    #[test]
    fn ids_are_one_column_of_a_csv() {
        let dir = tempfile::tempdir().unwrap();
        let sample = dir.path().join("sample_submission.csv");
        std::fs::write(&sample, "x,id\n1,\"a,b\"\n2,c\n").unwrap();
        assert_eq!(ids_csv(&sample, "id").unwrap(), b"id\n\"a,b\"\nc\n");
        let ids = Derivation::Ids { column: "key".into() };
        let err = ids.head(&sample, 5).unwrap_err();
        assert!(
            err.ends_with("sample_submission.csv: has no column `key`"),
            "{err}"
        );
    }
}
