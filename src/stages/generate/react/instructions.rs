//! The react agent's instructions in the 14 languages: one table per language, embedded
//! like the prompt's instruction tables (`super::super::prompt`).
//!
//! ```text
//! assets/generate/react/<code>.toml   instructions       the workspace, /data, the tools,
//!                                                        the budgets; ends with {protocol}
//!                                     maximize/minimize  how {direction} reads
//!                                     function_calling   the tool-calling protocols' part
//!                                     text_format        the text protocol's part, before
//!                                                        the list of tools
//! ```
//!
//! Invariants, checked before a table is used (and by the tests for all 14):
//! - `en.toml` is the reference: every table has exactly its keys, no value is blank, and
//!   each value has the same `{placeholders}` as the English one.
//! - Every `text_format` keeps the keywords the text protocol's parser reads (`Thought:`,
//!   `Action:`, `Action Input:`, `Observation:`) in English: only their explanation is
//!   translated. The tools' names and descriptions (`protocol::specs`) are English in every
//!   language, as the tool-calling protocols send them.
//!
//! The English table renders, byte for byte, the instructions the agent had before the
//! tables existed (`assets/generate/react.md`), so an English search keeps its unit key.

use std::collections::{BTreeMap, BTreeSet};

use super::super::prompt::{LANGUAGES, placeholders};
use crate::metrics::grading::Direction;

macro_rules! react_files {
    ($($code:literal),* $(,)?) => {
        [$(($code, include_str!(concat!("../../../../assets/generate/react/", $code, ".toml")))),*]
    };
}

/// (code, TOML source) of each language's table.
const FILES: [(&str, &str); 14] = react_files!(
    "en", "fr", "es", "it", "zh", "ja", "ru", "pl", "tr", "ar", "uk", "ro", "kk", "be"
);

/// The language whose table defines the key set and the placeholders.
const REFERENCE: &str = "en";

/// The words of the text protocol that its parser reads, kept in every language.
pub const KEYWORDS: [&str; 4] = ["Thought:", "Action:", "Action Input:", "Observation:"];

#[derive(Debug, thiserror::Error)]
pub enum InstructionsError {
    #[error("unknown react instructions language `{language}`; expected one of {}", LANGUAGES.join(", "))]
    UnknownLanguage { language: String },
    #[error("assets/generate/react/{language}.toml is not a flat table of strings")]
    Parse {
        language: String,
        #[source]
        source: toml::de::Error,
    },
    #[error("assets/generate/react/{language}.toml: missing key `{key}`")]
    MissingKey { language: String, key: String },
    #[error("assets/generate/react/{language}.toml: unknown key `{key}` (not in {REFERENCE}.toml)")]
    UnknownKey { language: String, key: String },
    #[error("assets/generate/react/{language}.toml: `{key}` is empty")]
    EmptyValue { language: String, key: String },
    #[error(
        "assets/generate/react/{language}.toml: `{key}` has placeholders {got:?}, \
         expected {expected:?} as in {REFERENCE}.toml"
    )]
    Placeholders {
        language: String,
        key: String,
        expected: Vec<String>,
        got: Vec<String>,
    },
    #[error(
        "assets/generate/react/{language}.toml: `text_format` lacks `{keyword}`, which the \
         text protocol's parser reads (keep it in English)"
    )]
    Keyword { language: String, keyword: &'static str },
}

type Table = BTreeMap<String, String>;

/// One language's instructions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instructions {
    /// The body, with `{direction}`, `{steps}`, `{limit}` and `{protocol}`.
    body: String,
    maximize: String,
    minimize: String,
    /// The sentence of the tool-calling protocols.
    pub function_calling: String,
    /// The text protocol's format, before the list of tools.
    pub text_format: String,
}

impl Instructions {
    /// The checked instructions of `language`.
    pub fn of(language: &str) -> Result<Self, InstructionsError> {
        Self::from_files(&FILES, language)
    }

    fn from_files(files: &[(&str, &str)], language: &str) -> Result<Self, InstructionsError> {
        let mut table = checked_table(files, language)?;
        let mut take = |key: &str| table.remove(key).unwrap_or_default();
        Ok(Self {
            body: take("instructions"),
            maximize: take("maximize"),
            minimize: take("minimize"),
            function_calling: take("function_calling"),
            text_format: take("text_format"),
        })
    }

