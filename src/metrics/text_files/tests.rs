//! File-level API: results equal the in-memory functions (and so the
//! fixture), and bad input names the file and line.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::metrics::reference_fixture::{assert_close, cases, corpus};

/// A fresh file under the system temp dir with `content`.
fn temp_file(content: &[u8]) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("textstats-tests-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("f{}.txt", NEXT.fetch_add(1, Ordering::Relaxed)));
    fs::write(&path, content).unwrap();
    path
}

fn lines_file(lines: &[String]) -> PathBuf {
    temp_file(format!("{}\n", lines.join("\n")).as_bytes())
}

#[test]
fn corpus_report_matches_fixture() {
    let (hyps, refs) = corpus("multilingual_2refs");
    let ref_files: Vec<PathBuf> = refs.iter().map(|r| lines_file(r)).collect();
    let report = bleu_files(
        &lines_file(&hyps),
        &ref_files,
        &BleuOptions::default(),
        false,
        true,
    )
    .unwrap();
    let BleuReport::Corpus {
        bleu,
        chrf: Some(chrf),
    } = &report
    else {
        panic!("corpus report")
    };
    let is_default_case = |c: &&serde_json::Value, section: &str| {
        c["corpus"] == "multilingual_2refs" && c["options"] == cases(section)[0]["options"]
    };
    let want = cases("bleu_corpus")
        .iter()
        .find(|c| is_default_case(c, "bleu_corpus"))
        .unwrap();
    assert_close(bleu.score.score, &want["expected"]["score"], &"bleu");
    let want = cases("chrf_corpus")
        .iter()
        .find(|c| is_default_case(c, "chrf_corpus"))
        .unwrap();
    assert_close(chrf.score.score, &want["score"], &"chrf");
    let json = serde_json::to_value(&report).unwrap();
    for key in [
        "score",
        "counts",
        "totals",
        "precisions",
        "bp",
        "sys_len",
        "ref_len",
        "signature",
    ] {
        assert!(json["bleu"].get(key).is_some(), "missing bleu.{key}");
    }
    assert!(json["chrf"]["score"].is_f64());
    assert!(report.to_string().starts_with("BLEU = "));
}

#[test]
fn sentence_report_is_in_input_order() {
    let (hyps, refs) = corpus("multilingual");
    let opts = BleuOptions::sentence();
    let report = bleu_files(&lines_file(&hyps), &[lines_file(&refs[0])], &opts, true, true).unwrap();
    let BleuReport::Sentences { sentences, .. } = report else {
        panic!("sentence report")
    };
    assert_eq!(sentences.len(), hyps.len());
    for (i, s) in sentences.iter().enumerate() {
        let want = crate::metrics::bleu::sentence_bleu(&hyps[i], &[&refs[0][i]], &opts);
        assert_eq!(s.bleu, want);
        assert!(s.chrf.is_some());
    }
}

#[test]
fn bad_segment_files_name_file_and_line() {
    let hyp = temp_file(b"a b\nc d\n");
    let short = temp_file(b"a b\n");
    let err = bleu_files(
        &hyp,
        std::slice::from_ref(&short),
        &BleuOptions::default(),
        false,
        false,
    )
    .unwrap_err();
    assert!(err.is_bad_input());
    assert!(err.to_string().contains(&short.display().to_string()), "{err}");
    let bad = temp_file(b"ok\nfine\nbad \xff byte\n");
    let err = read_segments(&bad).unwrap_err();
    assert!(
        matches!(err, TextStatsError::InvalidUtf8 { line: 3, .. }),
        "{err}"
    );
    assert!(matches!(
        read_segments(&temp_file(b"")),
        Err(TextStatsError::EmptyFile { .. })
    ));
    let missing = PathBuf::from("/nonexistent/textstats/file");
    assert!(!read_segments(&missing).unwrap_err().is_bad_input());
}

fn csv_of(rows: &[Vec<String>]) -> Vec<u8> {
    let raters: Vec<String> = (1..=rows[0].len()).map(|r| format!("rater{r}")).collect();
    let mut out = format!("subject,{}\n", raters.join(","));
    for (i, row) in rows.iter().enumerate() {
        out.push_str(&format!("s{i},{}\n", row.join(",")));
    }
    out.into_bytes()
}

#[test]
fn agreement_file_matches_fixture() {
    for case in cases("agreement")
        .iter()
        .filter(|c| c["weights"] == "quadratic")
        .take(6)
    {
        let rows: Vec<Vec<String>> = case["ratings"]
            .as_array()
            .unwrap()
            .iter()
            .map(crate::metrics::reference_fixture::strings)
            .collect();
        let categories = case["categories"]
            .as_array()
            .map(|_| crate::metrics::reference_fixture::strings(&case["categories"]));
        let report = agreement_file(
            &temp_file(&csv_of(&rows)),
            categories.as_deref(),
            Weights::Quadratic,
        )
        .unwrap();
        assert_close(
            report.agreement.ac1.coefficient,
            &case["expected"]["gwet"]["coefficient"],
            &case["name"],
        );
        let json = serde_json::to_value(&report).unwrap();
        for key in ["ac1", "fleiss", "krippendorff", "brennan_prediger"] {
            assert!(json.get(key).is_some(), "missing {key}");
        }
        assert_eq!(json.get("cohen").is_some(), rows[0].len() == 2);
        assert!(report.to_string().contains("Gwet's AC2"));
    }
}

#[test]
fn bad_csv_names_file_and_line() {
    let ragged = temp_file(b"subject,a,b\ns1,1,2\ns2,1\n");
    let err = agreement_file(&ragged, None, Weights::Identity).unwrap_err();
    assert!(
        matches!(
            err,
            TextStatsError::Ragged {
                line: 3,
                expected: 3,
                found: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains(":3:"), "{err}");
    let outside = temp_file(b"subject,a,b\ns1,1,2\ns2,1,9\n");
    let scale = ["1".to_owned(), "2".to_owned()];
    let err = agreement_file(&outside, Some(&scale), Weights::Identity).unwrap_err();
    assert!(
        matches!(&err, TextStatsError::UnknownCategory { line: 3, rater, .. } if rater == "b"),
        "{err}"
    );
    let empty = temp_file(b"");
    assert!(matches!(
        agreement_file(&empty, None, Weights::Identity),
        Err(TextStatsError::EmptyFile { .. })
    ));
    let bad = temp_file(b"subject,a,b\ns1,1,2\ns2,\xff,1\n");
    let err = agreement_file(&bad, None, Weights::Identity).unwrap_err();
    assert!(
        matches!(err, TextStatsError::InvalidUtf8 { line: 3, .. }),
        "{err}"
    );
    assert!(err.is_bad_input());
}
