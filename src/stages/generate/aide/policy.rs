//! AIDE's search policy (`aide/agent.py`, `search_policy`), as a pure function of the
//! journal so far.
//!
//! 1. Draft while there are fewer than `drafts` drafts.
//! 2. With probability `debug_prob`, debug a buggy leaf whose debug depth is at most
//!    `max_debug_depth`, chosen uniformly.
//! 3. Otherwise draft when no attempt is good,
//! 4. else improve the best good attempt (greedy).
//!
//! AIDE draws from Python's `random`; here every draw is a blake3 of (the sample's seed, the
//! step, the purpose), so a search is reproducible from its seed alone and a re-run takes
//! the same path.

use super::Config;

/// What the policy needs to know of an attempt.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The attempt it revised (an index into the journal).
    pub parent: Option<usize>,
    pub is_buggy: bool,
    /// The validation score (`None` for a buggy attempt).
    pub metric: Option<f64>,
}

/// The next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Draft,
    /// Fix the attempt at this index.
    Debug(usize),
    /// Improve the attempt at this index.
    Improve(usize),
}

impl Action {
    /// AIDE's stage name.
    pub fn stage(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Debug(_) => "debug",
            Self::Improve(_) => "improve",
        }
    }

    pub fn parent(self) -> Option<usize> {
        match self {
            Self::Draft => None,
            Self::Debug(i) | Self::Improve(i) => Some(i),
        }
    }
}

/// The action of step `step` (0-based) after `nodes`.
pub fn next(nodes: &[Node], config: &Config, maximize: bool, seed: u32, step: u32) -> Action {
    let drafts = nodes.iter().filter(|n| n.parent.is_none()).count();
    if drafts < config.drafts as usize {
        return Action::Draft;
    }
    if draw(seed, step, b"debug") < config.debug_prob {
        let debuggable: Vec<usize> = (0..nodes.len())
            .filter(|&i| {
                nodes[i].is_buggy && is_leaf(nodes, i) && debug_depth(nodes, i) <= config.max_debug_depth
            })
            .collect();
        if !debuggable.is_empty() {
            let pick = (pick(seed, step, b"leaf") % debuggable.len() as u64) as usize;
            return Action::Debug(debuggable[pick]);
        }
    }
    match best(nodes, maximize) {
        Some(i) => Action::Improve(i),
        None => Action::Draft,
    }
}

/// The best good attempt: the highest (or lowest) score, the earliest of equals.
pub fn best(nodes: &[Node], maximize: bool) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, n) in nodes.iter().enumerate() {
        let Some(m) = n.metric.filter(|_| !n.is_buggy) else {
            continue;
        };
        let better = match best {
            None => true,
            Some((_, b)) if maximize => m > b,
            Some((_, b)) => m < b,
        };
        if better {
            best = Some((i, m));
        }
    }
    best.map(|(i, _)| i)
}

/// The attempt a search submits: the best good one, else the last (which fails honestly in
/// execute); `None` without attempts.
pub fn submitted(nodes: &[Node], maximize: bool) -> Option<usize> {
    best(nodes, maximize).or(nodes.len().checked_sub(1))
}

/// AIDE's `debug_depth`: 0 unless the node debugs a buggy parent, then one more than it.
pub fn debug_depth(nodes: &[Node], i: usize) -> u32 {
    match nodes[i].parent {
        Some(p) if nodes[p].is_buggy => debug_depth(nodes, p) + 1,
        _ => 0,
    }
}

fn is_leaf(nodes: &[Node], i: usize) -> bool {
    !nodes.iter().any(|n| n.parent == Some(i))
}

/// A uniform draw in [0, 1) from (seed, step, purpose): 53 bits of a blake3.
fn draw(seed: u32, step: u32, purpose: &[u8]) -> f64 {
    (pick(seed, step, purpose) >> 11) as f64 / (1u64 << 53) as f64
}

fn pick(seed: u32, step: u32, purpose: &[u8]) -> u64 {
    let mut h = blake3::Hasher::new();
    h.update(b"ml2b aide policy v1");
    h.update(&seed.to_le_bytes());
    h.update(&step.to_le_bytes());
    h.update(purpose);
    u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(drafts: u32, debug_prob: f64) -> Config {
        Config {
            drafts,
            debug_prob,
            max_debug_depth: 1,
            ..Config::default()
        }
    }

    fn node(parent: Option<usize>, metric: Option<f64>) -> Node {
        Node {
            parent,
            is_buggy: metric.is_none(),
            metric,
        }
    }

    #[test]
    fn drafts_come_first() {
        let c = config(2, 1.0);
        assert_eq!(next(&[], &c, true, 0, 0), Action::Draft);
        assert_eq!(next(&[node(None, None)], &c, true, 0, 1), Action::Draft);
    }

    #[test]
    fn a_buggy_leaf_is_debugged_when_the_draw_says_so() {
        let nodes = [node(None, None), node(None, Some(0.5))];
        assert_eq!(next(&nodes, &config(2, 1.0), true, 0, 2), Action::Debug(0));
        assert_eq!(next(&nodes, &config(2, 0.0), true, 0, 2), Action::Improve(1));
    }

    #[test]
    fn too_deep_or_revised_buggy_nodes_are_not_debugged() {
        // 0 buggy draft, 1 debugs it (still buggy, depth 1), 2 debugs 1 (depth 2 > max 1).
        let nodes = [node(None, None), node(Some(0), None), node(Some(1), None)];
        assert_eq!(debug_depth(&nodes, 2), 2);
        let c = config(1, 1.0);
        // Only 2 is a leaf, and it is too deep: no good node either, so draft.
        assert_eq!(next(&nodes, &c, true, 0, 3), Action::Draft);
    }

    #[test]
    fn the_best_good_node_is_improved_by_direction_earliest_of_equals() {
        let nodes = [
            node(None, Some(0.3)),
            node(None, Some(0.7)),
            node(Some(1), Some(0.7)),
        ];
        assert_eq!(best(&nodes, true), Some(1));
        assert_eq!(best(&nodes, false), Some(0));
        assert_eq!(best(&[node(None, None)], true), None);
    }

    #[test]
    fn draws_are_uniform_and_depend_on_seed_and_step() {
        let n = 20_000;
        let mean: f64 = (0..n).map(|s| draw(s, 3, b"debug")).sum::<f64>() / f64::from(n);
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
        assert_ne!(draw(1, 2, b"debug"), draw(1, 3, b"debug"));
        assert_ne!(draw(1, 2, b"debug"), draw(2, 2, b"debug"));
        assert_eq!(draw(1, 2, b"debug"), draw(1, 2, b"debug"));
    }
}
