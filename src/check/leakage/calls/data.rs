//! Methods of data (frames, series, arrays, groupings, windows), classified once into a
//! [`DataCall`]: statistics, group and window modes, encodings, masks, row picks, and the
//! row-wise default.
//!
//! Invariant: [`classify`] tries the kinds in the order of [`DataCall`]'s variants; a method it
//! does not know is row-wise: same rows, with the facts of its arguments absorbed, and checked
//! for validation statistics combined with data.

use tree_sitter::Node;

use super::super::catalog;
use super::super::interp::{Frame, Interp, absorb};
use super::super::value::{Konst, Mask, Mode, SplitId, Val};
use super::Args;
use crate::check::syntax::text;

/// What a method of data does, in the order [`classify`] tries the kinds.
enum DataCall {
    /// `mean`, `value_counts`…: a statistic, unless row-wise (a window, `axis=1`).
    Reduce,
    /// `apply`/`filter` after `groupby`: per-group statistics.
    GroupReduce,
    GroupBy,
    /// `rolling`, `expanding`, `ewm`, `resample`.
    Window,
    /// `groupby(...).transform(...)`: group statistics broadcast back to the rows.
    GroupTransform,
    /// `rank()` over the rows (not along a row, not in a window).
    Rank,
    AsType,
    Factorize,
    /// `append`, `_append`, `combine_first`: the receiver's rows, then the arguments'.
    Append,
    /// `isna`, `notna`…: a mask of one column's missing values.
    NaMask,
    /// `isin`, `between`, `str`: a mask keyed by its text.
    SideMask,
    /// `head(n)`, `tail(n)`: the first or last block when `n` is its length.
    HeadTail,
    Copy,
    Sample,
    /// `drop(index=idx)` with `idx` one side of a split: the other side.
    DropSplitSide(SplitId, u8),
    RowWise,
}

fn classify(recv: &Val, name: &str, args: &Args) -> DataCall {
    let grouped = recv.mode == Mode::Grouped;
    match name {
        n if catalog::is_reduction(n) => DataCall::Reduce,
        "apply" | "filter" if grouped => DataCall::GroupReduce,
        "groupby" => DataCall::GroupBy,
        n if catalog::is_window_method(n) => DataCall::Window,
        "transform" if grouped => DataCall::GroupTransform,
        "rank" if !args.axis_columns() && recv.mode != Mode::Windowed => DataCall::Rank,
        "astype" => DataCall::AsType,
        "factorize" => DataCall::Factorize,
        "append" | "_append" | "combine_first" => DataCall::Append,
        "isna" | "isnull" | "notna" | "notnull" => DataCall::NaMask,
        "isin" | "between" | "str" => DataCall::SideMask,
        "head" | "tail" => DataCall::HeadTail,
        "copy" => DataCall::Copy,
        "sample" => DataCall::Sample,
        "drop" => match args.get(0, &["index", "labels"]).and_then(|(_, idx)| idx.split) {
            Some((id, side)) => DataCall::DropSplitSide(id, side),
            None => DataCall::RowWise,
        },
        _ => DataCall::RowWise,
    }
}

impl<'t> Interp<'t> {
    /// `recv.name(args)` for a (flattened) data receiver `recv` written as `recv_node`.
    pub(super) fn data_method(
        &mut self,
        recv: Val,
        recv_node: Node<'t>,
        name: &str,
        call: Node<'t>,
        args: Args<'t>,
        f: &mut Frame<'t>,
    ) -> Val {
        if catalog::is_selection(name) && recv.train_score {
            self.selection_sink(call, std::slice::from_ref(&recv));
        }
        match classify(&recv, name, &args) {
            DataCall::Reduce => reduce(&recv, &args),
            DataCall::GroupReduce => recv.reduced(),
            DataCall::GroupBy => with_mode(&recv, Mode::Grouped),
            DataCall::Window => with_mode(&recv, Mode::Windowed),
            DataCall::GroupTransform => {
                self.fitted_in_place(call, &recv, "computes group statistics over");
                with_mode(&recv, Mode::Plain)
            }
            DataCall::Rank => {
                self.fitted_in_place(call, &recv, "ranks values over");
                recv.derived()
            }
            DataCall::AsType => self.astype(&recv, call, &args),
            DataCall::Factorize => {
                self.encoding_event(call, &recv, name);
                recv.derived()
            }
            DataCall::Append => self.row_concat(&[vec![recv], args.positional()].concat()),
            DataCall::NaMask => self.na_mask(&recv, recv_node, name),
            DataCall::SideMask => self.side_mask(&recv, recv_node, name, call, &args),
            DataCall::HeadTail => head_tail(&recv, name, &args),
            DataCall::Copy => recv,
            DataCall::Sample => recv.through((call.id() as u64, 0)),
            DataCall::DropSplitSide(id, side) => recv.through((id, 1 - side.min(1))),
            DataCall::RowWise => self.row_wise(recv, recv_node, call, &args, f),
        }
    }

