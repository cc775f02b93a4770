//! The submission contract between ml2b and the Python harness
//! (`assets/execute/harness.py`): what a competition's code must return, written as the
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
    /// A program-graded competition returns what its sample submission holds
    /// (`[mle_bench] submission`).
    pub fn of(m: &CompetitionManifest) -> Self {
        let (kind, k) = match m.metric() {
            Some(metric) => (Self::kind(metric), Self::list_length(metric)),
            None => match m.mle_bench.as_ref().map(|b| b.submission.as_str()) {
                Some("labels") => (Kind::Labels, None),
                _ => (Kind::Values, None),
            },
        };
        Self {
            id: m.columns.id.clone(),
            targets: m.columns.targets.clone(),
            kind,
            k,
        }
    }

    fn kind(metric: Metric) -> Kind {
        match metric.input_kind() {
            InputKind::Values | InputKind::WeightedValues | InputKind::MultiValues => Kind::Values,
            InputKind::Labels => Kind::Labels,
            InputKind::Probabilities => Kind::Probabilities,
            InputKind::LabelLists => Kind::Ranked,
        }
    }

    fn list_length(metric: Metric) -> Option<usize> {
        match metric {
            Metric::Map(MapForm::Kaggle { k }) => Some(k),
            _ => None,
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a spec serializes")
    }
}
