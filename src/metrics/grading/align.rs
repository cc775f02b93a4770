//! Aligning predictions to answers by id.
//!
//! Ids are compared by value: as integers when both files store integers, an integer-valued
//! float counting as that integer (`311.0` is the id `311`, as pandas compares a float column
//! with an integer one), otherwise as text (integers in decimal, other floats as Arrow
//! writes them). Answer ids must be unique and non-empty (else the answers are unusable);
//! prediction ids must be non-empty, unique, and be exactly the answer ids. When the
//! predictions list the ids in the answers' order (the usual case) no table is built; a
//! strictly increasing answer column proves uniqueness in the same pass.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Display;
use std::hash::Hash;

use arrow::array::{Array, ArrayRef, AsArray, StringArray};
use arrow::buffer::ScalarBuffer;
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type, Int64Type};

use super::invalid::Invalid;

/// For each answer row, the prediction row with its id; `None` when they are the same rows.
pub type Order = Option<Vec<u32>>;

/// Which side of the comparison an id problem is on.
#[derive(Debug, Clone, PartialEq)]
pub enum IdFault {
    Answers(Invalid),
    Predictions(Invalid),
}

enum Ids {
    Int(ScalarBuffer<i64>),
    Text(StringArray),
}

fn null_row(array: &dyn Array) -> Option<usize> {
    array
        .logical_nulls()
        .and_then(|n| n.iter().position(|valid| !valid))
}

fn read_ids(array: &ArrayRef, column: &str) -> Result<Ids, Invalid> {
    if let Some(row) = null_row(array.as_ref()) {
        return Err(Invalid::EmptyValue {
            column: column.to_string(),
            row: row + 1,
        });
    }
    let type_err = |_| Invalid::NotALabel {
        column: column.to_string(),
        row: 1,
        value: format!("{:?}", array.data_type()),
    };
    if array.data_type().is_integer() {
        let ints = cast(array, &DataType::Int64).map_err(type_err)?;
        return Ok(Ids::Int(ints.as_primitive::<Int64Type>().values().clone()));
    }
    if array.data_type().is_floating()
        && let Some(ints) = integral_floats(array)
    {
        return Ok(Ids::Int(ints));
    }
    let text = cast(array, &DataType::Utf8).map_err(type_err)?;
    Ok(Ids::Text(text.as_string::<i32>().clone()))
}

/// A float column whose every value is an integer (within ±2^53, where floats are exact) as
/// those integers; `None` when one is not.
fn integral_floats(array: &ArrayRef) -> Option<ScalarBuffer<i64>> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    let floats = cast(array, &DataType::Float64).ok()?;
    let values = floats.as_primitive::<Float64Type>().values();
    let integral = |v: f64| v.is_finite() && v.fract() == 0.0 && v.abs() <= EXACT;
    values
        .iter()
        .all(|&v| integral(v))
        .then(|| values.iter().map(|&v| v as i64).collect())
}

fn as_text(ids: Ids) -> StringArray {
    match ids {
        Ids::Int(v) => v.iter().map(|x| Some(x.to_string())).collect(),
        Ids::Text(a) => a,
    }
}

/// Aligns prediction ids to answer ids (same length, checked by the caller).
pub fn align(answers: &ArrayRef, predictions: &ArrayRef, column: &str) -> Result<Order, IdFault> {
    let a = read_ids(answers, column).map_err(IdFault::Answers)?;
    let p = read_ids(predictions, column).map_err(IdFault::Predictions)?;
    match (a, p) {
        (Ids::Int(a), Ids::Int(p)) => align_keys(&a, &p, column),
        (a, p) => {
            let (a, p) = (as_text(a), as_text(p));
            let a: Vec<&str> = a.iter().map(|s| s.unwrap_or("")).collect();
            let p: Vec<&str> = p.iter().map(|s| s.unwrap_or("")).collect();
            align_keys(&a, &p, column)
        }
    }
}

fn align_keys<K: Copy + Ord + Hash + Display>(a: &[K], p: &[K], column: &str) -> Result<Order, IdFault> {
    let sorted_unique = a.windows(2).all(|w| w[0] < w[1]);
    if sorted_unique && a == p {
        return Ok(None);
    }
    let index = index_answers(a, column).map_err(IdFault::Answers)?;
    if a == p {
        return Ok(None);
    }
    match_predictions(&index, a, p, column)
        .map(Some)
        .map_err(IdFault::Predictions)
}

fn index_answers<K: Copy + Hash + Eq + Display>(a: &[K], column: &str) -> Result<HashMap<K, u32>, Invalid> {
    let mut index = HashMap::with_capacity(a.len());
    for (row, &id) in a.iter().enumerate() {
        if let Some(first) = index.insert(id, row as u32) {
            return Err(duplicate(column, id, first as usize, row));
        }
    }
    Ok(index)
}

fn duplicate(column: &str, id: impl Display, first: usize, second: usize) -> Invalid {
    Invalid::DuplicateId {
        column: column.to_string(),
        id: id.to_string(),
        first: first + 1,
        second: second + 1,
    }
}

fn match_predictions<K: Copy + Hash + Eq + Display>(
    index: &HashMap<K, u32>,
    a: &[K],
    p: &[K],
    column: &str,
) -> Result<Vec<u32>, Invalid> {
    let mut order = vec![u32::MAX; a.len()];
    let mut unknown = None;
    for (row, id) in p.iter().enumerate() {
        match index.get(id) {
            Some(&i) if order[i as usize] != u32::MAX => {
                return Err(duplicate(column, id, order[i as usize] as usize, row));
            }
            Some(&i) => order[i as usize] = row as u32,
            None => unknown = unknown.or(Some(row)),
        }
    }
    let missing: Vec<usize> = (0..a.len()).filter(|&i| order[i] == u32::MAX).collect();
    match missing.first() {
        None => Ok(order),
        Some(&first) => Err(Invalid::MissingIds {
            column: column.to_string(),
            count: missing.len(),
            first: a[first].to_string(),
            unknown: unknown.map(|row| p[row].to_string()),
        }),
    }
}

/// Values of a prediction column in answer order (borrowed when already in order).
pub fn gather<'a, T: Copy>(values: &'a [T], order: &Order) -> Cow<'a, [T]> {
    match order {
        None => Cow::Borrowed(values),
        Some(order) => Cow::Owned(order.iter().map(|&i| values[i as usize]).collect()),
    }
}

/// Owned values of a prediction column in answer order.
pub fn gather_owned<T: Clone>(values: Vec<T>, order: &Order) -> Vec<T> {
    match order {
        None => values,
        Some(order) => order.iter().map(|&i| values[i as usize].clone()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Float64Array, Int64Array};

    use super::*;

    #[test]
    fn integer_valued_float_ids_are_their_integers() {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![311, 312, 313]));
        let p: ArrayRef = Arc::new(Float64Array::from(vec![313.0, 311.0, 312.0]));
        assert_eq!(align(&a, &p, "id"), Ok(Some(vec![1, 2, 0])));
        assert_eq!(align(&p, &a, "id"), Ok(Some(vec![2, 0, 1])));
    }

    #[test]
    fn fractional_float_ids_compare_as_text() {
        let a: ArrayRef = Arc::new(Float64Array::from(vec![1.5, 2.0]));
        let p: ArrayRef = Arc::new(Float64Array::from(vec![1.5, 2.0]));
        assert_eq!(align(&a, &p, "id"), Ok(None));
        let ints: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
        assert!(matches!(align(&a, &ints, "id"), Err(IdFault::Predictions(_))));
    }
}
