//! Cohen's kappa for two raters from their contingency table, following
//! irrCAC 0.4.4 `irrCAC/table.py` (`CAC.cohen`), with the same weight matrix
//! as the raw-data coefficients.
//!
//! Invariant: the table counts only subjects rated by both raters (the
//! usual complete-case rule; irrCAC's table API takes a finished table). Its
//! standard error is not floored at 1e-15 (irrCAC floors only raw data), so
//! a zero variance gives a NaN confidence interval, as scipy does.

use super::Coefficient;
use super::raw::quadratic_form;

/// Cohen's (weighted) kappa of `pairs` of category indices.
pub(super) fn cohen(pairs: &[(usize, usize)], w: &[Vec<f64>]) -> Coefficient {
    let q = w.len();
    let n = pairs.len() as f64;
    let mut p = vec![vec![0.0; q]; q];
    pairs.iter().for_each(|&(a, b)| p[a][b] += 1.0);
    p.iter_mut().flatten().for_each(|v| *v /= n);
    let pa: f64 = (0..q)
        .flat_map(|k| (0..q).map(move |l| (k, l)))
        .map(|(k, l)| p[k][l] * w[k][l])
        .sum();
    let rows: Vec<f64> = p.iter().map(|r| r.iter().sum()).collect();
    let cols: Vec<f64> = (0..q).map(|l| p.iter().map(|r| r[l]).sum()).collect();
    let pe = quadratic_form(w, &rows, &cols);
    let kappa = (pa - pe) / (1.0 - pe);
    let by_cols: Vec<f64> = (0..q).map(|j| (0..q).map(|i| w[i][j] * cols[i]).sum()).collect();
    let by_rows: Vec<f64> = (0..q).map(|j| (0..q).map(|i| w[i][j] * rows[i]).sum()).collect();
    let term = |k: usize, l: usize| w[k][l] - (1.0 - kappa) * (by_cols[k] + by_rows[l]);
    let sum1: f64 = (0..q)
        .flat_map(|k| (0..q).map(move |l| (k, l)))
        .map(|(k, l)| p[k][l] * term(k, l).powi(2))
        .sum();
    let var = 1.0 / (n * (1.0 - pe).powi(2)) * (sum1 - (pa - 2.0 * (1.0 - kappa) * pe).powi(2));
    Coefficient::with_se("Cohen's kappa", kappa, pa, pe, var.sqrt(), n - 1.0)
}
