//! The submission contract between ml2b and the Python harness
//! (`stages/execute/harness.py`): what a competition's code must return, written as the
//! harness's `spec.json`.
//!
//! `{"id": <id column>, "targets": [<target columns>], "kind": "values" | "labels" |
//! "probabilities" | "ranked", "k": <list length, ranked only>}`; the harness's docstring
//! says what shape each kind takes and how it becomes a submission CSV that
//! `metrics::grading` grades.

use serde::Serialize;

use crate::manifest::CompetitionManifest;
use crate::metrics::grading::registry::MapForm;
use crate::metrics::grading::{InputKind, Metric};

/// What the code of a competition returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Values,
    Labels,
    Probabilities,
    Ranked,
}

/// The harness's `spec.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Spec {
    pub id: String,
    pub targets: Vec<String>,
    pub kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<usize>,
}

impl Spec {
    /// The contract of a competition.
    pub fn of(m: &CompetitionManifest) -> Self {
        let metric = m.metric();
        let kind = match metric.input_kind() {
            InputKind::Values | InputKind::WeightedValues | InputKind::MultiValues => Kind::Values,
            InputKind::Labels => Kind::Labels,
            InputKind::Probabilities => Kind::Probabilities,
            InputKind::LabelLists => Kind::Ranked,
        };
        let k = match metric {
            Metric::Map(MapForm::Kaggle { k }) => Some(k),
            _ => None,
        };
        Self {
            id: m.columns.id.clone(),
            targets: m.columns.targets.clone(),
            kind,
            k,
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a spec serializes")
    }
}
