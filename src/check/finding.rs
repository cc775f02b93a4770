//! A finding of the static checks ([`Finding`]: its kind, line and message), the kinds
//! ([`FindingKind`], serialised in snake_case) and the checks' error. A leaf of `check/`:
//! every pass reports through it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a finding is about. Serialized in snake_case (`leakage_no_independent_test`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// CPython would not compile the file (or tree-sitter could not parse it).
    SyntaxError,
    /// A function the format needs is not defined at the top level.
    MissingFunction,
    /// A contract function cannot be called with the harness's positional arguments.
    SignatureMismatch,
    /// A kept module-level list/dict/set/object, or a `global` statement inside a function.
    GlobalMutableState,
    /// A top-level statement the loader drops (it never runs).
    DroppedTopLevelCode,
    /// An import (or `__import__`/`importlib.import_module` call) of a network client module.
    NetworkImport,
    /// A preprocessing step (scaler, encoder, vectorizer, imputer, PCA, statistic...) fitted on
    /// validation rows, alone or mixed with training rows.
    LeakagePreprocessingOnValidation,
    /// A model fitted on data that contains validation rows (pseudo-labels, concat with `X_val`).
    LeakageTrainValidationOverlap,
    /// Early stopping or a model/hyperparameter/threshold selection judged on the rows the model
    /// was fitted on.
    LeakageNoIndependentTest,
}

impl FindingKind {
    /// Every kind, in declaration order.
    pub const ALL: [FindingKind; 9] = [
        FindingKind::SyntaxError,
        FindingKind::MissingFunction,
        FindingKind::SignatureMismatch,
        FindingKind::GlobalMutableState,
        FindingKind::DroppedTopLevelCode,
        FindingKind::NetworkImport,
        FindingKind::LeakagePreprocessingOnValidation,
        FindingKind::LeakageTrainValidationOverlap,
        FindingKind::LeakageNoIndependentTest,
    ];

    /// The snake_case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::SyntaxError => "syntax_error",
            FindingKind::MissingFunction => "missing_function",
            FindingKind::SignatureMismatch => "signature_mismatch",
            FindingKind::GlobalMutableState => "global_mutable_state",
            FindingKind::DroppedTopLevelCode => "dropped_top_level_code",
            FindingKind::NetworkImport => "network_import",
            FindingKind::LeakagePreprocessingOnValidation => "leakage_preprocessing_on_validation",
            FindingKind::LeakageTrainValidationOverlap => "leakage_train_validation_overlap",
            FindingKind::LeakageNoIndependentTest => "leakage_no_independent_test",
        }
    }

    /// Whether this is one of the three leakage kinds.
    pub fn is_leakage(self) -> bool {
        matches!(
            self,
            FindingKind::LeakagePreprocessingOnValidation
                | FindingKind::LeakageTrainValidationOverlap
                | FindingKind::LeakageNoIndependentTest
        )
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of [`FindingKind::ALL`]'s snake_case names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown finding kind {0:?}")]
pub struct ParseFindingKindError(pub String);

impl FromStr for FindingKind {
    type Err = ParseFindingKindError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FindingKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s.trim())
            .ok_or_else(|| ParseFindingKindError(s.to_string()))
    }
}

/// One problem found in a submission.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    /// 1-based line in the source.
    pub line: usize,
    /// A short explanation.
    pub message: String,
}

impl Finding {
    pub(crate) fn new(kind: FindingKind, line: usize, message: impl Into<String>) -> Self {
        Finding {
            kind,
            line,
            message: message.into(),
        }
    }
}

/// Why the source could not be analysed at all (as opposed to a syntax error in it).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("cannot load the Python grammar: {0}")]
    Language(#[from] tree_sitter::LanguageError),
    #[error("the Python parser gave up before the end of the file")]
    ParseAborted,
}
