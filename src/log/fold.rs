//! The state of a stage: a fold over its events.
//!
//! The rule is "latest event per unit key wins", where "latest" is log order
//! (segment version, then row). Because a unit key is committed at most once
//! per log, the rule only matters across stage schema versions and forced
//! re-runs; it is still the one definition every reader uses.

use std::collections::BTreeMap;

use super::event::Event;
use crate::store::Hash;

/// Latest event per unit key.
#[derive(Clone, Debug, PartialEq)]
pub struct State<B> {
    by_unit: BTreeMap<Hash, Event<B>>,
}

impl<B> Default for State<B> {
    fn default() -> Self {
        Self {
            by_unit: BTreeMap::new(),
        }
    }
}

impl<B: Clone> State<B> {
    /// Applies events in log order.
    pub fn apply(&mut self, events: impl IntoIterator<Item = Event<B>>) {
        for e in events {
            self.by_unit.insert(e.unit_key, e);
        }
    }

    /// The event of a unit, if committed.
    pub fn get(&self, unit_key: &Hash) -> Option<&Event<B>> {
        self.by_unit.get(unit_key)
    }

    /// Number of units.
    pub fn len(&self) -> usize {
        self.by_unit.len()
    }

    /// Whether no unit is committed.
    pub fn is_empty(&self) -> bool {
        self.by_unit.is_empty()
    }

    /// Events in unit-key order.
    pub fn events(&self) -> impl Iterator<Item = &Event<B>> {
        self.by_unit.values()
    }
}
