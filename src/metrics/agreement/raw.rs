//! Multi-rater coefficients on raw ratings, following irrCAC 0.4.4
//! `irrCAC/raw.py` line by line: Gwet's AC1/AC2, Fleiss' generalized kappa,
//! Krippendorff's alpha and Brennan–Prediger, each with irrCAC's
//! linearisation variance (finite-population factor 1, i.e. `N = ∞`).
//!
//! Invariants (irrCAC's missing-data rules): `p_a` averages only subjects
//! with two or more ratings, while the classification probabilities `π_k`
//! average every subject with at least one rating; Krippendorff's alpha uses
//! only subjects with two or more ratings. Where irrCAC divides by zero in
//! plain Python floats (chance agreement exactly 1 for Fleiss/Krippendorff,
//! e.g. one category) the coefficient is [`AgreementError::Undefined`];
//! where it divides numpy floats the IEEE result (NaN/∞) is kept.

use super::{AgreementError, Coefficient};

/// The counts `r_ik` with the derived per-subject quantities.
pub(super) struct RawData<'a> {
    counts: Vec<Vec<f64>>,
    w: &'a [Vec<f64>],
    ri: Vec<f64>,
    sum_q: Vec<f64>,
}

impl<'a> RawData<'a> {
    /// Checks irrCAC's preconditions and precomputes `r_i` and `Σ_k r_ik(r*_ik − 1)`.
    pub(super) fn new(counts: Vec<Vec<f64>>, w: &'a [Vec<f64>]) -> Result<Self, AgreementError> {
        if counts.len() < 2 {
            return Err(AgreementError::TooFewSubjects(counts.len()));
        }
        let ri: Vec<f64> = counts.iter().map(|row| row.iter().sum()).collect();
        if !ri.iter().any(|&r| r >= 2.0) {
            return Err(AgreementError::NoPairedRatings);
        }
        let sum_q = counts.iter().map(|row| weighted_agreement(row, w)).collect();
        Ok(Self { counts, w, ri, sum_q })
    }

    fn n(&self) -> f64 {
        self.counts.len() as f64
    }

    fn q(&self) -> f64 {
        self.w.len() as f64
    }

    fn n2more(&self) -> f64 {
        self.ri.iter().filter(|&&r| r >= 2.0).count() as f64
    }

    /// `T_w = Σ_kl w_kl`.
    fn weights_sum(&self) -> f64 {
        self.w.iter().flatten().sum()
    }

    /// Observed agreement over subjects with at least two ratings.
    fn pa(&self) -> f64 {
        let per_subject = self.ri.iter().zip(&self.sum_q).filter(|(r, _)| **r >= 2.0);
        per_subject.map(|(r, s)| s / (r * (r - 1.0))).sum::<f64>() / self.n2more()
    }

    /// `π_k = (1/n) Σ_i r_ik / r_i`.
    fn pi(&self) -> Vec<f64> {
        let n = self.n();
        let mut pi = vec![0.0; self.w.len()];
        for (row, r) in self.counts.iter().zip(&self.ri) {
            pi.iter_mut()
                .zip(row)
                .for_each(|(p, c)| *p += (1.0 / n) * (c / r));
        }
        pi
    }

    /// Per-subject agreement `p_a|i` (0 for subjects with one rating).
    fn pa_i(&self) -> Vec<f64> {
        let den = |r: f64| {
            if r * (r - 1.0) == 0.0 { -1.0 } else { r * (r - 1.0) }
        };
        self.sum_q
            .iter()
            .zip(&self.ri)
            .map(|(s, &r)| s / den(r))
            .collect()
    }

    /// `(n/n'') (p_a|i − p_e·[r_i ≥ 2]) / (1 − p_e)`.
    fn coefficient_i(&self, pe: f64) -> Vec<f64> {
        let scale = self.n() / self.n2more();
        let pe_r2 = |r: f64| if r >= 2.0 { pe } else { 0.0 };
        let pairs = self.pa_i().into_iter().zip(&self.ri);
        pairs
            .map(|(pa, &r)| scale * (pa - pe_r2(r)) / (1.0 - pe))
            .collect()
    }

    /// `Σ_i (x_i − c)² (1 − f) / (n (n − 1))`.
    fn variance(&self, xs: &[f64], c: f64) -> f64 {
        let n = self.n();
        1.0 / (n * (n - 1.0)) * xs.iter().map(|x| (x - c).powi(2)).sum::<f64>()
    }

    /// Gwet's AC1 (identity weights) or AC2 (`CAC.gwet`).
    pub(super) fn gwet(&self) -> Coefficient {
        let (pa, pi, q, tw) = (self.pa(), self.pi(), self.q(), self.weights_sum());
        let pe = if q >= 2.0 {
            tw * pi.iter().map(|p| p * (1.0 - p)).sum::<f64>() / (q * (q - 1.0))
        } else {
            1.0 - 1e-15
        };
        let ac = (pa - pe) / (1.0 - pe);
        let pe_scale = tw / (q * (q - 1.0));
        let x: Vec<f64> = (self.coefficient_i(pe).into_iter().enumerate())
            .map(|(i, ac_i)| {
                let dot: f64 = self.counts[i].iter().zip(&pi).map(|(c, p)| c * (1.0 - p)).sum();
                let pe_i = pe_scale * dot / self.ri[i];
                ac_i - 2.0 * (1.0 - ac) * (pe_i - pe) / (1.0 - pe)
            })
            .collect();
        let name = if tw == q { "AC1" } else { "AC2" };
        Coefficient::raw(name, ac, pa, pe, self.variance(&x, ac), self.n() - 1.0)
    }

