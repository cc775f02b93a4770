//! The store on S3 (`ml2b::store::s3`) against a real S3-compatible server started by the
//! test (`moto`), never a mock of the client: concurrent writers, a server that ignores
//! `If-None-Match`, damage in the bucket, kill -9 during commits, faults injected by a proxy
//! between the client and the server (409, 500 and a dropped connection after the server
//! applied a PUT), and the commands on an S3 store: `ml2b run` into S3 against a run into a
//! local store.

mod moto;
mod proxy;

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use ml2b::log::verify::{Report, verify_store};
use ml2b::log::{Event, EventBody, Provenance, StageLog, unit_key};
use ml2b::progress::NoProgress;
use ml2b::store::Store;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use self::moto::{Endpoint, Moto};
use self::proxy::{Fault, Proxy};
use crate::common::{Echo, Workspace, report_tables, run_echo};
use crate::competitions::toys_in;
use crate::log::{assert_unique_units, check_race, echo_log};
use crate::worker::{WorkerSpec, spawn_with_env};

const BUCKET: &str = "ml2b";
pub(crate) const URL: &str = "s3://ml2b/runs/a";

/// A moto server with the bucket made.
pub(crate) struct Server {
    moto: Moto,
}

impl Server {
    pub(crate) fn start() -> Self {
        Self::start_on("127.0.0.1")
    }

    /// A server listening on `host`, an address of this machine.
    pub(crate) fn start_on(host: &str) -> Self {
        let moto = Moto::start_on(host);
        moto.bucket(BUCKET);
        Self { moto }
    }

    pub(crate) fn endpoint(&self) -> Endpoint {
        self.moto.endpoint()
    }

    /// The store at [`URL`], straight on the server.
    fn store(&self) -> Store {
        self.endpoint().open(URL).unwrap()
    }

    fn flip_byte(&self, url: &Path, at: usize) {
        let key = url.to_str().unwrap().strip_prefix("s3://ml2b/").unwrap();
        self.moto.flip_byte(BUCKET, key, at);
    }
}

fn echo_event(n: u64) -> Event<Echo> {
    let key = unit_key(Echo::STAGE, Echo::SCHEMA_VERSION, &[], &n).unwrap();
    Event::new(key, vec![], Echo::of(n), Provenance::now(0)).unwrap()
}

fn verified(store: &Store) -> Report {
    let report = verify_store(store, ml2b::events::lookup_columns, &NoProgress).unwrap();
    assert!(report.ok(), "{:#?}", report.problems);
    report
}

#[test]
fn race_of_eight_writers_on_s3_loses_nothing() {
    let server = Server::start();
    let store = server.store();
    let env = server.endpoint().env();
    let units: Vec<u64> = (0..80).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(28);
    let mut planned = HashSet::new();
    let children: Vec<_> = (0..8)
        .map(|_| {
            let mut mine = units.clone();
            mine.shuffle(&mut rng);
            mine.truncate(50);
            planned.extend(mine.iter().copied());
            let spec = WorkerSpec {
                store: Path::new(URL),
                units: &mine,
                batch: 4,
                sleep_us: 50,
            };
            spawn_with_env(&spec, &env)
        })
        .collect();
    let (commits, segments, committed) = check_race(&store, children, 0, &planned);
    let report = verified(&store);
    println!(
        "s3 race: {segments} segments, {} units, {} events dropped as committed by another writer",
        committed.len(),
        commits.iter().map(|c| c.duplicates).sum::<u64>()
    );
    assert_eq!(report.stages[0].segments, segments as u64);
}

/// A stage run reads a log of 300 segments on S3 from inside its runtime's task (a view
/// makes two requests per segment, more than a task's cooperative budget), and goes on.
#[test]
fn a_long_s3_log_is_read_from_inside_a_stage_run() {
    let server = Server::start();
    let store = server.store();
    run_echo(&store, (0..300).collect(), 1);
    let again = run_echo(&store, (0..301).collect(), 1);
    assert_eq!((again.skipped, again.ran), (300, 1));
    assert_eq!(echo_log(&store).list().unwrap().len(), 301);
}

