//! The viewer's comparison pages as a researcher uses them, in headless Chromium driven
//! through the DevTools protocol: the leaderboard (its intervals against the `leaderboard`
//! table, its cells leading to their runs), real downloads of a table and of a filtered run
//! list, a viewer that shows events committed after it started, the report headed by its run
//! hash with a cell link landing on its runs, free-text search, and `ml2b view --bundle`
//! opened from `file://` with every link of every page resolving to a file of the bundle.
//!
//! Screenshots (`viewer-leaderboard.png`, `report-header.png`, `bundle-leaderboard.png`,
//! `bundle-run.png`) are written under `$CARGO_TARGET_TMPDIR/viewer/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::browser::{chromium, screenshot};
use crate::cdp::Browser;
use crate::common::{Workspace, ml2b};
use crate::fixture::{ROOT, THE_RUN, add_run, fixture};
use crate::viewer::{Server, http, shots};

/// The rows of the page's first `table.data` (or of `selector`), each as its cells' text.
fn table_rows(browser: &mut Browser, selector: &str) -> Vec<Vec<String>> {
    let js = format!(
        "[...document.querySelectorAll({})].map(r => [...r.cells].map(c => c.innerText.trim()))",
        json!(selector)
    );
    serde_json::from_value(browser.eval(&js)).unwrap()
}

/// Each run row of the list page shown, as column → text.
fn listed(browser: &mut Browser) -> Vec<BTreeMap<String, String>> {
    let js = "[...document.querySelectorAll('tr.run')].map(r => Object.fromEntries([...r.cells].map(c => [c.className.split(' ')[0].slice(2), c.innerText.trim()])))";
    serde_json::from_value(browser.eval(js)).unwrap()
}

fn matching(browser: &mut Browser) -> usize {
    let n = browser.eval("document.getElementById('matching').innerText");
    n.as_str().unwrap().parse().unwrap()
}

/// Screenshots `page` (a URL or a file) into the shots folder as `name`, for the closing note.
pub(crate) fn shoot(ws: &Workspace, page: &str, name: &str) {
    let shot = shots().join(name);
    screenshot(&chromium(), page, &shot, &ws.dir.path().join("chromium-shot"));
    println!("screenshot: {}", shot.display());
}

fn launch(ws: &Workspace, name: &str) -> Browser {
    Browser::launch(&ws.dir.path().join(format!("chromium-{name}")))
}

