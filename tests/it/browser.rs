//! Renders report pages in headless Chromium: a screenshot of a full page, and the DOM of
//! the page `ml2b report` writes.
//!
//! These are the only tests that see the report as a browser does: they fail if an `<img>`
//! does not load, if an SVG is malformed, if the page renders blank, or if a heading, the
//! order of plots and tables or a collapsed table is not what the reader gets. Chromium is
//! found via `ML2B_CHROMIUM` or on `PATH` (`chromium-headless-shell`, `chromium`,
//! `chromium-browser`); without it the tests fail, because a skipped check proves nothing.
//! Install on Debian/Ubuntu with `apt-get install -y chromium-headless-shell`.
//!
//! [`chromium`], [`screenshot`] and [`dump_dom`] are shared with the other modules of this
//! test binary that look at pages in a browser.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
use arrow::record_batch::RecordBatch;
use ml2b::report::{
    Section, Style, Table, bars_svg, csv, heatmap_svg, index_html, latex, markdown, profile_svg,
};

const WIDTH: u32 = 1280;
const HEIGHT: u32 = 2000;
const CANDIDATES: [&str; 3] = ["chromium-headless-shell", "chromium", "chromium-browser"];
/// How long one Chromium run may take before it is killed.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(90);

/// Viridis' dark end (heat map), Tableau blue (first series) and the missing-cell grey.
const EXPECTED_COLOURS: [(&str, [u8; 3]); 3] = [
    ("heat map low end", [0x44, 0x01, 0x54]),
    ("first series", [0x4e, 0x79, 0xa7]),
    ("missing cell", [0xd0, 0xd0, 0xd0]),
];

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn models() -> Vec<String> {
    strings(&["gpt-4o", "claude", "qwen-7b"])
}

fn heatmap() -> String {
    let tasks = strings(&[
        "titanic",
        "house-prices",
        "spaceship",
        "digit-recognizer",
        "nlp-disaster",
    ]);
    let languages = strings(&["Python", "Rust", "Kazakh", "Russian", "Arabic", "Japanese"]);
    let values: Vec<Vec<Option<f64>>> = (0..tasks.len())
        .map(|t| {
            (0..languages.len())
                .map(|l| ((t + l) % 7 != 3).then(|| ((t * 6 + l) as f64 * 0.037) % 1.0))
                .collect()
        })
        .collect();
    heatmap_svg("r_p by task × language", &tasks, &languages, &values, (0.0, 1.0)).unwrap()
}

fn profile() -> String {
    let curves: Vec<(String, Vec<f64>)> = models()
        .into_iter()
        .enumerate()
        .map(|(m, name)| {
            let cells = (0..30).map(|c| ((c * 7 + m * 3) % 30) as f64 / (30.0 + 10.0 * m as f64));
            (name, cells.collect())
        })
        .collect();
    profile_svg("Attainment profile", &curves, 1.0).unwrap()
}

fn bars() -> String {
    let tiers = strings(&["high", "medium", "low"]);
    let series = vec![
        (models()[0].clone(), vec![Some(0.82), Some(0.61), Some(0.33)]),
        (models()[1].clone(), vec![Some(0.78), Some(0.66), Some(0.41)]),
        (models()[2].clone(), vec![Some(0.52), None, Some(0.08)]),
    ];
    bars_svg("Pass rate by resource tier", &tiers, &series, "pass rate").unwrap()
}

fn table() -> Table {
    let model: ArrayRef = Arc::new(StringArray::from(models()));
    let rate: ArrayRef = Arc::new(Float64Array::from(vec![Some(0.612_5), Some(0.655), None]));
    let tasks: ArrayRef = Arc::new(Int64Array::from(vec![120, 120, 0]));
    let batch =
        RecordBatch::try_from_iter([("model", model), ("pass_rate", rate), ("tasks", tasks)]).unwrap();
    Table {
        name: "pass_rate".into(),
        title: "Pass rate by model".into(),
        description: "Share of tasks whose submission ran & scored.".into(),
        batch,
    }
}