#[test]
fn a_server_that_ignores_if_none_match_is_refused_at_open() {
    let server = Server::start();
    let stripping = Proxy::start(server.moto.port, Fault::StripIfNoneMatch);
    let err = Endpoint::loopback(stripping.port)
        .open(URL)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("refusing the store s3://ml2b/runs/a") && err.contains("If-None-Match"),
        "{err}"
    );
    let store = server.store();
    assert!(
        ml2b::log::stages(&store).unwrap().is_empty(),
        "nothing was committed"
    );
    let honest = Proxy::start(server.moto.port, Fault::Pass);
    Endpoint::loopback(honest.port)
        .open(URL)
        .expect("the same server, headers intact");
}

#[test]
fn a_missing_bucket_is_named_at_open() {
    let server = Server::start();
    let err = server.endpoint().open("s3://no-such-bucket/x").unwrap_err();
    let text = ml2b::error::chain(&err);
    assert!(text.contains("s3://no-such-bucket/x/.ml2b-probe/"), "{text}");
}

#[test]
fn a_flipped_byte_on_s3_is_named_by_verify_and_refused_by_reads() {
    let server = Server::start();
    let store = server.store();
    run_echo(&store, (0..40).collect(), 10);
    let blob = store.objects().put(b"a prompt blob").unwrap();
    assert_eq!(store.objects().get(&blob).unwrap(), b"a prompt blob");
    let report = verified(&store);
    assert_eq!((report.stages[0].segments, report.objects), (4, 5));

    let segment = echo_log(&store).list().unwrap()[2].path.clone();
    let object = store.objects().path(&blob);
    assert_eq!(
        segment.to_str().unwrap(),
        format!("{URL}/log/echo/00000000000000000002.parquet")
    );
    assert!(
        object
            .to_str()
            .unwrap()
            .starts_with(&format!("{URL}/objects/blake3/"))
    );
    server.flip_byte(&segment, 200);
    server.flip_byte(&object, 3);

    let report = verify_store(&store, ml2b::events::lookup_columns, &NoProgress).unwrap();
    for damaged in [&segment, &object] {
        let problem = report.problems.iter().find(|p| &p.path == damaged);
        let problem =
            problem.unwrap_or_else(|| panic!("{} not named: {:#?}", damaged.display(), report.problems));
        assert!(problem.message.contains("damaged"), "{problem:?}");
    }
    let read = echo_log(&store).read_events::<Echo>(0).unwrap_err().to_string();
    assert!(
        read.contains(segment.to_str().unwrap()) && read.contains("damaged"),
        "{read}"
    );
    let get = store.objects().get(&blob).unwrap_err().to_string();
    assert!(
        get.contains(object.to_str().unwrap()) && get.contains("damaged"),
        "{get}"
    );
}

/// Ten commits of three events through a proxy that faults the first try of each: every
/// commit lands once, at the next version, and none is reported lost or duplicated.
fn every_commit_lands_once_through(fault: Fault) {
    let server = Server::start();
    let proxy = Proxy::start(server.moto.port, fault);
    let store = Endpoint::loopback(proxy.port).open(URL).unwrap();
    let log = echo_log(&store);
    let mut view = log.view().unwrap();
    for v in 0..10u64 {
        let events = (v * 3..v * 3 + 3).map(echo_event).collect();
        let c = log
            .commit(&mut view, events, None)
            .unwrap()
            .expect("our events were committed");
        assert_eq!((c.version, c.events, c.duplicates), (v, 3, 0), "{fault:?}");
    }
    assert_eq!(proxy.injected(), 10, "one {fault:?} per commit");
    let direct = server.store();
    assert_eq!(echo_log(&direct).list().unwrap().len(), 10);
    assert_eq!(assert_unique_units(&direct).len(), 30);
    verified(&direct);
}

#[test]
fn a_lost_acknowledgement_counts_as_our_commit() {
    every_commit_lands_once_through(Fault::LoseAck);
}

#[test]
fn a_500_after_the_server_applied_a_put_counts_as_our_commit() {
    every_commit_lands_once_through(Fault::FailAfterApply);
}

#[test]
fn a_409_conflict_is_retried_at_the_same_version() {
    every_commit_lands_once_through(Fault::Conflict);
}

