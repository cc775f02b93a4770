//! A competition's `domain`, inferred from its data for both importers, with the note that
//! says how (recorded in `import_notes`).
//!
//! * `image` when its data folder holds image files (by extension, any depth);
//! * else `text` when a feature column is free text: not all numbers, at least half its
//!   non-empty values distinct, and a median of 5 words or more (a CJK character counts as a
//!   word);
//! * else `tabular`.
//!
//! The predicted columns (and a weight) are never the evidence. The rows looked at are the
//! caller's: all of them for the ML2B release, the first [`SAMPLE_ROWS`] of `train.csv` for
//! MLE-bench (whose training files reach gigabytes), and the note says so.

use std::collections::HashSet;
use std::path::Path;

use crate::manifest::competition::Domain;

/// Rows of a large training file read to find free-text columns.
pub(crate) const SAMPLE_ROWS: usize = 1000;

/// File extensions (lower case) that make an image competition.
const IMAGE_EXTENSIONS: [&str; 9] = ["jpg", "jpeg", "png", "bmp", "gif", "tif", "tiff", "webp", "dcm"];

/// Training rows to infer a domain from: a header, rows, and the columns that are not
/// features (targets, weight).
pub(crate) struct Rows<'a> {
    pub header: &'a [String],
    pub rows: &'a [csv::StringRecord],
    pub exclude: &'a [usize],
}

/// The domain and the note saying how it was found.
pub(crate) fn infer(rows: &Rows, data: &Path) -> (Domain, String) {
    let images = image_files(data);
    if let Some(first) = images.first() {
        return (
            Domain::Image,
            format!(
                "domain: image, from the {} image file(s) in its data folder (e.g. `{first}`)",
                images.len()
            ),
        );
    }
    let text: Vec<String> = (0..rows.header.len())
        .filter(|c| !rows.exclude.contains(c))
        .filter_map(|c| {
            free_text(rows.rows, c).map(|(median, share)| {
                format!(
                    "`{}` (median {median} words, {share:.0}% distinct values)",
                    rows.header[c]
                )
            })
        })
        .collect();
    if !text.is_empty() {
        return (
            Domain::Text,
            format!("domain: text, from its free-text column(s) {}", text.join(", ")),
        );
    }
    (
        Domain::Tabular,
        "domain: tabular: no image files in its data folder, and no free-text column (none holds mostly distinct, non-numeric values with a median of 5 words or more)".into(),
    )
}

/// The header and first `n` rows of a CSV file, and whether the file has more.
pub(crate) fn head(path: &Path, n: usize) -> Result<(Vec<String>, Vec<csv::StringRecord>, bool), String> {
    let err = |e: csv::Error| format!("{}: {e}", path.display());
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .map_err(err)?;
    let header = reader.headers().map_err(err)?.iter().map(String::from).collect();
    let mut records = reader.records();
    let rows = records
        .by_ref()
        .take(n)
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    Ok((header, rows, records.next().is_some()))
}

/// A free-text column's median word count and share of distinct values (percent), if it is
/// one (module docs).
fn free_text(rows: &[csv::StringRecord], col: usize) -> Option<(usize, f64)> {
    let values: Vec<&str> = rows
        .iter()
        .filter_map(|r| r.get(col))
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .collect();
    if values.is_empty() || values.iter().all(|v| v.parse::<f64>().is_ok()) {
        return None;
    }
    let mut words: Vec<usize> = values.iter().map(|v| word_count(v)).collect();
    words.sort_unstable();
    let median = words[words.len() / 2];
    let share = values.iter().collect::<HashSet<_>>().len() as f64 / values.len() as f64;
    (median >= 5 && share >= 0.5).then_some((median, share * 100.0))
}

/// Whitespace-separated words, a CJK character (Han, kana, Hangul) counting as one.
fn word_count(v: &str) -> usize {
    v.split_whitespace()
        .map(|token| {
            let cjk = |c: char| {
                matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF)
            };
            match token.chars().filter(|&c| cjk(c)).count() {
                0 => 1,
                n => n + usize::from(token.chars().any(|c| c.is_alphanumeric() && !cjk(c))),
            }
        })
        .sum()
}

/// The image files under `data` (relative paths, sorted).
fn image_files(data: &Path) -> Vec<String> {
    let mut found: Vec<String> = walkdir::WalkDir::new(data)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            e.path()
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| IMAGE_EXTENSIONS.contains(&x.to_ascii_lowercase().as_str()))
        })
        .map(|e| {
            e.path()
                .strip_prefix(data)
                .unwrap_or(e.path())
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(rows: &[&[&str]]) -> Vec<csv::StringRecord> {
        rows.iter().map(|r| csv::StringRecord::from(r.to_vec())).collect()
    }

    #[test]
    fn words_count_cjk_characters() {
        assert_eq!(word_count("a quick  brown fox"), 4);
        assert_eq!(word_count("这个产品很好"), 6);
        assert_eq!(word_count("iPhone很好 ok"), 4);
    }

    #[test]
    fn the_domain_comes_from_free_text_or_image_files() {
        let long = [
            "one two three four five six",
            "seven eight nine ten eleven",
            "a b c d e",
        ];
        let header: Vec<String> = ["n", "city", "comment", "y"].map(String::from).to_vec();
        let rows = records(&[
            &["1", "Paris", long[0], "yes"],
            &["2", "Paris", long[1], "no"],
            &["3", "Lyon", long[2], "yes"],
        ]);
        fn of<'a>(header: &'a [String], rows: &'a [csv::StringRecord], exclude: &'a [usize]) -> Rows<'a> {
            Rows {
                header,
                rows,
                exclude,
            }
        }
        let empty = tempfile::tempdir().unwrap();
        let (domain, note) = infer(&of(&header, &rows, &[3]), empty.path());
        assert_eq!(domain, Domain::Text);
        assert_eq!(
            note,
            "domain: text, from its free-text column(s) `comment` (median 5 words, 100% distinct values)"
        );
        // The target is never the evidence.
        assert_eq!(
            infer(&of(&header, &rows, &[2, 3]), empty.path()).0,
            Domain::Tabular
        );
        let repeated = records(&[&[long[0]], &[long[0]], &[long[0]]]);
        let one = vec!["c".to_string()];
        let same = Rows {
            header: &one,
            rows: &repeated,
            exclude: &[],
        };
        assert_eq!(infer(&same, empty.path()).0, Domain::Tabular);

        std::fs::create_dir_all(empty.path().join("images")).unwrap();
        std::fs::write(empty.path().join("images/b.PNG"), b"").unwrap();
        std::fs::write(empty.path().join("images/a.jpg"), b"").unwrap();
        let (domain, note) = infer(&of(&header, &rows, &[3]), empty.path());
        assert_eq!(domain, Domain::Image);
        assert!(
            note.starts_with(
                "domain: image, from the 2 image file(s) in its data folder (e.g. `images/a.jpg`)"
            ),
            "{note}"
        );
    }

    #[test]
    fn head_reads_the_first_rows_and_says_whether_there_are_more() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("train.csv");
        std::fs::write(&path, "id,text\n1,a\n2,b\n3,c\n").unwrap();
        let (header, rows, more) = head(&path, 2).unwrap();
        assert_eq!(header, ["id", "text"]);
        assert_eq!(rows.len(), 2);
        assert!(more);
        assert!(!head(&path, 3).unwrap().2);
        let missing = head(&dir.path().join("none.csv"), 2).unwrap_err();
        assert!(missing.contains("none.csv"), "{missing}");
    }
}