    fn astype(&mut self, recv: &Val, call: Node<'t>, args: &Args<'t>) -> Val {
        if args
            .get(0, &["dtype"])
            .is_some_and(|(_, v)| v.konst == Some(Konst::Str("category".into())))
        {
            self.encoding_event(call, recv, "astype('category')");
        }
        Val {
            col: recv.col.clone(),
            ..recv.derived()
        }
    }

    /// `x.isna()` is true on one side of the split "missing in `x`", `x.notna()` on the other.
    fn na_mask(&mut self, recv: &Val, recv_node: Node<'t>, name: &str) -> Val {
        let is_na = matches!(name, "isna" | "isnull");
        let key = format!("na:{}", self.text(recv_node));
        let id = self.intern(key);
        let mask = Mask {
            side: Some((id, u8::from(!is_na))),
            marker: None,
            na: recv.col.clone().map(|c| (c, is_na)),
        };
        Val {
            mask: Some(mask),
            ..recv.derived()
        }
    }

    /// `x.isin(v)`: one side of a split keyed by the call's text, so `~` of it is the other.
    fn side_mask(
        &mut self,
        recv: &Val,
        recv_node: Node<'t>,
        name: &str,
        call: Node<'t>,
        args: &Args<'t>,
    ) -> Val {
        let key = format!(
            "{name}:{}:{}",
            self.text(recv_node),
            args.pos.first().map(|(n, _)| text(*n, self.src)).unwrap_or("")
        );
        let id = self.intern(key);
        let r = args.values().iter().fold(recv.derived(), |r, v| absorb(&r, v));
        self.check_combine(call, &[recv, &args.joined()]);
        let mask = Mask {
            side: Some((id, 0)),
            marker: None,
            na: None,
        };
        Val {
            mask: Some(mask),
            ..r
        }
    }

    /// Any other method: row-wise, and `inplace=True` changes the receiver's variable.
    fn row_wise(
        &mut self,
        recv: Val,
        recv_node: Node<'t>,
        call: Node<'t>,
        args: &Args<'t>,
        f: &mut Frame<'t>,
    ) -> Val {
        let vals = args.values();
        let mut refs: Vec<&Val> = vals.iter().collect();
        refs.push(&recv);
        self.check_combine(call, &refs);
        let start = Val {
            col: recv.col.clone(),
            ..recv.derived()
        };
        let r = vals.iter().fold(start, |r, v| absorb(&r, v));
        if args.is_set("inplace") {
            self.rebind_root(recv_node, r.clone(), f);
        }
        r
    }
}

fn reduce(recv: &Val, args: &Args) -> Val {
    if recv.mode == Mode::Windowed || args.axis_columns() {
        recv.derived()
    } else {
        recv.reduced()
    }
}

fn with_mode(recv: &Val, mode: Mode) -> Val {
    Val {
        mode,
        ..recv.derived()
    }
}

/// `full.head(len(data))` after `concat([data, X_val])`: exactly the first block's rows.
fn head_tail(recv: &Val, name: &str, args: &Args) -> Val {
    let n = args.get(0, &["n"]).map(|(_, v)| v).unwrap_or_default();
    if let (Some(segs), Some(len)) = (&recv.segs, &n.len_of) {
        let block = if name == "head" { segs.first() } else { segs.last() };
        if block == Some(len) {
            return Val {
                rows: len.clone(),
                segs: None,
                marks: Vec::new(),
                ..recv.derived()
            };
        }
    }
    recv.derived()
}