/// An answer slower than the client's timeout: the PUT landed, the client gave up on it,
/// and its retry (412, our bytes there) counts as our commit.
#[test]
fn a_put_answered_after_the_client_timed_out_counts_as_our_commit() {
    let server = Server::start();
    let proxy = Proxy::start(server.moto.port, Fault::Slow);
    let store = Endpoint::loopback(proxy.port)
        .open_with_timeout(URL, "1s")
        .unwrap();
    let log = echo_log(&store);
    let mut view = log.view().unwrap();
    for v in 0..3u64 {
        let events = (v * 3..v * 3 + 3).map(echo_event).collect();
        let c = log.commit(&mut view, events, None).unwrap().expect("committed");
        assert_eq!((c.version, c.events, c.duplicates), (v, 3, 0));
    }
    assert_eq!(proxy.injected(), 3, "one slow answer per commit");
    let direct = server.store();
    assert_eq!(echo_log(&direct).list().unwrap().len(), 3);
    assert_eq!(assert_unique_units(&direct).len(), 9);
    verified(&direct);
}

/// A server that answers every create-if-absent PUT with 409: the commit fails after its
/// tries, naming the segment's key, and nothing is published.
#[test]
fn endless_409s_fail_the_commit_naming_the_key() {
    let server = Server::start();
    let proxy = Proxy::start(server.moto.port, Fault::AlwaysConflict);
    let store = Endpoint::loopback(proxy.port).open(URL).unwrap();
    let log = echo_log(&store);
    let mut view = log.view().unwrap();
    let err = log
        .commit(&mut view, vec![echo_event(1)], None)
        .expect_err("no try can land");
    let text = ml2b::error::chain(&err);
    assert!(
        text.contains(&format!("{URL}/log/echo/00000000000000000000.parquet")) && text.contains("409"),
        "{text}"
    );
    assert!(proxy.injected() >= 2, "it retried");
    assert!(echo_log(&server.store()).list().unwrap().is_empty());
}

/// Commits `n` one-event segments; returns commits per second.
fn append_rate(store: &Store, n: u64) -> f64 {
    let log = StageLog::new(store, Echo::STAGE).unwrap();
    let mut view = log.view().unwrap();
    let started = Instant::now();
    for i in 0..n {
        log.commit(&mut view, vec![echo_event(i)], None).unwrap().unwrap();
    }
    let rate = n as f64 / started.elapsed().as_secs_f64();
    assert_eq!(log.list().unwrap().len() as u64, n);
    rate
}

/// Measures, asserts nothing about time: one run each, printed for the record.
#[test]
fn append_throughput_on_s3_and_local() {
    let server = Server::start();
    let ws = Workspace::new();
    let local = append_rate(&ws.store(), 100);
    let s3 = append_rate(&server.store(), 100);
    println!(
        "append throughput (one writer, one-event segments): local {local:.0} commits/s, S3 on moto over loopback {s3:.0} commits/s"
    );
}

