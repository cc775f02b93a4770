//! `manifests/languages.toml`: the 14 languages, their resource tiers and the
//! spellings of the original release.
//!
//! Invariants checked on load: codes are unique ISO 639-1 codes; every name
//! and alias resolves to exactly one language; every tier is high, medium or low.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::ManifestError;

/// A language's resource tier in the paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    High,
    Medium,
    Low,
}

/// One language.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Language {
    /// ISO 639-1 code, e.g. `kk`.
    pub code: String,
    /// English name, e.g. `Kazakh`.
    pub name: String,
    /// Name in the language itself, e.g. `Қазақ тілі`.
    pub native: String,
    pub tier: Tier,
    /// Other spellings accepted on import, e.g. `Arab`.
    #[serde(default)]
    pub aliases: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    language: Vec<Language>,
}

/// The languages in manifest order, with lookup by code, name or alias.
#[derive(Clone, Debug)]
pub struct Languages {
    list: Vec<Language>,
    by_name: HashMap<String, usize>,
}

impl Languages {
    /// Loads and checks `languages.toml`.
    pub fn load(path: &Path) -> Result<Self, ManifestError> {
        let file: File = super::load(path)?;
        Self::new(path, file.language)
    }

    /// Parses and checks the text of a `languages.toml`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ManifestError> {
        let file: File = super::parse(path, text)?;
        Self::new(path, file.language)
    }

    fn new(path: &Path, list: Vec<Language>) -> Result<Self, ManifestError> {
        let invalid = |i: usize, field: &str, message: String| ManifestError::Invalid {
            path: path.to_path_buf(),
            field: format!("language[{i}].{field}"),
            message,
        };
        let mut by_name = HashMap::new();
        for (i, lang) in list.iter().enumerate() {
            if lang.code.len() != 2 || !lang.code.bytes().all(|b| b.is_ascii_lowercase()) {
                return Err(invalid(
                    i,
                    "code",
                    format!("`{}` is not an ISO 639-1 code", lang.code),
                ));
            }
            for name in names(lang) {
                if let Some(&j) = by_name.get(&name.to_lowercase()).filter(|&&j| j != i) {
                    let other: &Language = &list[j];
                    return Err(invalid(
                        i,
                        "aliases",
                        format!("`{name}` already names `{}`", other.code),
                    ));
                }
                by_name.insert(name.to_lowercase(), i);
            }
        }
        Ok(Self { list, by_name })
    }

    /// All languages, in manifest order.
    pub fn all(&self) -> &[Language] {
        &self.list
    }

    /// The language a code, English name or alias names (case-insensitive).
    pub fn resolve(&self, name: &str) -> Option<&Language> {
        self.by_name
            .get(&name.trim().to_lowercase())
            .map(|&i| &self.list[i])
    }
}

fn names(lang: &Language) -> impl Iterator<Item = &str> {
    [lang.code.as_str(), lang.name.as_str()]
        .into_iter()
        .chain(lang.aliases.iter().map(String::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHIPPED: &str = include_str!("../../manifests/languages.toml");

    fn shipped() -> Languages {
        Languages::parse(Path::new("manifests/languages.toml"), SHIPPED).unwrap()
    }

    #[test]
    fn ships_the_fourteen_languages_in_tier_order() {
        let langs = shipped();
        let codes: Vec<&str> = langs.all().iter().map(|l| l.code.as_str()).collect();
        assert_eq!(
            codes,
            [
                "en", "fr", "es", "it", "zh", "ja", "ru", "pl", "tr", "ar", "uk", "ro", "kk", "be"
            ]
        );
        let tiers: Vec<Tier> = langs.all().iter().map(|l| l.tier).collect();
        assert_eq!(tiers.iter().filter(|t| **t == Tier::High).count(), 5);
        assert_eq!(tiers.iter().filter(|t| **t == Tier::Medium).count(), 6);
        assert_eq!(tiers.iter().filter(|t| **t == Tier::Low).count(), 3);
    }

    #[test]
    fn resolves_the_original_release_spellings() {
        let langs = shipped();
        for (name, code) in [
            ("Arab", "ar"),
            ("Ukranian", "uk"),
            ("Belarus", "be"),
            ("kk", "kk"),
            ("FRENCH", "fr"),
        ] {
            assert_eq!(langs.resolve(name).map(|l| l.code.as_str()), Some(code), "{name}");
        }
        assert!(langs.resolve("Klingon").is_none());
    }

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let text = "[[language]]\ncode = \"en\"\nname = \"English\"\nnative = \"English\"\ntier = \"high\"\nscript = \"Latn\"\n";
        let err = Languages::parse(Path::new("m/languages.toml"), text)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("m/languages.toml:6:") && err.contains("script"),
            "{err}"
        );
    }

    #[test]
    fn wrong_type_and_bad_tier_are_named() {
        let text = "[[language]]\ncode = \"en\"\nname = \"English\"\nnative = \"English\"\ntier = 3\n";
        let err = Languages::parse(Path::new("l.toml"), text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("l.toml:5:"), "{err}");
        let text = text.replace("tier = 3", "tier = \"mid\"");
        let err = Languages::parse(Path::new("l.toml"), &text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("l.toml:5:") && err.contains("mid"), "{err}");
    }

    #[test]
    fn an_alias_naming_two_languages_is_refused() {
        let text = SHIPPED.replace("aliases = [\"Arab\"]", "aliases = [\"Arab\", \"Russian\"]");
        let err = Languages::parse(Path::new("l.toml"), &text)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("language[9].aliases") && err.contains("Russian"),
            "{err}"
        );
    }
}
