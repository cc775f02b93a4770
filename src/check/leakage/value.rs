//! Abstract values of the leakage analysis: what a Python value may hold or be derived from.
//!
//! A [`Val`] over-approximates every concrete value an expression can take. Its main parts:
//! - `rows`: the data rows it holds, as [`Origin`]s: a base (training `data` or validation `X_val`)
//!   and a split path (which side of which split it came from). Row-wise operations keep `rows`;
//!   concatenations take the union; `train_test_split`, fold indices, slices and boolean masks
//!   append a split step. Two origins overlap unless they have different bases or went to
//!   different sides of the same split.
//! - `segs`/`marks`: how a concatenation can be split back (row blocks in order, constant marker
//!   columns), so `full[:len(data)]` or `full[full.is_train == 1]` recovers the training rows.
//! - `stat`: which bases a statistic (a reduction such as `mean`, `value_counts`) was computed on
//!   ([`Bases`]).
//! - `est`/`fitted`: for estimators, their kinds ([`EstKinds`]) and the rows they were fitted on.
//! - `pred`/`insample`/`train_score`: predictions, predictions on rows the model was fitted on,
//!   and scores computed from such predictions.
//! - `fields`/`elem`: literal dicts, lists and tuples by key (and attributes of instances of the
//!   submission's classes), and the element of an iterable.
//!
//! Invariants: [`Val::join`] is commutative and idempotent; the set-like parts (`rows`, `stat`,
//! `est`, `fitted`, the flags) only grow, so a join never loses a fact that could reveal leakage;
//! the "exact" parts (`segs`, `len_of`, `col`, `mask`, `konst`, `split`, `func`, `class`) become unknown
//! when the two sides disagree, which can only hide a split-back or a constant, never add one.

use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Base {
    Train,
    Val,
}

pub(super) type SplitId = u64;

/// Where a block of rows comes from: a base and the sides of the splits it went through.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Origin {
    pub base: Base,
    pub path: Vec<(SplitId, u8)>,
}

impl Origin {
    pub(super) fn new(base: Base) -> Origin {
        Origin {
            base,
            path: Vec::new(),
        }
    }

    /// Whether the two may share a row: same base, and at the first split step where the paths
    /// differ, not two sides of the same split.
    pub(super) fn overlaps(&self, other: &Origin) -> bool {
        if self.base != other.base {
            return false;
        }
        for (a, b) in self.path.iter().zip(&other.path) {
            if a != b {
                return a.0 != b.0;
            }
        }
        true
    }
}

pub(super) type Origins = BTreeSet<Origin>;

pub(super) fn overlap(a: &Origins, b: &Origins) -> bool {
    a.iter().any(|x| b.iter().any(|y| x.overlaps(y)))
}

pub(super) fn has_base(rows: &Origins, base: Base) -> bool {
    rows.iter().any(|o| o.base == base)
}

