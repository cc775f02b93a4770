//! Native speakers' ratings (`ml2b annotate`): a CSV imported as events of the `rating`
//! log and exported back, translate-validate's AC1 over them equal to `ml2b agreement`'s
//! over the same ratings (whose values are irrCAC's, `tests/fixtures`), ratings of a text
//! that changed no longer counting, and a bad row refused whole.

use serde_json::Value;

use crate::common::{stderr, write};
use crate::competitions::toy;

const RATINGS: &str =
    "subject,ana,bo\ntoy/title,5,5\ntoy/domain,4,4\ntoy/metric,5,4\ntoy/description,3,3\ntoy/data_card,5,5\n";

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", stderr(out)))
}

fn rated(ws: &crate::common::Workspace) -> Value {
    let out = ws
        .ml2b()
        .args(["--json", "stage", "translate-validate", "--language", "fr"])
        .output()
        .unwrap();
    json(&out)["checks"][0].clone()
}

#[test]
fn ratings_are_events_and_translate_validate_computes_ac1_over_those_of_its_texts() {
    let ws = toy();
    let file = ws.dir.path().join("fr.csv");
    write(&file, RATINGS);
    let import = |ws: &crate::common::Workspace| {
        let out = ws
            .ml2b()
            .args([
                "--json",
                "annotate",
                "import",
                file.to_str().unwrap(),
                "--language",
                "fr",
            ])
            .output()
            .unwrap();
        json(&out)
    };
    let first = import(&ws);
    assert_eq!(
        (
            first["ratings"].as_u64(),
            first["new"].as_u64(),
            first["subjects"].as_u64()
        ),
        (Some(10), Some(10), Some(5))
    );
    assert_eq!(import(&ws)["new"], 0, "the same file twice commits nothing");
    let export = ws
        .ml2b()
        .args(["annotate", "export", "--language", "fr"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&export.stdout), RATINGS);

    let check = rated(&ws);
    assert_eq!(
        (check["raters"].as_u64(), check["subjects"].as_u64()),
        (Some(2), Some(5)),
        "{check}"
    );
    let reference = ws
        .ml2b()
        .args([
            "--json",
            "agreement",
            "--ratings",
            file.to_str().unwrap(),
            "--categories",
            "1,2,3,4,5",
        ])
        .output()
        .unwrap();
    let ac1 = json(&reference)["ac1"]["coefficient"].as_f64().unwrap();
    assert!(
        (check["ac1"].as_f64().unwrap() - ac1).abs() < 1e-12,
        "{check} vs {ac1}"
    );

    // A changed translation is another text: its ratings start empty.
    let fr = ws.dir.path().join("data/toy/tasks/fr.toml");
    let text = std::fs::read_to_string(&fr).unwrap();
    std::fs::write(&fr, text.replace("Predict widgets", "Predict the widgets")).unwrap();
    let check = rated(&ws);
    assert!(check["ac1"].is_null(), "{check}");
    let export = ws
        .ml2b()
        .args(["annotate", "export", "--language", "fr"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&export.stdout), "subject\n");
}

#[test]
fn a_bad_row_is_refused_naming_its_line_and_nothing_is_committed() {
    let ws = toy();
    let file = ws.dir.path().join("fr.csv");
    for (csv, says) in [
        (
            "subject,ana\ntoy/title,5\ntoy/titel,4\n",
            "line 3: `titel` is not a field of a task text",
        ),
        (
            "subject,ana\ntoy/title,6\n",
            "line 2: `6` (ana) is not a rating of the scale 1, 2, 3, 4, 5",
        ),
        ("subject,ana\nnope/title,5\n", "line 2: no competition `nope`"),
        (
            "subject,\ntoy/title,5\n",
            "line 1: the header must be `subject` then one named column per annotator",
        ),
    ] {
        write(&file, csv);
        let out = ws
            .ml2b()
            .args(["annotate", "import", file.to_str().unwrap(), "--language", "fr"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{csv}: {err}");
        assert!(
            err.contains(file.to_str().unwrap()) && err.contains(says),
            "{csv}: {err}"
        );
    }
    assert!(
        !ws.store_path().join("log/rating").exists(),
        "nothing was committed"
    );
    let out = ws
        .ml2b()
        .args(["annotate", "export", "--language", "en"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
