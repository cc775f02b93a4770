//! Benchmark of the event log (run: `cargo bench --bench log`).
//!
//! 1. append: 1,000,000 small events committed in batches of 10,000
//!    (building events, hashing ids, Parquet encoding, object put, publish);
//! 2. query: a GROUP BY over a 10,000,000-event log through `ml2b::query`
//!    (including registering the log, which re-hashes every segment);
//! 3. planning: finding which of 1,000 planned units are already committed,
//!    on logs of 1,000,000 and 10,000,000 events.
//!
//! Sizes can be scaled down with `ML2B_BENCH_SCALE=0.1`. Goals (2 cores):
//! append ≥ 500,000 events/s, query ≤ 2 s.

// A test or bench binary prints what it measured, and its helpers are `pub` for its modules.
#![allow(clippy::print_stdout, clippy::print_stderr, unreachable_pub)]

use std::time::Instant;

use ml2b::log::{Event, EventBody, Provenance, StageLog, View};
use ml2b::store::{Hash, KeyHasher, Store};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Small {
    model: String,
    language: String,
    score: f64,
    ok: bool,
}

impl EventBody for Small {
    const STAGE: &'static str = "bench";
    const SCHEMA_VERSION: u32 = 1;
}

const MODELS: [&str; 4] = ["gpt-4o", "qwen2.5-coder", "llama-3.1", "reference"];
const LANGS: [&str; 14] = [
    "en", "fr", "es", "it", "zh", "ja", "ru", "pl", "tr", "ar", "uk", "ro", "kk", "be",
];

fn event(i: u64, provenance: &Provenance) -> Event<Small> {
    let key = KeyHasher::new("bench").u64(i).finish();
    let body = Small {
        model: MODELS[(i % 4) as usize].to_string(),
        language: LANGS[(i % 14) as usize].to_string(),
        score: (i % 1000) as f64 / 1000.0,
        ok: !i.is_multiple_of(7),
    };
    Event::new(key, vec![], body, provenance.clone()).unwrap()
}

/// Appends `n` events; returns (total seconds, seconds spent building events).
fn append(store: &Store, start: u64, n: u64, batch: u64) -> (f64, f64) {
    let log = StageLog::new(store, Small::STAGE).unwrap();
    let mut view: View = log.view().unwrap();
    let provenance = Provenance::now(0);
    let t = Instant::now();
    let mut building = 0.0;
    let mut i = start;
    while i < start + n {
        let b = Instant::now();
        let events: Vec<_> = (i..(i + batch).min(start + n))
            .map(|j| event(j, &provenance))
            .collect();
        building += b.elapsed().as_secs_f64();
        log.commit(&mut view, events, None).unwrap();
        i += batch;
    }
    (t.elapsed().as_secs_f64(), building)
}

fn query(store: &Store, sql: &str) -> (f64, usize) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let t = Instant::now();
    let rows = rt.block_on(async {
        let ctx = ml2b::query::session(store).await.unwrap();
        let (_, batches) = ml2b::query::run(&ctx, sql).await.unwrap();
        batches.iter().map(|b| b.num_rows()).sum()
    });
    (t.elapsed().as_secs_f64(), rows)
}

/// Takes a writer's view and checks 1,000 planned units against it (half new).
fn planning(store: &Store, total: u64) -> f64 {
    let log = StageLog::new(store, Small::STAGE).unwrap();
    let t = Instant::now();
    let view = log.view().unwrap();
    let planned: Vec<Hash> = (total - 500..total + 500)
        .map(|i| KeyHasher::new("bench").u64(i).finish())
        .collect();
    let new = planned.iter().filter(|k| !view.contains(k)).count();
    assert_eq!(new, 500);
    t.elapsed().as_secs_f64()
}

fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return; // `cargo test --benches` runs nothing here
    }
    let scale: f64 = std::env::var("ML2B_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let n1 = (1_000_000.0 * scale) as u64;
    let n10 = (10_000_000.0 * scale) as u64;
    let dir =
        tempfile::tempdir_in(std::env::var("ML2B_BENCH_DIR").unwrap_or_else(|_| "/var/tmp".into())).unwrap();
    let store = Store::open(dir.path().join("store"));

    let (secs, building) = append(&store, 0, n1, 10_000);
    println!(
        "append: {n1} events in {secs:.2} s = {:.0} events/s ({building:.2} s building events, {:.2} s committing)",
        n1 as f64 / secs,
        secs - building
    );
    println!(
        "planning 1000 units over {n1} committed, no index yet: {:.3} s",
        planning(&store, n1)
    );
    println!(
        "planning 1000 units over {n1} committed, indexed: {:.3} s",
        planning(&store, n1)
    );

    let (secs, _) = append(&store, n1, n10 - n1, 100_000);
    println!(
        "append (filling to {n10}, batches of 100,000): {:.0} events/s",
        (n10 - n1) as f64 / secs
    );
    let sql = "SELECT model, language, count(*) AS runs, avg(score) AS mean, sum(CAST(ok AS INT)) AS passed \
               FROM bench GROUP BY model, language ORDER BY model, language";
    let (secs, rows) = query(&store, sql);
    println!("query: GROUP BY over {n10} events in {secs:.2} s ({rows} groups)");
    let (secs, _) = query(&store, sql);
    println!("query (warm cache): {secs:.2} s");
    println!(
        "planning 1000 units over {n10} committed, 9/10 past the index: {:.3} s",
        planning(&store, n10)
    );
    println!(
        "planning 1000 units over {n10} committed, indexed: {:.3} s",
        planning(&store, n10)
    );
    append(&store, n10, 10_000, 10_000);
    let n = n10 + 10_000;
    println!(
        "planning 1000 units over {n} committed, 10,000 past the index: {:.3} s",
        planning(&store, n)
    );
    let bytes: u64 = walkdir::WalkDir::new(store.log_root())
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    println!("log size: {:.1} MB", bytes as f64 / 1e6);
}
