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
    // A score changed, and changed back, is recorded both times: the latest counts.
    write(&file, RATINGS.replace("toy/title,5,5", "toy/title,4,5"));
    assert_eq!(import(&ws)["new"], 1);
    write(&file, RATINGS);
    assert_eq!(import(&ws)["new"], 1, "changed back");
    assert_eq!(import(&ws)["new"], 0);
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

/// What the two annotators enter on the page: each field of `toy`'s French text, 1–5.
const ON_THE_PAGE: [(&str, [&str; 5]); 2] = [
    ("ana", ["5", "4", "5", "3", "4"]),
    ("bo", ["5", "4", "4", "3", "2"]),
];
const FIELDS: [&str; 5] = ["title", "domain", "metric", "description", "data_card"];

/// irrCAC's AC1 of [`ON_THE_PAGE`] (`tests/reference/text_stats.py`, case `annotation_page`).
fn irrcac_ac1() -> f64 {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/text_stats.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let case = fixture["agreement"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "annotation_page" && c["weights"] == "identity")
        .expect("the annotation_page case");
    let rows: Vec<Vec<&str>> = (0..5)
        .map(|f| ON_THE_PAGE.iter().map(|(_, s)| s[f]).collect())
        .collect();
    assert_eq!(
        case["ratings"],
        serde_json::json!(rows),
        "the fixture rates what the page does"
    );
    case["expected"]["gwet"]["coefficient"].as_f64().unwrap()
}

/// A raw HTTP/1.1 POST of a form to `/rate`, with `origin` as its `Origin` header (none
/// when `None`): the status line's code and the body.
fn post(address: &str, origin: Option<&str>, form: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let origin = origin.map_or(String::new(), |o| format!("Origin: {o}\r\n"));
    write!(
        stream,
        "POST /rate HTTP/1.1\r\nHost: {address}\r\n{origin}Content-Type: application/x-www-form-urlencoded\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{form}",
        form.len()
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, text)
}

#[test]
fn two_annotators_rate_on_the_page_in_a_browser_and_a_cross_site_post_is_refused() {
    let ws = toy();
    let server = crate::viewer::Server::spawn(&ws, &["annotate", "serve", "--port", "0"]);
    let mut browser = crate::cdp::Browser::launch(&ws.dir.path().join("chromium-profile"));
    browser.open(&server.url);
    let index = browser.text();
    assert!(index.contains("toy") && index.contains("French (fr)"), "{index}");
    browser.click("a[href^='/rate']", true);
    for (annotator, scores) in ON_THE_PAGE {
        browser.open(&server.page("rate?competition=toy&language=fr"));
        browser.type_into("#annotator", annotator);
        for (field, score) in FIELDS.iter().zip(scores) {
            browser.click(&format!("input[name='{field}'][value='{score}']"), false);
        }
        browser.click("#record", true);
        let page = browser.text();
        assert!(
            page.contains(&format!("Recorded 5 rating(s) by {annotator}")),
            "{page}\n{}",
            server.messages()
        );
        let checked =
            browser.eval("[...document.querySelectorAll('input[type=radio]:checked')].map(e => e.value)");
        assert_eq!(
            checked,
            serde_json::json!(scores),
            "the page shows {annotator}'s scores"
        );
    }
    let export = |ws: &crate::common::Workspace| {
        let out = ws
            .ml2b()
            .args(["annotate", "export", "--language", "fr"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let rows: String = FIELDS
        .iter()
        .enumerate()
        .map(|(f, field)| format!("toy/{field},{},{}\n", ON_THE_PAGE[0].1[f], ON_THE_PAGE[1].1[f]))
        .collect();
    let ratings = format!("subject,ana,bo\n{rows}");
    assert_eq!(export(&ws), ratings, "ten rating events");
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("annotate");
    std::fs::create_dir_all(&shots).unwrap();
    let png = shots.join("annotate-rate.png");
    crate::browser::screenshot(
        &crate::browser::chromium(),
        &server.page("rate?competition=toy&language=fr&annotator=ana"),
        &png,
        &ws.dir.path().join("chromium-shot"),
    );
    eprintln!("screenshot: {}", png.display());
    let sources = ws
        .ml2b()
        .args([
            "query",
            "--format",
            "csv",
            "SELECT source, count(*) AS n FROM rating GROUP BY source",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&sources.stdout), "source,n\npage,10\n");

    // translate-validate's AC1 over the exact texts rated is irrCAC's.
    let check = rated(&ws);
    assert_eq!(
        (check["raters"].as_u64(), check["subjects"].as_u64()),
        (Some(2), Some(5)),
        "{check}"
    );
    let (ours, theirs) = (check["ac1"].as_f64().unwrap(), irrcac_ac1());
    assert!((ours - theirs).abs() <= 1e-9, "AC1 {ours} vs irrCAC {theirs}");

    // A page of another origin that posts the form (with the real token, as if it had
    // leaked) when its button is clicked: the browser sends it, the server refuses it.
    browser.open(&server.page("rate?competition=toy&language=fr"));
    let hidden = browser.eval(
        "Object.fromEntries([...document.querySelectorAll('input[type=hidden]')].map(e => [e.name, e.value]))",
    );
    let inputs: String = hidden
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            format!(
                "<input type=hidden name=\"{k}\" value=\"{}\">",
                v.as_str().unwrap()
            )
        })
        .collect();
    let attack = ws.dir.path().join("attack.html");
    crate::common::write(
        &attack,
        format!(
            "<!DOCTYPE html><form method=post action=\"{}rate\">{inputs}<input type=hidden name=annotator value=mallory><input type=hidden name=title value=1><button id=go>win a prize</button></form>",
            server.url
        ),
    );
    browser.open(&format!("file://{}", attack.display()));
    browser.click("#go", true);
    let refused = browser.text();
    assert!(
        refused.contains("403") && refused.contains("refused"),
        "{refused}"
    );
    assert!(
        server.messages().contains("refused POST /rate"),
        "{}",
        server.messages()
    );
    // The same by hand: another origin, no origin, or this origin without the token.
    let form = |token: &str| {
        format!(
            "token={token}&competition=toy&language=fr&english_blake3={}&text_blake3={}&annotator=mallory&title=1",
            hidden["english_blake3"].as_str().unwrap(),
            hidden["text_blake3"].as_str().unwrap()
        )
    };
    let token = hidden["token"].as_str().unwrap();
    let own = format!("http://{}", server.address());
    for (origin, token, status) in [
        (Some("http://evil.example"), token, 403),
        (None, token, 403),
        (Some(own.as_str()), "0", 403),
        (Some(own.as_str()), "", 403),
    ] {
        let (got, text) = post(server.address(), origin, &form(token));
        assert_eq!(got, status, "{origin:?}, token {token:?}: {text}");
    }
    assert_eq!(export(&ws), ratings, "nothing refused was recorded");

    // A text that changed since the page was loaded is not rated.
    let fr = ws.dir.path().join("data/toy/tasks/fr.toml");
    let text = std::fs::read_to_string(&fr).unwrap();
    std::fs::write(&fr, text.replace("Predict widgets", "Predict the widgets")).unwrap();
    let (got, text) = post(server.address(), Some(&own), &form(token));
    assert_eq!(got, 409, "{text}");
    assert!(
        text.contains("the texts changed since the page was loaded"),
        "{text}"
    );
}