    /// The instructions with their placeholders filled; `protocol` is the protocol's part.
    pub fn render(&self, direction: Direction, steps: u32, limit: usize, protocol: &str) -> String {
        let direction = match direction {
            Direction::Maximize => &self.maximize,
            Direction::Minimize => &self.minimize,
        };
        // `{protocol}` last: the tools' argument lists it brings contain braces.
        self.body
            .replace("{direction}", direction)
            .replace("{steps}", &steps.to_string())
            .replace("{limit}", &limit.to_string())
            .replace("{protocol}", protocol)
    }
}

/// Checks every embedded table.
pub fn check() -> Result<(), InstructionsError> {
    LANGUAGES
        .iter()
        .try_for_each(|language| Instructions::of(language).map(drop))
}

fn checked_table(files: &[(&str, &str)], language: &str) -> Result<Table, InstructionsError> {
    let table = parse_table(files, language)?;
    let reference = match language {
        REFERENCE => table.clone(),
        _ => parse_table(files, REFERENCE)?,
    };
    check_keys(language, &table, &reference)?;
    check_values(language, &table, &reference)?;
    check_keywords(language, &table)?;
    Ok(table)
}

fn parse_table(files: &[(&str, &str)], language: &str) -> Result<Table, InstructionsError> {
    let (_, source) = files.iter().find(|(code, _)| *code == language).ok_or_else(|| {
        InstructionsError::UnknownLanguage {
            language: language.to_string(),
        }
    })?;
    toml::from_str(source).map_err(|source| InstructionsError::Parse {
        language: language.to_string(),
        source,
    })
}

fn check_keys(language: &str, table: &Table, reference: &Table) -> Result<(), InstructionsError> {
    let language = language.to_string();
    if let Some(key) = reference.keys().find(|k| !table.contains_key(*k)) {
        let key = key.clone();
        return Err(InstructionsError::MissingKey { language, key });
    }
    if let Some(key) = table.keys().find(|k| !reference.contains_key(*k)) {
        let key = key.clone();
        return Err(InstructionsError::UnknownKey { language, key });
    }
    Ok(())
}

fn check_values(language: &str, table: &Table, reference: &Table) -> Result<(), InstructionsError> {
    for (key, value) in table {
        let (language, key) = (language.to_string(), key.clone());
        if value.trim().is_empty() {
            return Err(InstructionsError::EmptyValue { language, key });
        }
        let (expected, got) = (placeholders(&reference[&key]), placeholders(value));
        if expected != got {
            let owned = |s: BTreeSet<&str>| s.into_iter().map(String::from).collect();
            let (expected, got) = (owned(expected), owned(got));
            return Err(InstructionsError::Placeholders {
                language,
                key,
                expected,
                got,
            });
        }
    }
    Ok(())
}