/// The `leaderboard` table as `ml2b query` computes it.
fn leaderboard(ws: &Workspace) -> Vec<Value> {
    let sql = format!("{ROOT}/queries/leaderboard.sql");
    let out = ws
        .ml2b()
        .args(["--json", "query", &sql, "--root", ROOT])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn the_leaderboard_ranks_entrants_with_intervals_and_its_cells_open_their_runs() {
    let fx = fixture();
    let server = Server::start(&fx.ws);
    let table = leaderboard(&fx.ws);
    let mut browser = launch(&fx.ws, "leaderboard");
    browser.open(&server.page("/leaderboard"));
    let heads = table_rows(&mut browser, "table.leaderboard thead tr");
    assert_eq!(
        heads[0],
        [
            "#",
            "model",
            "format",
            "seeds",
            "All",
            "high tier",
            "low tier",
            "en",
            "fr",
            "kk"
        ],
        "the fixture's languages are high (en, fr) and low (kk)"
    );
    let rows = table_rows(&mut browser, "tr.entrant");
    let overall: Vec<&Value> = table.iter().filter(|r| r["scope"] == "All").collect();
    assert_eq!(rows.len(), overall.len(), "one row per entrant: {rows:?}");
    // Ranked by AUP over all languages, each cell the mean ± 1.96·SE of the table.
    let mut ranked = overall.clone();
    ranked.sort_by(|a, b| b["aup"].as_f64().unwrap().total_cmp(&a["aup"].as_f64().unwrap()));
    for (i, (row, want)) in rows.iter().zip(&ranked).enumerate() {
        assert_eq!(row[0], (i + 1).to_string());
        assert_eq!(
            (row[1].as_str(), row[2].as_str()),
            (want["model"].as_str().unwrap(), want["format"].as_str().unwrap())
        );
        let (mean, se) = (want["aup"].as_f64().unwrap(), want["aup_se"].as_f64().unwrap());
        assert_eq!(row[3], want["seeds"].to_string());
        assert_eq!(row[4], format!("{mean:.3} ± {:.3}", 1.96 * se), "{row:?}");
    }
    // qwen-y's run that never executed is a failure in its seed, and the cell says so.
    let title = browser.eval(
        "[...document.querySelectorAll('tr.entrant')].find(r => r.cells[1].innerText == 'qwen-y').cells[4].title",
    );
    assert!(title.as_str().unwrap().contains("1 without a verdict"), "{title}");

    shoot(&fx.ws, &server.page("/leaderboard"), "viewer-leaderboard.png");

    // A cell opens the runs behind it: qwen-y in Kazakh.
    let kk = heads[0].iter().position(|h| h == "kk").expect("a Kazakh column");
    browser.click(
        &format!(
            "tr.entrant:nth-child({}) td:nth-child({}) a",
            rank_of(&rows, "qwen-y"),
            kk + 1
        ),
        true,
    );
    let runs = listed(&mut browser);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(
        runs.iter()
            .all(|r| r["model"] == "qwen-y" && r["language"] == "kk"),
        "{runs:?}"
    );

    // The other metrics.
    browser.open(&server.page("/leaderboard?metric=pass_rate"));
    let rows = table_rows(&mut browser, "tr.entrant");
    let qwen = table
        .iter()
        .find(|r| r["scope"] == "All" && r["model"] == "qwen-y")
        .unwrap();
    let row = rows.iter().find(|r| r[1] == "qwen-y").unwrap();
    assert_eq!(
        row[4],
        format!("{:.1} ± {:.1}", qwen["pass_rate"].as_f64().unwrap(), 0.0)
    );
    let bad = http(server.address(), "GET", "/leaderboard?metric=r_p", "127.0.0.1");
    assert_eq!(bad.status, 400, "{}", bad.body);
}

fn rank_of(rows: &[Vec<String>], model: &str) -> usize {
    rows.iter().position(|r| r[1] == model).unwrap() + 1
}

/// Waits for `path` to exist and stop growing (Chromium writes a download as `.crdownload`
/// and renames it when complete).
fn downloaded(path: &Path) -> Vec<u8> {
    let started = Instant::now();
    while !path.is_file() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no download at {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read(path).unwrap()
}

#[test]
fn downloads_are_the_tables_and_the_runs_the_pages_show() {
    let fx = fixture();
    let server = Server::start(&fx.ws);
    let downloads = fx.ws.dir.path().join("downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    let mut browser = launch(&fx.ws, "downloads");
    browser.browser_call(
        "Browser.setDownloadBehavior",
        json!({"behavior": "allow", "downloadPath": downloads.to_str().unwrap()}),
    );

    // A table: the file the report writes, byte for byte.
    browser.open(&server.page("/tables/aup"));
    browser.click("a[href='/tables/aup.csv']", false);
    let csv = downloaded(&downloads.join("aup.csv"));
    let report = fx.ws.dir.path().join("report");
    let out = fx
        .ws
        .ml2b()
        .args(["-q", "report", "--accept-incomplete", "--root", ROOT, "--out"])
        .arg(&report)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8(csv).unwrap(),
        std::fs::read_to_string(report.join("aup.csv")).unwrap()
    );
    browser.click("a[href='/tables/aup.json']", false);
    let rows: Value = serde_json::from_slice(&downloaded(&downloads.join("aup.json"))).unwrap();
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .all(|r| r.get("aup").is_some() && r.get("missing").is_some()),
        "{rows}"
    );

    // The run list, filtered: every run of the filter (all pages), pending ones marked.
    browser.open(&server.page("/?language=kk"));
    let shown = matching(&mut browser);
    browser.click("p.downloads a:nth-of-type(2)", false);
    let runs: Value = serde_json::from_slice(&downloaded(&downloads.join("runs.json"))).unwrap();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), shown);
    assert!(runs.iter().all(|r| r["language"] == "kk"), "{runs:?}");
    assert!(
        runs.iter()
            .any(|r| r["outcome"] == "timeout" && r["missing_stage"].is_null())
    );
    let bad = http(server.address(), "GET", "/runs.csv?page=2", "127.0.0.1");
    assert_eq!(bad.status, 400, "{}", bad.body);
    let missing = http(server.address(), "GET", "/tables/nothing.csv", "127.0.0.1");
    assert_eq!(missing.status, 404);
    let head = http(server.address(), "GET", "/tables/aup.csv", "127.0.0.1");
    assert!(
        head.headers
            .contains("content-disposition: attachment; filename=\"aup.csv\""),
        "{}",
        head.headers
    );
}

#[test]
fn free_text_finds_runs_by_name_and_by_code() {
    let fx = fixture();
    let server = Server::start(&fx.ws);
    let mut browser = launch(&fx.ws, "search");
    // The leaky run's code is the only one that fits a StandardScaler.
    browser.open(&server.page("/?q=standardscaler"));
    let runs = listed(&mut browser);
    let the_run = fx.run(THE_RUN).to_hex();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["generation_id"], the_run[..12]);
    // A model's name, in any case; the box keeps the text.
    browser.open(&server.page("/?q=QWEN"));
    let runs = listed(&mut browser);
    assert_eq!(runs.len(), 6, "{runs:?}");
    assert_eq!(
        browser.eval("document.querySelector('input[name=q]').value"),
        "QWEN"
    );
    // Wildcards are text: nothing has a literal `%`.
    browser.open(&server.page("/?q=%25"));
    assert_eq!(matching(&mut browser), 0);
}