    /// Fleiss' generalized kappa (`CAC.fleiss`).
    pub(super) fn fleiss(&self) -> Result<Coefficient, AgreementError> {
        let (pa, pi) = (self.pa(), self.pi());
        let pe = quadratic_form(self.w, &pi, &pi);
        if pe == 1.0 {
            return Err(AgreementError::Undefined("Fleiss' kappa"));
        }
        let kappa = (pa - pe) / (1.0 - pe);
        let pi_w = symmetric_weighted(self.w, &pi);
        let x: Vec<f64> = (self.coefficient_i(pe).into_iter().enumerate())
            .map(|(i, k_i)| {
                let pe_i = dot(&self.counts[i], &pi_w) / self.ri[i];
                k_i - 2.0 * (1.0 - kappa) * (pe_i - pe) / (1.0 - pe)
            })
            .collect();
        Ok(Coefficient::raw(
            "Fleiss' kappa",
            kappa,
            pa,
            pe,
            self.variance(&x, kappa),
            self.n() - 1.0,
        ))
    }

    /// Brennan–Prediger (`CAC.bp`).
    pub(super) fn brennan_prediger(&self) -> Coefficient {
        let (pa, q) = (self.pa(), self.q());
        let pe = if q >= 2.0 {
            self.weights_sum() / (q * q)
        } else {
            1e-15
        };
        let bp = (pa - pe) / (1.0 - pe);
        let x = self.coefficient_i(pe);
        Coefficient::raw(
            "Brennan-Prediger",
            bp,
            pa,
            pe,
            self.variance(&x, bp),
            self.n() - 1.0,
        )
    }

    /// Krippendorff's alpha (`CAC.krippendorff`), on subjects rated twice or more.
    pub(super) fn krippendorff(&self) -> Result<Coefficient, AgreementError> {
        let keep: Vec<usize> = (0..self.counts.len()).filter(|&i| self.ri[i] >= 2.0).collect();
        if keep.len() < 2 {
            return Err(AgreementError::TooFewSubjects(keep.len()));
        }
        let n = keep.len() as f64;
        let ri: Vec<f64> = keep.iter().map(|&i| self.ri[i]).collect();
        let ri_mean = ri.iter().sum::<f64>() / n;
        let epsi = 1.0 / ri.iter().sum::<f64>();
        let share = |i: usize, r: f64| self.sum_q[i] / (ri_mean * (r - 1.0));
        let paprime = keep.iter().zip(&ri).map(|(&i, &r)| share(i, r)).sum::<f64>() / n;
        let pa = (1.0 - epsi) * paprime + epsi;
        let mut pi = vec![0.0; self.w.len()];
        for &i in &keep {
            pi.iter_mut()
                .zip(&self.counts[i])
                .for_each(|(p, c)| *p += (1.0 / n) * (c / ri_mean));
        }
        let pe = quadratic_form(self.w, &pi, &pi);
        if pe == 1.0 {
            return Err(AgreementError::Undefined("Krippendorff's alpha"));
        }
        let alpha = (pa - pe) / (1.0 - pe);
        let alpha_prime = (paprime - pe) / (1.0 - pe);
        let pi_w = symmetric_weighted(self.w, &pi);
        let x: Vec<f64> = (keep.iter().zip(&ri))
            .map(|(&i, &r)| {
                let pa_i = share(i, r) - pa * (r - ri_mean) / ri_mean;
                let k_i = (pa_i - pe) / (1.0 - pe);
                let pe_i = dot(&self.counts[i], &pi_w) / ri_mean - pe * (r - ri_mean) / ri_mean;
                k_i - 2.0 * (1.0 - alpha_prime) * (pe_i - pe) / (1.0 - pe)
            })
            .collect();
        let var = 1.0 / (n * (n - 1.0)) * x.iter().map(|v| (v - alpha_prime).powi(2)).sum::<f64>();
        Ok(Coefficient::raw(
            "Krippendorff's alpha",
            alpha,
            pa,
            pe,
            var,
            n - 1.0,
        ))
    }
}

/// `Σ_k r_ik (r*_ik − 1)` with `r*_ik = Σ_l w_kl r_il`.
fn weighted_agreement(row: &[f64], w: &[Vec<f64>]) -> f64 {
    let weighted = w.iter().map(|wk| dot(wk, row));
    row.iter().zip(weighted).map(|(c, cw)| c * (cw - 1.0)).sum()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `Σ_kl w_kl a_k b_l`.
pub(super) fn quadratic_form(w: &[Vec<f64>], a: &[f64], b: &[f64]) -> f64 {
    w.iter()
        .zip(a)
        .map(|(wk, ak)| wk.iter().zip(b).map(|(wkl, bl)| wkl * ak * bl).sum::<f64>())
        .sum()
}

/// `(W π + Wᵀ π) / 2`.
fn symmetric_weighted(w: &[Vec<f64>], pi: &[f64]) -> Vec<f64> {
    let q = w.len();
    let row = |k: usize| dot(&w[k], pi);
    let col = |k: usize| (0..q).map(|l| w[l][k] * pi[l]).sum::<f64>();
    (0..q).map(|k| (row(k) + col(k)) / 2.0).collect()
}
