//! Compensated summation, so that means over ten million rows stay within 1e-12 of the
//! reference (numpy sums pairwise; a naive running sum drifts by up to n·ε).

/// Neumaier's compensated sum of `values`.
pub(crate) fn sum(values: impl IntoIterator<Item = f64>) -> f64 {
    let (mut total, mut carry) = (0.0f64, 0.0f64);
    for v in values {
        let t = total + v;
        carry += if total.abs() >= v.abs() {
            (total - t) + v
        } else {
            (v - t) + total
        };
        total = t;
    }
    total + carry
}

/// Mean of `values`; the caller guarantees `n > 0` items.
pub(crate) fn mean(values: impl IntoIterator<Item = f64>, n: usize) -> f64 {
    sum(values) / n as f64
}
