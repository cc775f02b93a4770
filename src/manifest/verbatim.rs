//! What a translation of a task text must keep verbatim, and what a translation lost.
//!
//! A task text is useless to a participant whose data card no longer names the data: the
//! translation of `tasks/en.toml` must keep, character for character,
//! - **code**: every inline code span of the English (`` `Sale_Price` ``, `` `id` ``):
//!   column names, identifiers, values, formats (`YYYY-MM-DD`);
//! - **files**: every file name (`train.csv`, `sample_submission.csv`, `solution.py`);
//! - **identifiers**: every Latin token outside code spans that a translator has no reason
//!   to touch: one with an underscore (`log_loss`), or digits with a capital letter (`SI2`,
//!   `B000J0LSBG`, `F1`, `R2`). A unit in lower case is no identifier: `kg/m3` may be
//!   written in the target script, as Russian writes `кг/м3`;
//! - **metric names**: each part of the manifest's metric name (`rmsle`, `roc_auc` →
//!   `ROC`, `AUC`, `map@3` → `MAP@3`) that the English writes as a whole word in
//!   capitals;
//! - **numbers**: every number, read as its digits: the thousands separators and the
//!   decimal mark of the target language may differ (`2,340` = `2 340` = `2340`; `0.35` =
//!   `0,35` = `٠٫٣٥`), and the digits of other scripts count as theirs (`٢٣٤٠`, fullwidth
//!   `２`). A number inside a code span, a file name or an identifier is theirs, not an item
//!   of its own.
//!
//! Everything is looked for anywhere in the translation (fields may reorder sentences),
//! and an item counts once however often it appears: a code span with its backticks, an
//! identifier or a metric name as a whole Latin token (no ASCII letter, digit or underscore
//! beside it, so `F1` is not found in `F10`, and `RMSLE` is in Chinese written without
//! spaces), a number by its digits. Words, units written as words and
//! the metric's spelled-out name are translated and not checked; a unit written as a
//! symbol (`%`, `$`) is not an item either (a translation may rightly write `10 %`).
//!
//! Invariant: pure and deterministic; [`lost`] lists items in the order the English first
//! names them, each once, so a gate's reasons are stable.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::TaskText;

/// What an item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Code,
    File,
    Identifier,
    Metric,
    Number,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::File => "file",
            Self::Identifier => "identifier",
            Self::Metric => "metric",
            Self::Number => "number",
        }
    }
}

/// One thing a translation must keep: its kind and its text as the English writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    pub kind: Kind,
    pub text: String,
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Kind::Code => write!(f, "code `{}`", self.text),
            kind => write!(f, "{} {}", kind.as_str(), self.text),
        }
    }
}

static CODE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`\n]+)`").expect("valid"));
static FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b[A-Za-z0-9_][A-Za-z0-9_.\-/]*\.(?:csv|tsv|json|jsonl|txt|parquet|npy|npz|zip|gz|png|jpe?g|wav|mp3|py|pkl|h5|xml|tif|tiff)\b",
    )
    .expect("valid")
});
/// A Latin token: letters, digits and underscores, not inside a longer word.
static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b[A-Za-z0-9_][A-Za-z0-9_@]*[A-Za-z0-9_]\b|\b[A-Za-z0-9]\b").expect("valid")
});
/// Digits, groups of three after a separator (space, no-break spaces, comma, dot,
/// apostrophe, the Arabic thousands mark), and a decimal part after a comma, a dot or the
/// Arabic decimal mark.
static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[0-9]+(?:[ ,.'\u{00a0}\u{202f}\u{2009}\u{066c}][0-9]{3})*(?:[.,\u{066b}][0-9]+)?")
        .expect("valid")
});