#[test]
fn verify_log_query_and_journal_run_on_an_s3_store_and_name_a_damaged_segment() {
    let server = Server::start();
    run_echo(&server.store(), (0..40).collect(), 10);
    let ws = Workspace::new();
    let ml2b = |args: &[&str]| {
        let out = ws
            .ml2b()
            .env("ML2B_STORE", URL)
            .envs(server.endpoint().env())
            .args(args)
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let (code, stdout, stderr) = ml2b(&["verify"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("echo: 4 segments, 40 events") && stdout.contains("objects: 4 checked"),
        "{stdout}"
    );
    let (code, stdout, stderr) = ml2b(&[
        "query",
        "--format",
        "csv",
        "SELECT count(*) AS n, sum(n) AS s FROM echo",
    ]);
    assert_eq!((code, stdout.as_str()), (Some(0), "n,s\n40,780\n"), "{stderr}");
    let (code, stdout, stderr) = ml2b(&["log"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("echo ")).count(),
        4,
        "{stdout}"
    );

    let segment = format!("{URL}/log/echo/00000000000000000001.parquet");
    server.flip_byte(Path::new(&segment), 200);
    let (code, stdout, _) = ml2b(&["verify"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains(&format!("damaged: {segment}")), "{stdout}");
    let (code, _, stderr) = ml2b(&["query", "SELECT count(*) FROM echo"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains(&segment), "{stderr}");

    let (code, _, stderr) = ml2b(&["journal"]);
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn sigkill_while_committing_to_s3_never_exposes_a_partial_log() {
    let server = Server::start();
    let store = server.store();
    let env = server.endpoint().env();
    let units: Vec<u64> = (0..300).collect();
    let spec = WorkerSpec {
        store: Path::new(URL),
        units: &units,
        batch: 3,
        sleep_us: 200,
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(29);
    let mut kills = 0;
    while kills < 20 {
        let mut child = spawn_with_env(&spec, &env);
        std::thread::sleep(Duration::from_millis(rng.random_range(100..500)));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            kills += 1;
        }
        child.wait().unwrap();
        // Whatever is visible must be whole: listing, chain and rows all read.
        assert_unique_units(&store);
    }
    let before = assert_unique_units(&store).len();
    assert!(before > 0, "nothing committed in 20 runs");
    // The last run, after a kill, has units left whatever the machine's speed (a fast one
    // commits all 300 between kills): 100 more than the killed runs had.
    let more: Vec<u64> = (0..400).collect();
    let last = WorkerSpec { units: &more, ..spec };
    let out = spawn_with_env(&last, &env).wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(assert_unique_units(&store).len(), more.len(), "{before} before");
    verified(&store);
}

/// `ml2b run` on two toy competitions, into S3 and into a local directory: the same
/// translate-validate and generate event ids, the same execute unit keys and grade scores
/// (execute events record wall times, so their ids differ between any two runs), the same
/// tables; `verify` and `verify --rerun` pass on the S3 store, and a second run there
/// plans nothing.
#[test]
fn a_run_into_s3_matches_a_run_into_a_local_store() {
    let server = Server::start();
    let env = server.endpoint().env();
    let local = toys_in(Workspace::new(), &["toy", "toy2"]);
    let remote = toys_in(Workspace::new(), &["toy", "toy2"]);
    let on_local = |args: &[&str]| succeed(local.ml2b().args(args));
    let on_s3 = |args: &[&str]| succeed(remote.ml2b().envs(env.clone()).env("ML2B_STORE", URL).args(args));
    let run = ["-q", "run", "--models", "reference", "--seeds", "1", "-j", "2"];
    on_local(&run);
    on_s3(&run);
    for sql in [
        "SELECT event_id FROM translate_validate ORDER BY 1",
        "SELECT event_id FROM generate ORDER BY 1",
        "SELECT unit_key FROM execute ORDER BY 1",
        "SELECT competition, format, code_blake3, valid, score FROM grade ORDER BY 1, 2, 3",
        "SELECT name, result_blake3, rows FROM analyze ORDER BY 1",
    ] {
        let query = ["--json", "query", sql];
        let (here, there) = (on_local(&query), on_s3(&query));
        assert_eq!(here, there, "{sql}");
        let rows: serde_json::Value = serde_json::from_str(&here).unwrap();
        assert!(rows.as_array().is_some_and(|r| !r.is_empty()), "{sql}: no rows");
    }
    let scored: serde_json::Value = serde_json::from_str(&on_s3(&[
        "--json",
        "query",
        "SELECT DISTINCT competition FROM grade WHERE valid",
    ]))
    .unwrap();
    assert_eq!(
        scored.as_array().unwrap().len(),
        2,
        "both competitions graded: {scored}"
    );
    let report = report_tables;
    let (here, there) = (local.dir.path().join("tables"), remote.dir.path().join("tables"));
    on_local(&["-q", "report", "--out", here.to_str().unwrap()]);
    on_s3(&["-q", "report", "--out", there.to_str().unwrap()]);
    assert_eq!(report(&here), report(&there));
    assert!(!report(&there).is_empty());
    on_s3(&["verify", "--rerun"]);
    // Measured side by side, one run each, printed for the record (nothing asserted on time).
    let timed = |f: &dyn Fn() -> String| {
        let started = Instant::now();
        f();
        started.elapsed().as_secs_f64() * 1e3
    };
    let sql = concat!(env!("CARGO_MANIFEST_DIR"), "/queries/pass_rate.sql");
    println!(
        "local vs S3 (moto, loopback): verify {:.0} ms vs {:.0} ms; queries/pass_rate.sql {:.0} ms vs {:.0} ms",
        timed(&|| on_local(&["verify"])),
        timed(&|| on_s3(&["verify"])),
        timed(&|| on_local(&["query", sql])),
        timed(&|| on_s3(&["query", sql])),
    );
    let before = on_s3(&["log"]);
    on_s3(&run);
    assert_eq!(on_s3(&["log"]), before, "a second run committed something");
    assert!(
        remote.dir.path().join("store").read_dir().is_err(),
        "nothing went to a local store"
    );
}

/// Runs an `ml2b` command that must succeed; returns its stdout.
fn succeed(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