fn check_keywords(language: &str, table: &Table) -> Result<(), InstructionsError> {
    let text = table.get("text_format").map_or("", String::as_str);
    match KEYWORDS.into_iter().find(|k| !text.contains(k)) {
        Some(keyword) => Err(InstructionsError::Keyword {
            language: language.to_string(),
            keyword,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded files with `language`'s edited.
    fn edited(language: &str, edit: impl Fn(&str) -> String) -> Vec<(&'static str, String)> {
        FILES
            .iter()
            .map(|(code, text)| {
                let text = if *code == language {
                    edit(text)
                } else {
                    text.to_string()
                };
                (*code, text)
            })
            .collect()
    }

    fn of_edited(
        files: &[(&'static str, String)],
        language: &str,
    ) -> Result<Instructions, InstructionsError> {
        let files: Vec<(&str, &str)> = files.iter().map(|(c, t)| (*c, t.as_str())).collect();
        Instructions::from_files(&files, language)
    }

    #[test]
    fn embedded_tables_pass_their_checks() {
        check().unwrap();
    }

    #[test]
    fn every_language_has_a_file_on_disk_and_no_file_is_stray() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/generate/react");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        on_disk.sort();
        let mut expected: Vec<String> = LANGUAGES.iter().map(|c| format!("{c}.toml")).collect();
        expected.sort();
        assert_eq!(on_disk, expected);
        let embedded: Vec<&str> = FILES.iter().map(|(c, _)| *c).collect();
        assert_eq!(embedded, LANGUAGES);
    }

    #[test]
    fn every_language_is_its_own_and_keeps_paths_tools_and_numbers() {
        let english = Instructions::of("en").unwrap();
        for language in LANGUAGES {
            let i = Instructions::of(language).unwrap();
            let text = i.render(Direction::Minimize, 37, 10_000, "<protocol>");
            for kept in [
                "`/data`",
                "`/data/train.csv`",
                "`/data/test.csv`",
                "`solution.py`",
                "`run_python`",
                "`write_file`",
                "`validate`",
                "`submit`",
                "37",
                "10000",
                "<protocol>",
            ] {
                assert!(text.contains(kept), "{language}: {kept} is missing in\n{text}");
            }
            assert!(
                text.contains(&i.minimize) && !text.contains('{'),
                "{language}: {text}"
            );
            if language != "en" {
                assert_ne!(i.body, english.body, "{language} is translated");
                assert_ne!(i.text_format, english.text_format, "{language}");
                assert_ne!(i.function_calling, english.function_calling, "{language}");
            }
        }
    }

    #[test]
    fn a_changed_placeholder_names_the_file_and_key() {
        let files = edited("ru", |t| t.replace("{limit}", "{limits}"));
        let e = of_edited(&files, "ru").unwrap_err();
        assert_eq!(
            e.to_string(),
            "assets/generate/react/ru.toml: `instructions` has placeholders \
             [\"direction\", \"limits\", \"protocol\", \"steps\"], expected \
             [\"direction\", \"limit\", \"protocol\", \"steps\"] as in en.toml"
        );
        let files = edited("ja", |t| t.replace("{protocol}", ""));
        let e = of_edited(&files, "ja").unwrap_err().to_string();
        assert!(
            e.starts_with("assets/generate/react/ja.toml: `instructions`"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_or_stray_key_and_a_blank_value_are_named() {
        let files = edited("fr", |t| t.replace("function_calling =", "function_call ="));
        let e = of_edited(&files, "fr").unwrap_err().to_string();
        assert_eq!(e, "assets/generate/react/fr.toml: missing key `function_calling`");
        let files = edited("fr", |t| format!("{t}\nextra = \"x\"\n"));
        let e = of_edited(&files, "fr").unwrap_err().to_string();
        assert_eq!(
            e,
            "assets/generate/react/fr.toml: unknown key `extra` (not in en.toml)"
        );
        let files = edited("kk", |t| {
            let at = t.find("maximize = ").unwrap();
            let end = at + t[at..].find('\n').unwrap();
            format!("{}maximize = \" \"{}", &t[..at], &t[end..])
        });
        let e = of_edited(&files, "kk").unwrap_err().to_string();
        assert_eq!(e, "assets/generate/react/kk.toml: `maximize` is empty");
    }

    #[test]
    fn a_translated_keyword_of_the_text_protocol_is_refused() {
        let files = edited("es", |t| t.replace("Action Input:", "Entrada de acción:"));
        let e = of_edited(&files, "es").unwrap_err().to_string();
        assert!(e.contains("es.toml: `text_format` lacks `Action Input:`"), "{e}");
    }

    #[test]
    fn an_unknown_language_is_refused() {
        let e = Instructions::of("xx").unwrap_err().to_string();
        assert!(e.starts_with("unknown react instructions language `xx`"), "{e}");
    }

    /// The instructions the agent had before the tables (`assets/generate/react.md` at
    /// commit d87cf28), so English searches keep their unit keys.
    const BEFORE: &str = "# Working as an agent\n\nYou do not answer with the code. You work in a workspace with tools, step by step, until you\nsubmit a file with the solution described above.\n\n- The competition's public files are at `/data` (read-only): `/data/train.csv` and\n  `/data/test.csv`. Paths that do not start with `/data` are files of your workspace\n  (for example `solution.py`). Nothing else can be read.\n- `run_python` runs a script of your workspace (or a piece of code) in the sandbox, with\n  `/data` mounted and your workspace as the current folder, without network; it shows the\n  exit status and the end of stdout and stderr. Files the script writes are not kept: write\n  files with `write_file`.\n- `validate` checks a solution file statically and runs it as the benchmark will, on a\n  validation split of the training rows (never the test rows), and tells you its score\n  ({direction}).\n- `submit` ends your work: the file is your solution. Submit once, a file that validated.\n- You have {steps} steps; one tool call per step. Observations longer than {limit}\n  characters are cut.\n{protocol}\n";

    #[test]
    fn english_renders_as_before_the_tables() {
        let i = Instructions::of("en").unwrap();
        for (direction, words) in [
            (Direction::Maximize, "higher is better"),
            (Direction::Minimize, "lower is better"),
        ] {
            let before = BEFORE
                .replace("{direction}", words)
                .replace("{steps}", "100")
                .replace("{limit}", "10000")
                .replace("{protocol}", "P {x}");
            assert_eq!(i.render(direction, 100, 10_000, "P {x}"), before);
        }
        assert_eq!(i.function_calling, "Call the tools through function calling.");
    }
}