/// Writes the report (three plots, one table in every format, `index.html`) into `dir`.
fn write_report(dir: &Path) -> PathBuf {
    let table = table();
    let style = Style::default();
    let files = [
        ("heatmap.svg", heatmap()),
        ("profile.svg", profile()),
        ("bars.svg", bars()),
        ("pass_rate.md", markdown(&table, style).unwrap()),
        ("pass_rate.csv", csv(&table).unwrap()),
        ("pass_rate.tex", latex(&table, style).unwrap()),
    ];
    for (name, contents) in files {
        std::fs::write(dir.join(name), contents).unwrap();
    }
    let plot = |heading: &str, svg: &str| Section {
        heading: heading.into(),
        svg: Some(svg.into()),
        ..Section::default()
    };
    let sections = [
        plot("Heat map", "heatmap.svg"),
        plot("Performance profile", "profile.svg"),
        plot("Resource tiers", "bars.svg"),
        Section::for_table(&table, None, style).unwrap(),
    ];
    let index = dir.join("index.html");
    std::fs::write(&index, index_html("ml2b report", &sections).unwrap()).unwrap();
    index
}

/// `ML2B_CHROMIUM`, else the first candidate found on `PATH`.
pub(crate) fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("ML2B_CHROMIUM") {
        return PathBuf::from(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    CANDIDATES
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!(
                "no Chromium found: set ML2B_CHROMIUM or put one of {CANDIDATES:?} on PATH \
                 (Debian/Ubuntu: apt-get install -y chromium-headless-shell)"
            )
        })
}

/// `page` as a URL: a URL (`http://…`, `file://…`) as is, a file path as `file://`.
fn url(page: &str) -> String {
    if page.contains("://") {
        page.to_string()
    } else {
        format!("file://{}", Path::new(page).display())
    }
}

