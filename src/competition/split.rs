//! The seeded holdout split: which source rows are held out, and every row's id.
//!
//! Rule (version 1; changing it changes every committed checksum). With
//! `key(domain, i) =` the first 8 bytes, little endian, of
//! `blake3(domain ‖ seed as u64 LE ‖ i as u64 LE)` for source row `i` (0-based, header not
//! counted), rows sorted by `(key, i)` give a shuffled order:
//! * the **split order** uses the domain `"ml2b split v1"`. Unstratified: its first
//!   `round(f · n)` rows are held out. Stratified: per class (the target's text, classes in
//!   byte order), the first `round(f · n_c)` of that class's rows in split order are held
//!   out, at most `n_c − 1`, so every class keeps a training row;
//! * the **id order** uses the domain `"ml2b id v1"`: a row's id is its position in it. Ids
//!   are thus independent of the source order, the labels and the split (a source sorted by
//!   label, or ids below some bound being the test rows, would leak).
//!
//! `round` is half away from zero. The rule needs no random number generator, so it cannot
//! drift with a library's version, and any language can re-implement it.

use std::collections::BTreeMap;

/// Where each source row goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// `ids[i]`: the id of source row `i`.
    pub ids: Vec<u64>,
    /// `held_out[i]`: whether source row `i` is a test row.
    pub held_out: Vec<bool>,
    /// Source row indices in id order.
    pub order: Vec<usize>,
}

impl Assignment {
    /// Source row indices of the training rows, in id order.
    pub fn train_rows(&self) -> impl Iterator<Item = usize> + '_ {
        self.order.iter().copied().filter(|&i| !self.held_out[i])
    }

    /// Source row indices of the held-out rows, in id order.
    pub fn test_rows(&self) -> impl Iterator<Item = usize> + '_ {
        self.order.iter().copied().filter(|&i| self.held_out[i])
    }
}

/// The domain of the split order.
pub const SPLIT_DOMAIN: &[u8] = b"ml2b split v1";
/// The domain of the id order.
pub const ID_DOMAIN: &[u8] = b"ml2b id v1";
/// The domain of the validation split of the public training rows (`super::validation`),
/// used in place of [`SPLIT_DOMAIN`].
pub const VALIDATION_DOMAIN: &[u8] = b"ml2b validation v1";

/// The shuffled order of `n` rows under `seed` in `domain`: source row indices by position.
pub fn shuffled(n: usize, seed: u64, domain: &[u8]) -> Vec<usize> {
    let mut keyed: Vec<(u64, usize)> = (0..n).map(|i| (sort_key(domain, seed, i as u64), i)).collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

fn sort_key(domain: &[u8], seed: u64, row: u64) -> u64 {
    let mut h = blake3::Hasher::new();
    h.update(domain);
    h.update(&seed.to_le_bytes());
    h.update(&row.to_le_bytes());
    let bytes = h.finalize();
    u64::from_le_bytes(bytes.as_bytes()[..8].try_into().expect("8 bytes"))
}

fn round_count(fraction: f64, n: usize) -> usize {
    (fraction * n as f64).round() as usize
}

/// Splits `n` rows; `classes` (one label per row) makes it stratified.
pub fn holdout(n: usize, fraction: f64, seed: u64, classes: Option<&[&str]>) -> Assignment {
    holdout_in(SPLIT_DOMAIN, n, fraction, seed, classes)
}

/// [`holdout`] with the split order drawn in `domain`.
pub fn holdout_in(domain: &[u8], n: usize, fraction: f64, seed: u64, classes: Option<&[&str]>) -> Assignment {
    let split_order = shuffled(n, seed, domain);
    let order = shuffled(n, seed, ID_DOMAIN);
    let mut ids = vec![0u64; n];
    for (pos, &i) in order.iter().enumerate() {
        ids[i] = pos as u64;
    }
    let mut held_out = vec![false; n];
    match classes {
        None => {
            for &i in &split_order[..round_count(fraction, n).min(n)] {
                held_out[i] = true;
            }
        }
        Some(labels) => {
            let mut by_class: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
            for &i in &split_order {
                by_class.entry(labels[i]).or_default().push(i);
            }
            for rows in by_class.values() {
                let take = round_count(fraction, rows.len()).min(rows.len().saturating_sub(1));
                for &i in &rows[..take] {
                    held_out[i] = true;
                }
            }
        }
    }
    Assignment { ids, held_out, order }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_is_pinned() {
        // Guards the rule: a change here changes every committed split. The expected orders
        // come from an independent Python implementation of the module docs (the `blake3`
        // package): sorted(range(8), key=lambda i: (u64_le(blake3(domain + seed + i)[:8]), i)).
        assert_eq!(shuffled(8, 42, SPLIT_DOMAIN), [7, 3, 5, 2, 4, 6, 1, 0]);
        assert_eq!(shuffled(8, 42, ID_DOMAIN), [3, 2, 1, 6, 7, 4, 0, 5]);
    }

    #[test]
    fn ids_are_a_permutation_and_the_order_follows_them() {
        let a = holdout(1000, 0.2, 7, None);
        let mut ids = a.ids.clone();
        ids.sort_unstable();
        assert!(ids.iter().enumerate().all(|(p, &id)| id == p as u64));
        assert!(a.order.iter().enumerate().all(|(p, &i)| a.ids[i] == p as u64));
        assert_eq!(a.held_out.iter().filter(|&&h| h).count(), 200);
        assert_eq!(a.train_rows().count() + a.test_rows().count(), 1000);
    }

    #[test]
    fn stratified_keeps_class_shares_and_a_training_row_per_class() {
        let mut labels = vec!["a"; 90];
        labels.extend(vec!["b"; 9]);
        labels.push("c");
        let a = holdout(100, 0.25, 1, Some(&labels));
        let held = |c: &str| (0..100).filter(|&i| labels[i] == c && a.held_out[i]).count();
        assert_eq!((held("a"), held("b"), held("c")), (23, 2, 0));
    }

    #[test]
    fn different_seeds_differ_and_the_same_seed_repeats() {
        assert_eq!(holdout(50, 0.2, 3, None), holdout(50, 0.2, 3, None));
        assert_ne!(holdout(50, 0.2, 3, None).order, holdout(50, 0.2, 4, None).order);
    }
}
