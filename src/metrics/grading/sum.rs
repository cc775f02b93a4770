//! Compensated summation, so that means over ten million rows stay within 1e-12 of the
//! reference (numpy sums pairwise; a naive running sum drifts by up to n·ε).
//!
//! The sum is sequential: adding the values in chunks to one [`Neumaier`] gives the same bits
//! as adding them all at once, which is what lets a streamed score equal the in-memory one.

/// Neumaier's compensated running sum.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Neumaier {
    total: f64,
    carry: f64,
}

impl Neumaier {
    /// Adds one value.
    #[inline]
    pub(crate) fn add(&mut self, v: f64) {
        let t = self.total + v;
        self.carry += if self.total.abs() >= v.abs() {
            (self.total - t) + v
        } else {
            (v - t) + self.total
        };
        self.total = t;
    }

    /// The sum so far.
    pub(crate) fn value(self) -> f64 {
        self.total + self.carry
    }
}

/// Neumaier's compensated sum of `values`.
pub(crate) fn sum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut total = Neumaier::default();
    values.into_iter().for_each(|v| total.add(v));
    total.value()
}

/// Mean of `values`; the caller guarantees `n > 0` items.
pub(crate) fn mean(values: impl IntoIterator<Item = f64>, n: usize) -> f64 {
    sum(values) / n as f64
}
