//! Agreement coefficients against irrCAC (fixture section `agreement`).

use serde_json::Value;

use super::*;
use crate::metrics::reference_fixture::{assert_close, cases, strings};

fn rows(v: &Value) -> Vec<Vec<String>> {
    v.as_array().unwrap().iter().map(strings).collect()
}

fn check(got: Option<&Coefficient>, want: &Value, what: &str) -> f64 {
    if want.get("error").is_some() {
        assert!(got.is_none(), "{what}: irrCAC raises, got {got:?}");
        return 0.0;
    }
    let got = got.unwrap_or_else(|| panic!("{what}: undefined, irrCAC gives {want}"));
    let fields = [
        (got.coefficient, &want["coefficient"], "coefficient"),
        (got.pa, &want["pa"], "pa"),
        (got.pe, &want["pe"], "pe"),
        (got.se, &want["se"], "se"),
        (got.ci[0], &want["ci"][0], "ci lower"),
        (got.ci[1], &want["ci"][1], "ci upper"),
    ];
    let diff = |(g, w, field): (f64, &Value, &str)| assert_close(g, w, &format!("{what} {field}"));
    fields.into_iter().map(diff).fold(0.0, f64::max)
}

#[test]
fn coefficients_match_irrcac() {
    let mut max_diff: f64 = 0.0;
    let all = cases("agreement");
    for case in all {
        let categories = case["categories"]
            .as_array()
            .map(|_| strings(&case["categories"]));
        let ratings = Ratings::parse(&rows(&case["ratings"]), categories.as_deref()).unwrap();
        let weights: Weights = case["weights"].as_str().unwrap().parse().unwrap();
        let what = format!("{} {weights}", case["name"]);
        let got = agreement(&ratings, weights).unwrap();
        let want = &case["expected"];
        assert_eq!(
            ratings.categories().len(),
            want["categories"].as_array().unwrap().len(),
            "{what}"
        );
        max_diff = max_diff.max(check(Some(&got.ac1), &want["gwet"], &format!("{what} gwet")));
        max_diff = max_diff.max(check(
            got.fleiss.as_ref(),
            &want["fleiss"],
            &format!("{what} fleiss"),
        ));
        let kripp = got.krippendorff.as_ref();
        max_diff = max_diff.max(check(
            kripp,
            &want["krippendorff"],
            &format!("{what} krippendorff"),
        ));
        let bp = Some(&got.brennan_prediger);
        max_diff = max_diff.max(check(bp, &want["brennan_prediger"], &format!("{what} bp")));
        assert_eq!(
            got.cohen.is_some(),
            want.get("cohen").is_some(),
            "{what} cohen presence"
        );
        if let Some(cohen) = want.get("cohen") {
            max_diff = max_diff.max(check(got.cohen.as_ref(), cohen, &format!("{what} cohen")));
        }
    }
    assert!(all.len() >= 100);
    eprintln!("agreement: {} cases, max abs diff {max_diff:e}", all.len());
}

#[test]
fn unknown_category_is_an_error() {
    let rows = vec![vec!["1".to_owned(), "7".to_owned()]];
    let scale = ["1".to_owned(), "2".to_owned()];
    let err = Ratings::parse(&rows, Some(&scale)).unwrap_err();
    assert_eq!((err.row, err.rater, err.value.as_str()), (0, 1, "7"));
}

#[test]
fn one_subject_is_an_error() {
    let ratings = Ratings::parse(&[vec!["1", "1"]], None).unwrap();
    assert_eq!(
        agreement(&ratings, Weights::Identity),
        Err(AgreementError::TooFewSubjects(1))
    );
}
