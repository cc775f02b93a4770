//! Job arrays: how a plan's shards are cut into Slurm arrays ([`spans`], at most
//! `MaxArraySize − 1` tasks each) and the arrays a submission made ([`Array`]).
//!
//! A leaf of the cluster modules: plain data and arithmetic, no Slurm command, so the
//! plan, the plan's folder and the job records share it without depending on `slurm`.
//!
//! On disk: an [`Array`] is recorded in `cluster/<P>/jobs.jsonl` (`crate::cluster::jobs`)
//! as `{"job_id", "first", "shards"}`.

/// One job array of a plan: shards `first..first + shards`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Array {
    pub job_id: String,
    pub first: u32,
    pub shards: u32,
}

/// Slurm's default `MaxArraySize`, used when the cluster's configuration does not say.
pub const DEFAULT_MAX_ARRAY_SIZE: u32 = 1001;

/// The shards `first..first + len` of one array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub first: u32,
    pub len: u32,
}

/// The most tasks one array may have on a cluster whose `MaxArraySize` is `max`: task ids
/// must stay below it, and one is kept in reserve (the issue's `MaxArraySize − 1`).
pub fn array_cap(max_array_size: u32) -> u32 {
    max_array_size.saturating_sub(1).max(1)
}

/// `shards` cut into arrays of at most [`array_cap`] tasks, in order, covering each shard
/// once.
pub fn spans(shards: u32, max_array_size: u32) -> Vec<Span> {
    let cap = array_cap(max_array_size);
    (0..shards.div_ceil(cap))
        .map(|i| {
            let first = i * cap;
            Span {
                first,
                len: cap.min(shards - first),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_beyond_one_array_are_cut_into_consecutive_arrays() {
        assert_eq!(array_cap(1001), 1000);
        assert_eq!(array_cap(1), 1);
        assert_eq!(spans(7, 10001), vec![Span { first: 0, len: 7 }]);
        assert_eq!(
            spans(2500, 1001),
            vec![
                Span { first: 0, len: 1000 },
                Span {
                    first: 1000,
                    len: 1000
                },
                Span {
                    first: 2000,
                    len: 500
                },
            ]
        );
        assert_eq!(spans(2000, 1001).len(), 2, "a last full array, not an empty one");
        for (shards, max) in [
            (1, 2),
            (5, 3),
            (999, 1000),
            (1000, 1001),
            (1001, 1001),
            (12345, 101),
        ] {
            let all: Vec<u32> = spans(shards, max)
                .iter()
                .inspect(|s| assert!(s.len >= 1 && s.len <= array_cap(max), "{s:?}"))
                .flat_map(|s| s.first..s.first + s.len)
                .collect();
            assert_eq!(
                all,
                (0..shards).collect::<Vec<_>>(),
                "{shards} shards, MaxArraySize {max}"
            );
        }
    }
}
