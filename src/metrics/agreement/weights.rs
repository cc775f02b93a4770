//! irrCAC's weight matrices (`irrCAC/weights.py`): identity for nominal
//! data, and the partial-agreement weightings for ordinal/interval scales.
//!
//! Invariant: `w[k][l]` is indexed in category order; numeric categories are
//! sorted by value and weighted by value, label categories are weighted by
//! their position `1..=q`, exactly as `Weights(categories)` does.

use std::f64::consts::PI;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A weighting scheme, named as in irrCAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Weights {
    /// Unweighted (nominal): AC1, plain kappas.
    #[default]
    Identity,
    /// `1 − |c_k − c_l| / (max − min)`.
    Linear,
    /// `1 − ((c_k − c_l) / (max − min))²`.
    Quadratic,
    /// Gwet's ordinal weights on ranks.
    Ordinal,
    /// `1 − sqrt|c_k − c_l| / sqrt(max − min)`.
    Radical,
    /// Ratio weights (no category may be 0).
    Ratio,
    /// Circular weights.
    Circular,
    /// Bipolar weights.
    Bipolar,
}

/// The weighting name was not one irrCAC knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown weights `{0}` (expected one of identity, linear, quadratic, ordinal, radical, ratio, circular, bipolar)"
)]
pub struct UnknownWeights(pub String);

impl Weights {
    /// Every weighting, in irrCAC's order.
    pub const ALL: [Weights; 8] = [
        Self::Identity,
        Self::Quadratic,
        Self::Ordinal,
        Self::Linear,
        Self::Radical,
        Self::Ratio,
        Self::Circular,
        Self::Bipolar,
    ];

    /// irrCAC's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Identity => "identity",
            Self::Linear => "linear",
            Self::Quadratic => "quadratic",
            Self::Ordinal => "ordinal",
            Self::Radical => "radical",
            Self::Ratio => "ratio",
            Self::Circular => "circular",
            Self::Bipolar => "bipolar",
        }
    }

    /// The `q × q` matrix for category values `c` (sorted ascending).
    pub fn matrix(self, c: &[f64]) -> Vec<Vec<f64>> {
        let q = c.len();
        let (min, max) = (c[0], c[q - 1]);
        let cell = |k: usize, l: usize| -> f64 {
            let d = c[k] - c[l];
            match self {
                Self::Identity => f64::from(u8::from(k == l)),
                Self::Linear => 1.0 - d.abs() / (max - min).abs(),
                Self::Quadratic => 1.0 - (d / (max - min)).powi(2),
                Self::Ordinal => {
                    let n = k.abs_diff(l) as f64 + 1.0;
                    n * (n - 1.0) / 2.0
                }
                Self::Radical => 1.0 - d.abs().sqrt() / (max - min).abs().sqrt(),
                Self::Ratio => {
                    let spread = ((max - min) / (max + min)).powi(2);
                    1.0 - (d / (c[k] + c[l])).powi(2) / spread
                }
                Self::Circular => (PI * d / (max - min + 1.0)).sin().powi(2),
                Self::Bipolar if k == l => 0.0,
                Self::Bipolar => d.powi(2) / ((c[k] + c[l] - 2.0 * min) * (2.0 * max - c[k] - c[l])),
            }
        };
        let m: Vec<Vec<f64>> = (0..q).map(|k| (0..q).map(|l| cell(k, l)).collect()).collect();
        match self {
            Self::Ordinal | Self::Circular | Self::Bipolar => one_minus_normalised(m),
            _ => m,
        }
    }
}

/// `1 − m / max(m)`, irrCAC's way of turning disagreements into weights.
fn one_minus_normalised(m: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
    let max = m.iter().flatten().copied().fold(f64::NEG_INFINITY, f64::max);
    m.into_iter()
        .map(|row| row.into_iter().map(|v| 1.0 - v / max).collect())
        .collect()
}

impl fmt::Display for Weights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Weights {
    type Err = UnknownWeights;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let found = Self::ALL.into_iter().find(|w| w.name() == s);
        found.ok_or_else(|| UnknownWeights(s.to_owned()))
    }
}