/// Headless Chromium with its own `profile`, so runs in parallel do not share one.
fn headless(browser: &Path, profile: &Path) -> Command {
    let mut cmd = Command::new(browser);
    cmd.args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

/// Runs `cmd` to the end, killing it past [`CHROMIUM_TIMEOUT`]. Its output is read while it
/// runs: a DOM larger than the pipe's buffer would otherwise block it until the timeout.
fn finish(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).map(|_| bytes)
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > CHROMIUM_TIMEOUT {
            child.kill().unwrap();
            panic!("{cmd:?} took over {CHROMIUM_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let exited = started.elapsed();
    let output = Output {
        status: child.wait().unwrap(),
        stdout: stdout.join().unwrap().unwrap(),
        stderr: stderr.join().unwrap().unwrap(),
    };
    eprintln!(
        "chromium took {exited:?} (exit) / {:?} (output closed)",
        started.elapsed()
    );
    assert!(
        output.status.success(),
        "{cmd:?} failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Screenshots `page` (a URL or a file path) at WIDTH × HEIGHT into `png`.
pub(crate) fn screenshot(browser: &Path, page: &str, png: &Path, profile: &Path) {
    let mut cmd = headless(browser, profile);
    cmd.args(["--hide-scrollbars", "--force-device-scale-factor=1"])
        .arg(format!("--window-size={WIDTH},{HEIGHT}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(url(page));
    finish(cmd);
    assert!(png.is_file(), "{} wrote no {}", browser.display(), png.display());
}

/// The DOM of `page` (a URL or a file path) once loaded, serialized as HTML.
pub(crate) fn dump_dom(browser: &Path, page: &str, profile: &Path) -> String {
    let mut cmd = headless(browser, profile);
    cmd.arg("--dump-dom").arg(url(page));
    String::from_utf8(finish(cmd).stdout).expect("Chromium dumps UTF-8")
}

/// The screenshot as (width, height, RGB pixels).
fn decode(png: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = std::io::BufReader::new(std::fs::File::open(png).unwrap());
    let mut decoder = png::Decoder::new(file);
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|p| match channels {
            1 | 2 => [p[0]; 3],
            _ => [p[0], p[1], p[2]],
        })
        .collect();
    (info.width, info.height, pixels)
}

fn near(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 8)
}

#[test]
fn report_page_renders_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let page = write_report(dir.path());
    let png = dir.path().join("screenshot.png");
    let page = page.to_str().unwrap();
    screenshot(&chromium(), page, &png, &dir.path().join("chromium-profile"));

    let (width, height, pixels) = decode(&png);
    assert_eq!((width, height), (WIDTH, HEIGHT));
    let distinct: HashSet<[u8; 3]> = pixels.iter().copied().collect();
    assert!(distinct.len() > 200, "only {} distinct colours", distinct.len());
    let inked = pixels.iter().filter(|p| **p != [255; 3]).count();
    let share = inked as f64 / pixels.len() as f64;
    assert!(
        share > 0.05,
        "only {:.1}% of the page is not white",
        share * 100.0
    );
    for (what, colour) in EXPECTED_COLOURS {
        let count = pixels.iter().filter(|p| near(**p, colour)).count();
        assert!(
            count > 200,
            "{what} colour {colour:?} on only {count} pixels: plot not drawn?"
        );
    }
}

/// `ml2b report` of the analyze fixture, written into `dir`: its `index.html`.
fn real_report(dir: &Path) -> PathBuf {
    let ws = crate::analyze::fixture();
    let out = ws
        .ml2b()
        .args(["report", "--root", env!("CARGO_MANIFEST_DIR"), "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir.join("index.html")
}

/// The headings the report of the analyze fixture must show, in page order: its plots
/// (models m1 and m2, both modular), then the paper's layout of AUP and every table of
/// the catalog, each under its full title.
fn expected_headings() -> Vec<String> {
    let plots = [
        "Performance profiles",
        "Pass rate by resource tier",
        "Heat map: m1 (modular)",
        "Heat map: m2 (modular)",
    ];
    let tables = ml2b::query::catalog::TABLES.iter().map(|q| q.title);
    plots
        .into_iter()
        .chain(["AUP / PR per model and language"])
        .chain(tables)
        .map(String::from)
        .collect()
}

/// Text as a browser serializes it back to plain text.
pub(crate) fn unescape(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// Every piece of `text` between `open` and the next `close`, in order.
pub(crate) fn between<'a>(text: &'a str, open: &str, close: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(open) {
        rest = &rest[start + open.len()..];
        let end = rest
            .find(close)
            .unwrap_or_else(|| panic!("{open} without {close}"));
        out.push(&rest[..end]);
        rest = &rest[end + close.len()..];
    }
    out
}

/// The page's sections as (anchor, heading, the section's HTML), in page order.
fn sections_of(dom: &str) -> Vec<(String, String, &str)> {
    between(dom, "<section id=\"", "</section>")
        .into_iter()
        .map(|section| {
            let (id, body) = section.split_once('"').unwrap();
            let heading = between(body, "<h2>", "</h2>");
            assert_eq!(heading.len(), 1, "section {id}: {heading:?}");
            (id.to_string(), unescape(heading[0]), body)
        })
        .collect()
}

#[test]
fn the_report_shows_full_headings_plots_first_and_long_tables_collapsed() {
    let dir = tempfile::tempdir().unwrap();
    let page = real_report(&dir.path().join("report"));
    let dom = dump_dom(
        &chromium(),
        page.to_str().unwrap(),
        &dir.path().join("chromium-profile"),
    );

    let sections = sections_of(&dom);
    let headings: Vec<String> = sections.iter().map(|s| s.1.clone()).collect();
    assert_eq!(headings, expected_headings(), "the page's <h2>s");
    let nav = between(&dom, "<nav>", "</nav>");
    assert_eq!(nav.len(), 1, "{dom}");
    let toc: Vec<(String, String)> = between(nav[0], "<a href=\"#", "</a>")
        .into_iter()
        .map(|a| {
            let (anchor, text) = a.split_once("\">").unwrap();
            (anchor.to_string(), unescape(text))
        })
        .collect();
    let targets: Vec<(String, String)> = sections.iter().map(|s| (s.0.clone(), s.1.clone())).collect();
    assert_eq!(
        toc, targets,
        "every entry of the contents names its section in full"
    );

    let is_plot = |body: &str| body.contains("<img ");
    let plots = sections.iter().take_while(|s| is_plot(s.2)).count();
    assert_eq!(plots, 4, "the plots come first: {headings:?}");
    assert!(
        sections[plots..]
            .iter()
            .all(|s| !is_plot(s.2) && s.2.contains("<table"))
    );

    for (_, heading, body) in &sections[plots..] {
        let rows = body.matches("<tr>").count() - 1;
        let collapsed = body.contains("<details>") && !body.contains("<details open");
        assert_eq!(
            collapsed,
            rows > ml2b::report::COLLAPSE_ROWS,
            "{heading}: {rows} rows"
        );
        if collapsed {
            let details = between(body, "<details>", "</details>")[0];
            assert!(
                details.contains("<table"),
                "{heading}: the table is not in <details>"
            );
            assert!(details.contains(&format!("<summary>Show the table ({rows} rows)</summary>")));
        }
    }
    let matrix = ml2b::query::catalog::table("rp_matrix").unwrap().title;
    let long = sections.iter().find(|s| s.1 == matrix).unwrap();
    assert!(
        long.2.contains("<details>"),
        "rp_matrix (18 rows) is not collapsed"
    );
}