/// A set of named bits: the facts a [`Val::join`] gathers by union.
macro_rules! bit_set {
    ($(#[$doc:meta])* $name:ident { $($(#[$cdoc:meta])* $flag:ident = $bit:expr),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub(super) struct $name(u8);

        impl $name {
            $($(#[$cdoc])* pub(super) const $flag: $name = $name($bit);)+

            pub(super) fn is_empty(self) -> bool {
                self.0 == 0
            }

            /// Whether every member of `other` is in `self`.
            pub(super) fn contains(self, other: $name) -> bool {
                self.0 & other.0 == other.0
            }
        }

        impl std::ops::BitOr for $name {
            type Output = $name;

            fn bitor(self, other: $name) -> $name {
                $name(self.0 | other.0)
            }
        }

        impl std::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, other: $name) {
                self.0 |= other.0;
            }
        }
    };
}

bit_set! {
    /// The bases a statistic was computed on.
    Bases { TRAIN = 1, VAL = 2 }
}

impl Bases {
    fn of(base: Base) -> Bases {
        match base {
            Base::Train => Bases::TRAIN,
            Base::Val => Bases::VAL,
        }
    }
}

/// The bases of `rows`.
pub(super) fn bases(rows: &Origins) -> Bases {
    rows.iter()
        .fold(Bases::default(), |acc, o| acc | Bases::of(o.base))
}

bit_set! {
    /// The kinds an estimator object may be: more than one when branches built different ones.
    EstKinds {
        /// Preprocessing or unsupervised: its fit learns parameters from the rows.
        PRE = 1,
        MODEL = 2,
        /// Learns nothing from the rows it is fitted on.
        STATELESS = 4,
        /// A cross-validation splitter.
        SPLITTER = 8,
        /// Learns from the rows, as a model or as preprocessing: which is unknown (an object
        /// fitted by method name only, a pipeline of unknown steps).
        UNKNOWN = 16,
    }
}

impl EstKinds {
    /// Whether some member of `other` is in `self`.
    pub(super) fn intersects(self, other: EstKinds) -> bool {
        self.0 & other.0 != 0
    }

    /// These kinds, or `default` when none is known.
    pub(super) fn or(self, default: EstKinds) -> EstKinds {
        if self.is_empty() { default } else { self }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Konst {
    Bool(bool),
    None,
    Int(i64),
    Str(String),
}

impl Konst {
    /// Python truthiness.
    pub(super) fn truthy(&self) -> bool {
        match self {
            Konst::Bool(b) => *b,
            Konst::None => false,
            Konst::Int(i) => *i != 0,
            Konst::Str(s) => !s.is_empty(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Key {
    Idx(i64),
    Str(String),
}

/// A constant marker column written on a frame: `df[col] = konst` made on rows `origins`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Mark {
    pub col: String,
    pub konst: Konst,
    pub origins: Origins,
}

/// A boolean row mask, as far as it is understood.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Mask {
    /// One side of a split keyed by the mask's text.
    pub side: Option<(SplitId, u8)>,
    /// `frame[col] == konst` (true) or `!=` (false).
    pub marker: Option<(String, Konst, bool)>,
    /// `frame[col].isna()` (true) or `.notna()` (false).
    pub na: Option<(String, bool)>,
}

impl Mask {
    pub(super) fn invert(&self) -> Mask {
        Mask {
            side: self.side.map(|(id, s)| (id, 1 - s.min(1))),
            marker: self.marker.clone().map(|(c, k, eq)| (c, k, !eq)),
            na: self.na.clone().map(|(c, is)| (c, !is)),
        }
    }
}

/// How reductions on a value behave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Mode {
    /// Reductions give a statistic of all the rows.
    #[default]
    Plain,
    /// After `groupby`: reductions give per-group statistics, `transform` broadcasts them back.
    Grouped,
    /// A row, an element or a rolling window: reductions stay row-wise.
    Windowed,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Val {
    pub rows: Origins,
    pub segs: Option<Vec<Origins>>,
    pub marks: Vec<Mark>,
    pub stat: Bases,
    pub est: EstKinds,
    pub early_stop: bool,
    pub fitted: Origins,
    pub pred: bool,
    pub insample: bool,
    pub train_score: bool,
    pub split: Option<(SplitId, u8)>,
    pub len_of: Option<Origins>,
    pub col: Option<String>,
    pub mask: Option<Mask>,
    pub mode: Mode,
    pub konst: Option<Konst>,
    pub fields: Option<BTreeMap<Key, Val>>,
    pub elem: Option<Box<Val>>,
    pub func: Option<String>,
    /// An instance of this class of the submission.
    pub class: Option<String>,
}

fn same<T: PartialEq + Clone>(a: &Option<T>, b: &Option<T>) -> Option<T> {
    if a == b { a.clone() } else { None }
}

impl Val {
    /// The rows of one whole dataset.
    pub(super) fn data(base: Base) -> Val {
        Val {
            rows: [Origin::new(base)].into(),
            ..Val::default()
        }
    }

    pub(super) fn konst(k: Konst) -> Val {
        Val {
            konst: Some(k),
            ..Val::default()
        }
    }

    pub(super) fn is_data(&self) -> bool {
        !self.rows.is_empty()
    }

    /// Data rows that are not model predictions (features, targets).
    pub(super) fn is_feature_data(&self) -> bool {
        self.is_data() && !self.pred
    }

    /// A statistic of validation rows that is not itself data (and not about predictions).
    pub(super) fn is_val_stat(&self) -> bool {
        !self.is_data() && self.stat.contains(Bases::VAL) && !self.pred
    }

    /// Definitely not None / definitely None / unknown.
    pub(super) fn is_none(&self) -> Option<bool> {
        match &self.konst {
            Some(Konst::None) => Some(true),
            Some(_) => Some(false),
            None if self.is_data()
                || !self.est.is_empty()
                || self.fields.is_some()
                || self.func.is_some() =>
            {
                Some(false)
            }
            None => None,
        }
    }

    pub(super) fn truthy(&self) -> Option<bool> {
        match &self.konst {
            Some(k) => Some(k.truthy()),
            None if !self.est.is_empty() || self.func.is_some() => Some(true),
            None => None,
        }
    }

    /// Least upper bound.
    pub(super) fn join(&self, other: &Val) -> Val {
        let fields = match (&self.fields, &other.fields) {
            (Some(a), Some(b)) => {
                let mut m = a.clone();
                for (k, v) in b {
                    let joined = m.get(k).map(|x| x.join(v)).unwrap_or_else(|| v.clone());
                    m.insert(k.clone(), joined);
                }
                Some(m)
            }
            (Some(_), None) | (None, Some(_)) => {
                let (with, without) = if self.fields.is_some() {
                    (self, other)
                } else {
                    (other, self)
                };
                return with.flatten().join(without);
            }
            (None, None) => None,
        };
        let elem = match (&self.elem, &other.elem) {
            (Some(a), Some(b)) => Some(Box::new(a.join(b))),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        let mut marks = self.marks.clone();
        for m in &other.marks {
            if !marks.contains(m) {
                marks.push(m.clone());
            }
        }
        Val {
            rows: self.rows.union(&other.rows).cloned().collect(),
            segs: if other.rows.is_empty() {
                self.segs.clone()
            } else if self.rows.is_empty() {
                other.segs.clone()
            } else {
                same(&self.segs, &other.segs)
            },
            marks,
            stat: self.stat | other.stat,
            est: self.est | other.est,
            early_stop: self.early_stop || other.early_stop,
            fitted: self.fitted.union(&other.fitted).cloned().collect(),
            pred: self.pred || other.pred,
            insample: self.insample || other.insample,
            train_score: self.train_score || other.train_score,
            split: same(&self.split, &other.split),
            len_of: same(&self.len_of, &other.len_of),
            col: same(&self.col, &other.col),
            mask: same(&self.mask, &other.mask),
            mode: if self.mode == other.mode {
                self.mode
            } else {
                Mode::Plain
            },
            konst: same(&self.konst, &other.konst),
            fields,
            elem,
            func: same(&self.func, &other.func),
            class: same(&self.class, &other.class),
        }
    }

    /// The value with literal fields merged into one (what a lookup by an unknown key gives).
    pub(super) fn flatten(&self) -> Val {
        let mut base = Val {
            fields: None,
            ..self.clone()
        };
        if let Some(fields) = &self.fields {
            base.konst = None;
            for v in fields.values() {
                base = base.join(&v.flatten());
            }
        }
        base
    }

    /// What a row-preserving operation on this value gives: same rows, no identity.
    pub(super) fn derived(&self) -> Val {
        let flat = self.flatten();
        Val {
            rows: flat.rows,
            segs: flat.segs,
            marks: flat.marks,
            stat: flat.stat,
            pred: flat.pred,
            insample: flat.insample,
            train_score: flat.train_score,
            split: flat.split,
            mode: flat.mode,
            ..Val::default()
        }
    }

    /// Facts that travel with a value written into a container or frame, without its rows.
    pub(super) fn info(&self) -> Val {
        let flat = self.flatten();
        Val {
            stat: flat.stat,
            est: flat.est,
            fitted: flat.fitted,
            early_stop: flat.early_stop,
            pred: flat.pred,
            insample: flat.insample,
            train_score: flat.train_score,
            ..Val::default()
        }
    }

    /// A statistic computed on this value's rows.
    pub(super) fn reduced(&self) -> Val {
        let flat = self.flatten();
        Val {
            stat: flat.stat | bases(&flat.rows),
            pred: flat.pred,
            insample: flat.insample,
            train_score: flat.train_score || flat.insample,
            ..Val::default()
        }
    }

    /// A tuple of values.
    pub(super) fn tuple(items: Vec<Val>) -> Val {
        let fields = items
            .into_iter()
            .enumerate()
            .map(|(i, v)| (Key::Idx(i as i64), v))
            .collect();
        Val {
            fields: Some(fields),
            ..Val::default()
        }
    }

    /// An opaque iterable whose every element is `elem`.
    pub(super) fn iterable(elem: Val) -> Val {
        Val {
            elem: Some(Box::new(elem)),
            ..Val::default()
        }
    }

    /// Field by key, or the flattened value when the key is unknown or absent.
    pub(super) fn field(&self, key: Option<&Key>) -> Val {
        match (&self.fields, key) {
            (Some(fields), Some(k)) => {
                let k = match k {
                    Key::Idx(i) if *i < 0 => Key::Idx(fields.len() as i64 + i),
                    k => k.clone(),
                };
                fields.get(&k).cloned().unwrap_or_else(|| self.flatten())
            }
            _ => self.flatten(),
        }
    }

    /// The value of one element when iterating over this value.
    pub(super) fn element(&self) -> Val {
        if let Some(e) = &self.elem {
            return (**e).clone();
        }
        match &self.fields {
            Some(fields) if fields.keys().any(|k| matches!(k, Key::Str(_))) => Val::default(),
            Some(fields) => fields.values().fold(Val::default(), |acc, v| acc.join(v)),
            None => Val {
                konst: None,
                col: None,
                len_of: None,
                mask: None,
                ..self.clone()
            },
        }
    }

    /// The value of one element of `.values()` (or of `.items()`'s second part).
    pub(super) fn element_of_values(&self) -> Val {
        match &self.fields {
            Some(fields) => fields.values().fold(Val::default(), |acc, v| acc.join(v)),
            None => self.element(),
        }
    }

    /// The same rows seen through one side of a split.
    pub(super) fn through(&self, step: (SplitId, u8)) -> Val {
        let mut v = self.derived();
        v.rows = self
            .rows
            .iter()
            .map(|o| {
                let mut o = o.clone();
                o.path.push(step);
                o
            })
            .collect();
        v.segs = None;
        v.marks.clear();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_sides_are_disjoint_and_prefixes_overlap() {
        let all = Origin::new(Base::Train);
        let tr = Origin {
            base: Base::Train,
            path: vec![(7, 0)],
        };
        let va = Origin {
            base: Base::Train,
            path: vec![(7, 1)],
        };
        let other = Origin {
            base: Base::Train,
            path: vec![(8, 1)],
        };
        assert!(all.overlaps(&tr) && tr.overlaps(&all));
        assert!(!tr.overlaps(&va));
        assert!(
            tr.overlaps(&other),
            "different splits of the same rows may share rows"
        );
        assert!(!all.overlaps(&Origin::new(Base::Val)));
    }

    #[test]
    fn join_is_idempotent_and_commutative_on_rows() {
        let a = Val::data(Base::Train);
        let b = Val {
            stat: Bases::VAL,
            ..Val::default()
        };
        assert_eq!(a.join(&a), a);
        assert_eq!(a.join(&b).rows, b.join(&a).rows);
        assert_eq!(a.join(&b).stat, Bases::VAL);
        assert_eq!(Val::default().join(&a), a);
    }

    #[test]
    fn fields_flatten_when_joined_with_an_opaque_value() {
        let t = Val::tuple(vec![
            Val::data(Base::Train),
            Val {
                est: EstKinds::PRE,
                ..Val::default()
            },
        ]);
        assert_eq!(t.field(Some(&Key::Idx(1))).est, EstKinds::PRE);
        assert_eq!(t.field(Some(&Key::Idx(-2))).rows, Val::data(Base::Train).rows);
        let j = t.join(&Val::default());
        assert!(j.fields.is_none());
        assert_eq!(j.est, EstKinds::PRE);
    }
}
