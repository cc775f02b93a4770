//! Test-only access to `tests/fixtures/text_stats.json`, the expected values
//! written by `tests/reference/text_stats.py` from sacreBLEU, irrCAC and scipy.
//!
//! Invariant: numbers are compared with [`assert_close`]: |got − want| ≤
//! 1e-9·max(1, |want|), i.e. absolute below 1 and relative above (BLEU and
//! chrF are on 0–100); JSON `null` stands for NaN.

use std::sync::OnceLock;

use serde_json::Value;

/// Tolerance of every comparison with a reference value.
pub(super) const TOLERANCE: f64 = 1e-9;

/// The parsed fixture.
pub(super) fn fixture() -> &'static Value {
    static FIXTURE: OnceLock<Value> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        serde_json::from_str(include_str!("../../tests/fixtures/text_stats.json"))
            .expect("fixture is valid JSON")
    })
}

/// The cases of one section of the fixture.
pub(super) fn cases(section: &str) -> &'static [Value] {
    fixture()[section].as_array().expect("fixture section is a list")
}

/// A reference corpus: hypotheses and reference streams.
pub(super) fn corpus(name: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let c = &fixture()["corpora"][name];
    (
        strings(&c["hyps"]),
        c["refs"].as_array().unwrap().iter().map(strings).collect(),
    )
}

/// A JSON list of strings.
pub(super) fn strings(v: &Value) -> Vec<String> {
    let items = v.as_array().expect("a list of strings");
    items
        .iter()
        .map(|s| s.as_str().expect("a string").to_owned())
        .collect()
}

/// A JSON number, `null` meaning NaN.
pub(super) fn num(v: &Value) -> f64 {
    if v.is_null() {
        f64::NAN
    } else {
        v.as_f64().expect("a number")
    }
}

/// Whether `got` matches `want` within [`TOLERANCE`] (NaN matches NaN).
pub(super) fn close(got: f64, want: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    got == want || (got - want).abs() <= TOLERANCE * want.abs().max(1.0)
}

/// Asserts [`close`] and returns the absolute difference.
pub(super) fn assert_close(got: f64, want: &Value, what: &dyn std::fmt::Display) -> f64 {
    let want = num(want);
    assert!(close(got, want), "{what}: got {got}, want {want}");
    if got == want || want.is_nan() {
        0.0
    } else {
        (got - want).abs()
    }
}