#[test]
fn the_viewer_shows_events_committed_after_it_started() {
    let fx = fixture();
    let server = Server::start(&fx.ws);
    let mut browser = launch(&fx.ws, "live");
    browser.open(&server.url);
    let before = matching(&mut browser);
    add_run(&fx, ("zeta-z", "ames-housing", "en"), 0.77);
    std::thread::sleep(Duration::from_millis(1500));
    browser.open(&server.url);
    assert_eq!(matching(&mut browser), before + 1);
    assert!(listed(&mut browser).iter().any(|r| r["model"] == "zeta-z"));
    browser.open(&server.page("/leaderboard"));
    let rows = table_rows(&mut browser, "tr.entrant");
    assert!(
        rows.iter().any(|r| r[1] == "zeta-z" && r[4] == "0.770 ± 0.000"),
        "{rows:?}"
    );
}

#[test]
fn the_report_is_headed_by_its_run_and_a_cell_opens_its_runs_in_the_viewer() {
    let fx = fixture();
    let server = Server::start(&fx.ws);
    let report = fx.ws.dir.path().join("report");
    let out = fx
        .ws
        .ml2b()
        .args([
            "-q",
            "report",
            "--accept-incomplete",
            "--root",
            ROOT,
            "--viewer-url",
            &server.url,
            "--out",
        ])
        .arg(&report)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (log, _) = ml2b(&fx.ws, &["--json", "log"]);
    let run = log["run"].as_str().unwrap();
    let mut browser = launch(&fx.ws, "report");
    let index = report.join("index.html");
    browser.open(&format!("file://{}", index.display()));
    assert_eq!(browser.eval("document.getElementById('run').innerText"), run);
    shoot(&fx.ws, index.to_str().unwrap(), "report-header.png");

    // The first link of a Kazakh row of a table (the AUP / PR table's) leads to its runs.
    let href = browser.eval(&format!(
        "[...document.querySelectorAll('td a')].map(a => a.href).find(h => h.startsWith({}) && h.includes('language=kk'))",
        json!(server.url)
    ));
    let href = href
        .as_str()
        .expect("a cell links to the viewer's runs")
        .to_string();
    let wanted: BTreeMap<String, String> = href
        .split_once('?')
        .unwrap()
        .1
        .split('&')
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.replace("%2B", "+"))
        })
        .collect();
    browser.click(&format!("td a[href={}]", json!(href)), true);
    let runs = listed(&mut browser);
    assert!(!runs.is_empty(), "{href} lists no run");
    for r in &runs {
        for (column, value) in &wanted {
            assert_eq!(&r[column], value, "{href}: {r:?}");
        }
    }
}

/// Every file of `dir`, relative.
fn files(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(dir).unwrap().to_path_buf())
        .collect()
}

#[test]
fn the_bundle_is_the_viewer_as_files_and_opens_from_file() {
    let fx = fixture();
    let bundle = fx.ws.dir.path().join("bundle");
    let export = || {
        let mut cmd = fx.ws.ml2b();
        cmd.args(["view", "--root", ROOT, "--bundle"]).arg(&bundle);
        cmd.output().unwrap()
    };
    let out = export();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let index = bundle.join("index.html");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        index.to_str().unwrap()
    );
    // Never over a bundle.
    let again = export();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("never overwrites"));

    // Every link of every page is a file of the bundle (or a place in its page).
    let all = files(&bundle);
    for page in all.iter().filter(|p| p.extension().is_some_and(|e| e == "html")) {
        let html = std::fs::read_to_string(bundle.join(page)).unwrap();
        for link in crate::browser::between(&html, "href=\"", "\"")
            .into_iter()
            .chain(crate::browser::between(&html, "src=\"", "\""))
        {
            if link.starts_with('#') || link.starts_with("http") {
                continue;
            }
            let target = bundle
                .join(page)
                .parent()
                .unwrap()
                .join(link.split('#').next().unwrap());
            assert!(
                target.is_file(),
                "{} links to {link}, not in the bundle",
                page.display()
            );
        }
    }
    assert!(all.iter().any(|p| p.starts_with("run")), "{all:?}");
    assert!(all.iter().any(|p| p == Path::new("tables/aup.csv")));

    let mut browser = launch(&fx.ws, "bundle");
    browser.open(&format!("file://{}", index.display()));
    assert_eq!(matching(&mut browser), fx.runs.len());
    let pending: Vec<_> = listed(&mut browser)
        .into_iter()
        .filter(|r| r["outcome"] == "not_executed")
        .collect();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["r_p"], "pending");
    browser.click("header a:nth-of-type(2)", true);
    assert!(browser.text().contains("Leaderboard"));
    let at = browser.eval("location.href").as_str().unwrap().to_string();
    shoot(&fx.ws, &at, "bundle-leaderboard.png");
    // A leaderboard cell opens its runs, from files.
    browser.click("tr.entrant td.c-scope a", true);
    let runs = listed(&mut browser);
    assert!(!runs.is_empty());
    let model = runs[0]["model"].clone();
    assert!(runs.iter().all(|r| r["model"] == model));
    // And a run opens its page.
    browser.click("tr.run td.c-generation_id a", true);
    let text = browser.text();
    assert!(text.contains("Prompt") && text.contains("r_p"), "{text}");
    let at = browser.eval("location.href").as_str().unwrap().to_string();
    assert!(at.starts_with("file://"), "{at}");
    shoot(&fx.ws, &at, "bundle-run.png");
}
