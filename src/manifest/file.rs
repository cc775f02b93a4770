//! Reading one manifest file: TOML into its type, or an error naming the file, the line
//! and the field ([`ManifestError`]). A leaf of `manifest/`: every manifest reads through
//! it.

use std::path::{Path, PathBuf};

/// A manifest that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read manifest {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{}: {field}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        field: String,
        message: String,
    },
}

impl crate::error::IsInputError for ManifestError {
    fn is_input_error(&self) -> bool {
        true
    }
}
crate::error::input_error!(ManifestError);

/// Parses `text` (the content of `path`) strictly into `T`.
pub fn parse<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, ManifestError> {
    toml::from_str(text).map_err(|e| ManifestError::Syntax {
        path: path.to_path_buf(),
        line: e.span().map_or(1, |s| line_of(text, s.start)),
        message: e.message().trim().to_string(),
    })
}

/// Reads and parses a manifest file.
pub fn load<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ManifestError> {
    let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &text)
}

/// Reads and parses an optional manifest file: `T`'s default when there is none.
pub fn load_optional<T: serde::de::DeserializeOwned + Default>(path: &Path) -> Result<T, ManifestError> {
    if path.exists() {
        load(path)
    } else {
        Ok(T::default())
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}
