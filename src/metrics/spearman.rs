//! Spearman's rank correlation with its two-sided p-value, as
//! `scipy.stats.spearmanr(x, y)` (scipy 1.17.1) computes them.
//!
//! Invariants: ties get average ranks (`rankdata(..., 'average')`); ρ is
//! the Pearson correlation of the ranks in `np.corrcoef`'s order of
//! operations (covariance / σx / σy, clipped to [−1, 1]); the p-value is
//! `2·sf_t(|t|, n − 2)` with `t = ρ·sqrt((n−2)/((1+ρ)(1−ρ)))`. As in scipy:
//! n ≤ 1, a constant input or any NaN give (NaN, NaN); n = 2 gives a NaN
//! p-value; |ρ| = 1 gives p = 0.

use serde::Serialize;

use super::student_t;

/// The inputs have different lengths (scipy raises too).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("x has {x} values but y has {y}")]
pub struct LengthMismatch {
    /// Length of x.
    pub x: usize,
    /// Length of y.
    pub y: usize,
}

/// Spearman's ρ and its two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spearman {
    /// The rank correlation.
    pub rho: f64,
    /// Two-sided p-value under independence (Student t approximation).
    pub p_value: f64,
}

/// `scipy.stats.spearmanr(x, y)`.
pub fn spearman(x: &[f64], y: &[f64]) -> Result<Spearman, LengthMismatch> {
    if x.len() != y.len() {
        return Err(LengthMismatch {
            x: x.len(),
            y: y.len(),
        });
    }
    let undefined = Spearman {
        rho: f64::NAN,
        p_value: f64::NAN,
    };
    if x.len() <= 1 || is_constant(x) || is_constant(y) || x.iter().chain(y).any(|v| v.is_nan()) {
        return Ok(undefined);
    }
    let rho = correlation(&average_ranks(x), &average_ranks(y));
    Ok(Spearman {
        rho,
        p_value: p_value(rho, x.len()),
    })
}

fn is_constant(v: &[f64]) -> bool {
    v.iter().all(|&a| a == v[0])
}

/// `rankdata(v, method='average')`: 1-based ranks, ties share their mean.
pub fn average_ranks(v: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut ranks = vec![0.0; v.len()];
    let mut start = 0;
    while start < order.len() {
        let end = start
            + order[start..]
                .iter()
                .take_while(|&&i| v[i] == v[order[start]])
                .count();
        let rank = (start + 1 + end) as f64 / 2.0;
        order[start..end].iter().for_each(|&i| ranks[i] = rank);
        start = end;
    }
    ranks
}

/// `np.corrcoef(a, b)[0, 1]`.
fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / n;
    let (ma, mb) = (mean(a), mean(b));
    let da: Vec<f64> = a.iter().map(|v| v - ma).collect();
    let db: Vec<f64> = b.iter().map(|v| v - mb).collect();
    let dot = |u: &[f64], w: &[f64]| u.iter().zip(w).map(|(p, q)| p * q).sum::<f64>() / (n - 1.0);
    let r = dot(&da, &db) / dot(&da, &da).sqrt() / dot(&db, &db).sqrt();
    r.clamp(-1.0, 1.0)
}

/// Two-sided p-value of ρ with `n − 2` degrees of freedom.
fn p_value(rho: f64, n: usize) -> f64 {
    let dof = n as f64 - 2.0;
    let ratio = dof / ((rho + 1.0) * (1.0 - rho));
    let t = rho * ratio.max(0.0).sqrt();
    2.0 * student_t::sf(t.abs(), dof)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::reference_fixture::{assert_close, cases};

    fn floats(v: &serde_json::Value) -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    }

    #[test]
    fn matches_scipy() {
        let mut max_diff: f64 = 0.0;
        for case in cases("spearman") {
            let (x, y) = (floats(&case["x"]), floats(&case["y"]));
            let got = spearman(&x, &y).unwrap();
            max_diff = max_diff.max(assert_close(got.rho, &case["rho"], &format!("rho {x:?}")));
            max_diff = max_diff.max(assert_close(got.p_value, &case["p"], &format!("p {x:?}")));
        }
        eprintln!("spearman: max abs diff {max_diff:e}");
    }

    #[test]
    fn ties_get_average_ranks() {
        assert_eq!(average_ranks(&[10.0, 20.0, 10.0, 5.0]), [2.5, 4.0, 2.5, 1.0]);
    }

    #[test]
    fn length_mismatch_is_an_error() {
        assert_eq!(spearman(&[1.0], &[]), Err(LengthMismatch { x: 1, y: 0 }));
    }
}
