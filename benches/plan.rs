//! Benchmark of a cluster plan's cost (run: `cargo bench --bench plan`): what
//! `--engine slurm` adds to planning, for 100,000 planned units.
//!
//! 1. pending: which of the 100,000 planned unit keys a log of 50,000 committed units
//!    lacks (the view and the filter `Pipeline::execute_pending` applies);
//! 2. freeze: the plan of 100,000 units (none committed yet: `Plan::execute`), encoded
//!    and stored as an object (`Plan::put`: JSON, BLAKE3, temp file, fsync, rename);
//! 3. read: one worker reading the plan back (`Plan::get`: read, re-hash, decode);
//! 4. shard: one worker's shard of 1,000 (`Shard::holds` over every unit), and every
//!    shard's size (`Plan::shard_len` × 1,000) with the split into arrays.
//!
//! What the execute stage's own plan costs (reading the generate log) is the same as a
//! local run's and is not measured here. Sizes scale with `ML2B_BENCH_SCALE=0.1`.

// A test or bench binary prints what it measured, and its helpers are `pub` for its modules.
#![allow(clippy::print_stdout, clippy::print_stderr, unreachable_pub)]

use std::time::Instant;

use ml2b::cluster::Plan;
use ml2b::cluster::arrays::spans;
use ml2b::config::{BackendKind, EngineSettings, ExecuteSettings, SandboxSettings};
use ml2b::log::{Event, EventBody, Provenance, StageLog};
use ml2b::stages::Shard;
use ml2b::store::{Hash, KeyHasher, Store};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Ran {
    ok: bool,
}

impl EventBody for Ran {
    const STAGE: &'static str = "execute";
    const SCHEMA_VERSION: u32 = 1;
}

fn key(i: u64) -> Hash {
    KeyHasher::new("bench-unit").u64(i).finish()
}

/// Commits units `0..n` to the log, in batches of 10,000.
fn commit(store: &Store, n: u64) {
    let log = StageLog::new(store, Ran::STAGE).unwrap();
    let mut view = log.view().unwrap();
    let provenance = Provenance::now(0);
    for start in (0..n).step_by(10_000) {
        let events = (start..(start + 10_000).min(n))
            .map(|i| Event::new(key(i), vec![], Ran { ok: true }, provenance.clone()).unwrap())
            .collect();
        log.commit(&mut view, events, None).unwrap();
    }
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed().as_secs_f64())
}

fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return; // `cargo test --benches` runs nothing here
    }
    let scale: f64 = std::env::var("ML2B_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let planned = (100_000.0 * scale) as u64;
    let shards = 1000u32;
    let dir =
        tempfile::tempdir_in(std::env::var("ML2B_BENCH_DIR").unwrap_or_else(|_| "/var/tmp".into())).unwrap();
    let store = Store::open(dir.path().join("store"));
    commit(&store, planned / 2);

    let (pending, secs) = timed(|| {
        let view = StageLog::new(&store, Ran::STAGE).unwrap().view().unwrap();
        (0..planned)
            .map(key)
            .filter(|k| !view.contains(k))
            .collect::<Vec<_>>()
    });
    println!(
        "pending: {} of {planned} planned units uncommitted, found in {secs:.3} s",
        pending.len()
    );
    let settings = ExecuteSettings {
        root: dir.path().to_path_buf(),
        sandbox: SandboxSettings::of(BackendKind::Local, 600, 8 << 30, 2),
        since: None,
        engine: EngineSettings::Local,
        shard: None,
        stop: None,
    };
    // The plan of a selection none of whose units is committed yet: all 100,000.
    drop(pending);
    let units = planned as usize;
    let ((plan, hash), secs) = timed(|| {
        let plan = Plan::execute(&settings, (0..planned).map(key).collect(), shards);
        let hash = plan.put(&store).unwrap();
        (plan, hash)
    });
    let bytes = store.objects().get(&hash).unwrap().len();
    println!("freeze: a plan of {units} units ({bytes} bytes) built and stored in {secs:.3} s");
    let (read, secs) = timed(|| Plan::get(&store, &hash).unwrap());
    assert_eq!(read, plan);
    println!("read: one worker reads the plan back in {secs:.3} s");
    let (mine, secs) = timed(|| {
        let shard = Shard {
            index: 7,
            count: shards,
        };
        read.units.iter().filter(|k| shard.holds(k)).count()
    });
    println!("shard: one worker's shard ({mine} units of {shards} shards) in {secs:.4} s");
    let (total, secs) = timed(|| (0..shards).map(|i| read.shard_len(i)).sum::<usize>());
    assert_eq!(total, units);
    let arrays = spans(shards, 1001).len();
    println!("shard: all {shards} shards' sizes in {secs:.3} s; {arrays} array(s) at MaxArraySize 1001");
}
