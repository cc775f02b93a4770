//! `data/<id>/tasks/<code>.toml` and `data/<id>/back/<code>.toml`: a competition's task
//! text in one language, and the English back-translation of that text.
//!
//! On-disk format (TOML, unknown keys rejected, every field required and non-empty except
//! the data card): `title` (the competition's name), `domain` (the field of the problem),
//! `metric` (the metric's name as shown to a participant), `description` (Markdown, like a
//! Kaggle page) and `data_card` (Markdown: files and columns; may be empty, as the original
//! release allows: its prompt then shows a blank data card). These are the fields the
//! original release keeps per language in `tasks/<Language>.csv` (`comp_name`, `domain`,
//! `metric`, `description`, `data_card`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ManifestError;

/// The task text of one competition in one language.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TaskText {
    pub title: String,
    pub domain: String,
    pub metric: String,
    pub description: String,
    pub data_card: String,
}

impl TaskText {
    /// The field names, in file order.
    pub const FIELDS: [&str; 5] = ["title", "domain", "metric", "description", "data_card"];

    /// Loads and checks one task text file.
    pub fn load(path: &Path) -> Result<Self, ManifestError> {
        let text: Self = super::load(path)?;
        text.check(path)?;
        Ok(text)
    }

    /// The fields as (name, value) pairs, in file order.
    pub fn fields(&self) -> [(&'static str, &str); 5] {
        [
            ("title", &self.title),
            ("domain", &self.domain),
            ("metric", &self.metric),
            ("description", &self.description),
            ("data_card", &self.data_card),
        ]
    }

    /// Every field but the data card must hold text.
    pub fn check(&self, path: &Path) -> Result<(), ManifestError> {
        match self
            .fields()
            .into_iter()
            .find(|(f, v)| *f != "data_card" && v.trim().is_empty())
        {
            Some((field, _)) => Err(ManifestError::Invalid {
                path: path.to_path_buf(),
                field: field.into(),
                message: "is empty".into(),
            }),
            None => Ok(()),
        }
    }

    /// Serializes as the on-disk TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a struct of strings serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_or_missing_field_is_named() {
        let path = Path::new("data/x/tasks/fr.toml");
        let text = "title = \"T\"\ndomain = \"D\"\nmetric = \"M\"\ndescription = \" \"\ndata_card = \"C\"\n";
        let parsed: TaskText = crate::manifest::parse(path, text).unwrap();
        let err = parsed.check(path).unwrap_err().to_string();
        assert_eq!(err, "data/x/tasks/fr.toml: description: is empty");
        let missing = crate::manifest::parse::<TaskText>(path, "title = \"T\"\n").unwrap_err();
        assert!(
            missing.to_string().contains("missing field `domain`"),
            "{missing}"
        );
    }

    #[test]
    fn only_the_data_card_may_be_empty() {
        let path = Path::new("data/x/tasks/ar.toml");
        let text =
            "title = \"T\"\ndomain = \"D\"\nmetric = \"M\"\ndescription = \"Desc\"\ndata_card = \"\"\n";
        let parsed: TaskText = crate::manifest::parse(path, text).unwrap();
        parsed.check(path).unwrap();
        let no_title = TaskText {
            title: " ".into(),
            ..parsed
        };
        assert_eq!(
            no_title.check(path).unwrap_err().to_string(),
            "data/x/tasks/ar.toml: title: is empty"
        );
    }

    #[test]
    fn round_trips_through_toml() {
        let t = TaskText {
            title: "Titre".into(),
            domain: "Domaine".into(),
            metric: "RMSE".into(),
            description: "## Aperçu\n\"quoted\"\n".into(),
            data_card: "`id`".into(),
        };
        let back: TaskText = crate::manifest::parse(Path::new("t.toml"), &t.to_toml()).unwrap();
        assert_eq!(back, t);
    }
}