/// The items of `english` a translation must keep, in the order the English first names
/// them, each once; `metric` is the manifest's metric name (`rmsle`).
pub fn must_keep(english: &TaskText, metric: &str) -> Vec<Item> {
    let text = joined(english);
    let mut items: Vec<(usize, Item)> = Vec::new();
    // What an item takes is blanked (same length, so offsets hold) before the next kind
    // is looked for: a number inside `SI2` is the identifier's.
    let mut rest = text.clone();
    let mut take = |rest: &mut String, at: std::ops::Range<usize>, kind: Kind, s: &str| {
        items.push((
            at.start,
            Item {
                kind,
                text: s.to_string(),
            },
        ));
        rest.replace_range(at.clone(), &" ".repeat(at.len()));
    };
    for m in CODE.captures_iter(&text) {
        let (whole, span) = (m.get(0).expect("match"), m.get(1).expect("group 1"));
        take(&mut rest, whole.range(), Kind::Code, span.as_str());
    }
    for m in FILE.find_iter(&rest.clone()) {
        take(&mut rest, m.range(), Kind::File, m.as_str());
    }
    let metric_words = metric_words(metric);
    for m in TOKEN.find_iter(&rest.clone()) {
        let t = m.as_str();
        if metric_words.iter().any(|w| w == t) {
            take(&mut rest, m.range(), Kind::Metric, t);
        } else if is_identifier(t) {
            take(&mut rest, m.range(), Kind::Identifier, t);
        }
    }
    for m in NUMBER.find_iter(&rest.clone()) {
        take(&mut rest, m.range(), Kind::Number, m.as_str());
    }
    items.sort_by_key(|(at, _)| *at);
    let mut seen = BTreeSet::new();
    items
        .into_iter()
        .map(|(_, item)| item)
        .filter(|item| seen.insert(key(item)))
        .collect()
}

/// The items of `english` that `translation` lost, in [`must_keep`]'s order.
pub fn lost(english: &TaskText, translation: &TaskText, metric: &str) -> Vec<Item> {
    let text = normalize_digits(&joined(translation));
    let numbers: BTreeSet<String> = NUMBER.find_iter(&text).map(|m| digits(m.as_str())).collect();
    must_keep(english, metric)
        .into_iter()
        .filter(|item| match item.kind {
            Kind::Number => !numbers.contains(&digits(&item.text)),
            Kind::Code => !text.contains(&format!("`{}`", item.text)),
            Kind::File => !text.contains(&item.text),
            Kind::Identifier | Kind::Metric => !contains_token(&text, &item.text),
        })
        .collect()
}

/// Whether `needle` is in `text` with no ASCII letter, digit or underscore on either side
/// (`F1` is not in `F10`; `RMSLE` is in `使用RMSLE评估`, where no space parts the scripts).
fn contains_token(text: &str, needle: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    text.match_indices(needle).any(|(at, _)| {
        !word(text[..at].chars().next_back()) && !word(text[at + needle.len()..].chars().next())
    })
}

/// The fields of a text as one, a blank line between them.
fn joined(t: &TaskText) -> String {
    t.fields().map(|(_, v)| v).join("\n\n")
}

/// What makes two items the same: a number by its digits.
fn key(item: &Item) -> (Kind, String) {
    match item.kind {
        Kind::Number => (Kind::Number, digits(&item.text)),
        kind => (kind, item.text.clone()),
    }
}

/// A number's ASCII digits, separators and decimal mark dropped.
fn digits(number: &str) -> String {
    number.chars().filter(char::is_ascii_digit).collect()
}

/// A token a translator has no reason to touch: an underscore, or digits and a capital.
fn is_identifier(t: &str) -> bool {
    t.contains('_') || (t.chars().any(|c| c.is_ascii_uppercase()) && t.chars().any(|c| c.is_ascii_digit()))
}

/// The words of a metric name as an English text writes them in capitals: each part of
/// `roc_auc` (`ROC`, `AUC`) and the whole name (`MAP@3`).
fn metric_words(metric: &str) -> Vec<String> {
    let upper = metric.to_uppercase();
    let mut words: Vec<String> = upper.split('_').map(str::to_string).collect();
    if words.len() > 1 {
        words.push(upper);
    }
    words.retain(|w| w.len() > 1 && w.chars().any(|c| c.is_ascii_alphabetic()));
    words
}

/// Digits of other scripts as ASCII digits (Arabic-Indic, Eastern Arabic-Indic, Devanagari,
/// fullwidth), so that `٢٣٤٠` reads as `2340`.
fn normalize_digits(text: &str) -> String {
    text.chars()
        .map(|c| {
            let zero = match c {
                '\u{0660}'..='\u{0669}' => 0x0660,
                '\u{06f0}'..='\u{06f9}' => 0x06f0,
                '\u{0966}'..='\u{096f}' => 0x0966,
                '\u{ff10}'..='\u{ff19}' => 0xff10,
                _ => return c,
            };
            char::from(b'0' + (c as u32 - zero) as u8)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(description: &str, data_card: &str) -> TaskText {
        TaskText {
            title: "House prices".into(),
            domain: "Real estate".into(),
            metric: "Root Mean Squared Logarithmic Error".into(),
            description: description.into(),
            data_card: data_card.into(),
        }
    }

    fn names(items: &[Item]) -> Vec<String> {
        items.iter().map(ToString::to_string).collect()
    }

    const EN: &str = "About 2,340 houses sold from 2006 to 2010, scored by RMSLE; a relative error of 0.35 is large. Predict `Sale_Price` for each row of test.csv (grades I1 and SI2, target log_loss).";

    #[test]
    fn the_english_names_what_must_survive_in_order_each_once() {
        let en = text(
            EN,
            "- `train.csv`: `id`, `Sale_Price`.\n- test.csv again: 2340 rows.",
        );
        assert_eq!(
            names(&must_keep(&en, "rmsle")),
            [
                "number 2,340",
                "number 2006",
                "number 2010",
                "metric RMSLE",
                "number 0.35",
                "code `Sale_Price`",
                "file test.csv",
                "identifier I1",
                "identifier SI2",
                "identifier log_loss",
                "code `train.csv`",
                "code `id`",
            ]
        );
    }

    #[test]
    fn a_faithful_translation_loses_nothing_whatever_its_digits_and_separators() {
        let en = text(EN, "");
        let fr = text(
            "Environ 2 340 maisons vendues de 2006 à 2010, évaluées par la RMSLE ; une erreur relative de 0,35 est grande. Prédisez `Sale_Price` pour chaque ligne de test.csv (grades I1 et SI2, cible log_loss).",
            "",
        );
        assert_eq!(lost(&en, &fr, "rmsle"), []);
        let ar = text(
            "حوالي ٢٣٤٠ منزلًا بيعت من ٢٠٠٦ إلى ٢٠١٠، تقاس بـ RMSLE؛ خطأ نسبي قدره ٠٫٣٥ كبير. توقع `Sale_Price` لكل صف من test.csv (الدرجات I1 و SI2، الهدف log_loss).",
            "",
        );
        assert_eq!(
            lost(&en, &ar, "rmsle"),
            [],
            "٠٫٣٥ is 0.35 with the Arabic decimal mark"
        );
    }

    #[test]
    fn every_lost_item_is_named() {
        let en = text(EN, "");
        let bad = text(
            "Environ 2 430 maisons vendues de 2006 à 2010, évaluées par la REQML ; erreur de 0,35. Prédisez `Prix_de_vente` pour chaque ligne de test.csv (I1, SI2, log_loss).",
            "",
        );
        assert_eq!(
            names(&lost(&en, &bad, "rmsle")),
            ["number 2,340", "metric RMSLE", "code `Sale_Price`"]
        );
    }

    /// The translations bundled with ml2b keep everything (the gate would leave a pair out).
    #[test]
    fn every_bundled_translation_keeps_what_must_stay_verbatim() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut checked = 0;
        let mut failures = Vec::new();
        for entry in std::fs::read_dir(root.join("manifests/competitions")).unwrap() {
            let path = entry.unwrap().path();
            let manifest = crate::manifest::CompetitionManifest::load(&path).unwrap();
            let id = path.file_stem().unwrap().to_str().unwrap().to_string();
            let tasks = root.join("data").join(&id).join("tasks");
            let english = TaskText::load(&tasks.join("en.toml")).unwrap();
            for t in std::fs::read_dir(&tasks).unwrap() {
                let t = t.unwrap().path();
                let lost = lost(&english, &TaskText::load(&t).unwrap(), &manifest.metric.name);
                checked += 1;
                if !lost.is_empty() {
                    failures.push(format!("{}: {}", t.display(), names(&lost).join(", ")));
                }
            }
        }
        assert!(checked >= 12 * 14, "{checked} texts");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn a_short_span_is_found_with_its_backticks_and_a_token_whole() {
        let en = text("Predict `y` by F1.", "");
        let kept = text("预测 `y`，按F1评估。", "");
        assert_eq!(lost(&en, &kept, "f1_macro"), []);
        let bare = text("Predict y by F10.", "");
        assert_eq!(names(&lost(&en, &bare, "f1_macro")), ["code `y`", "metric F1"]);
    }

    #[test]
    fn metric_words_are_the_parts_of_the_manifest_name() {
        assert_eq!(metric_words("roc_auc"), ["ROC", "AUC", "ROC_AUC"]);
        assert_eq!(metric_words("map@3"), ["MAP@3"]);
        assert_eq!(metric_words("r2"), ["R2"]);
    }
}
