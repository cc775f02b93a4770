//! Invariants of the event log: races, crashes, damage, idempotence, folding.

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::io::{BufRead, BufReader};
use std::time::Duration;

use ml2b::events::{Execution, Generation};
use ml2b::log::EventBody;
use ml2b::log::{Committed, Event, Provenance, StageLog, State, View, unit_key};
use ml2b::store::{Hash, Store};
use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use crate::common::{Echo, Workspace, run_echo};
use crate::worker::{WorkerSpec, spawn};

pub fn echo_log(store: &Store) -> StageLog {
    StageLog::new(store, Echo::STAGE).unwrap()
}

pub fn events(store: &Store) -> Vec<Event<Echo>> {
    echo_log(store).read_events(0).unwrap()
}

fn ids(store: &Store) -> BTreeSet<Hash> {
    events(store).iter().map(|e| e.id).collect()
}

pub fn assert_unique_units(store: &Store) -> HashSet<u64> {
    let evs = events(store);
    let keys: HashSet<Hash> = evs.iter().map(|e| e.unit_key).collect();
    assert_eq!(keys.len(), evs.len(), "a unit key was committed twice");
    evs.iter().map(|e| e.body.n).collect()
}

#[test]
fn idempotent_rerun_appends_nothing() {
    let ws = Workspace::new();
    let store = ws.store();
    let first = run_echo(&store, (0..100).collect(), 16);
    assert_eq!(first.appended(), 100);
    assert_eq!(first.commits.len(), 7);
    let segments = echo_log(&store).list().unwrap().len();
    let second = run_echo(&store, (0..100).collect(), 16);
    assert_eq!((second.appended(), second.skipped), (0, 100));
    assert_eq!(echo_log(&store).list().unwrap().len(), segments);
    let third = run_echo(&store, (50..150).collect(), 16);
    assert_eq!((third.appended(), third.skipped), (50, 50));
    assert_eq!(assert_unique_units(&store).len(), 150);
}

#[test]
fn events_round_trip_through_parquet() {
    let ws = Workspace::new();
    let store = ws.store();
    run_echo(&store, (0..10).collect(), 4);
    let mut got = events(&store);
    got.sort_by_key(|e| e.body.n);
    for (n, e) in got.iter().enumerate() {
        assert_eq!(e.body, Echo::of(n as u64));
        assert_eq!(
            e.id,
            Event::compute_id(&e.unit_key, &e.upstream, &e.body).unwrap()
        );
    }
}

#[test]
fn deterministic_stage_rederives_identical_ids() {
    let (a, b) = (Workspace::new(), Workspace::new());
    run_echo(&a.store(), (0..40).collect(), 7);
    run_echo(&b.store(), (0..40).rev().collect(), 3);
    assert_eq!(ids(&a.store()), ids(&b.store()));
}

/// Reads every `COMMIT {json}` line a worker printed.
pub fn commits_of(out: &[u8]) -> Vec<Committed> {
    #[derive(serde::Deserialize)]
    struct C {
        version: u64,
        hash: Hash,
        events: u64,
        duplicates: u64,
    }
    BufReader::new(out)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| l.strip_prefix("COMMIT ").map(str::to_string))
        .map(|j| {
            let c: C = serde_json::from_str(&j).unwrap();
            Committed {
                version: c.version,
                hash: c.hash,
                events: c.events,
                duplicates: c.duplicates,
            }
        })
        .collect()
}

/// Waits for racing workers and checks what they committed to `store`'s echo log, which
/// held `before` segments: every commit a worker reported stands at its version, no
/// version has two writers, every new segment is one worker's, and every `planned` unit is
/// committed exactly once. Returns the commits, the segments and the committed units.
pub fn check_race(
    store: &Store,
    children: Vec<std::process::Child>,
    before: usize,
    planned: &HashSet<u64>,
) -> (Vec<Committed>, usize, HashSet<u64>) {
    let mut commits = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "worker failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        commits.extend(commits_of(&out.stdout));
    }
    let log = echo_log(store);
    let refs = log.list().expect("versions are contiguous");
    for c in &commits {
        assert_eq!(
            log.check(&refs[c.version as usize]).unwrap(),
            c.hash,
            "committed segment {} was replaced",
            c.version
        );
    }
    let versions: HashSet<u64> = commits.iter().map(|c| c.version).collect();
    assert_eq!(versions.len(), commits.len(), "two writers claim one version");
    assert_eq!(
        versions.len(),
        refs.len() - before,
        "every new segment has exactly one writer"
    );
    let committed = assert_unique_units(store);
    assert!(
        planned.iter().all(|u| committed.contains(u)),
        "a planned unit was lost"
    );
    (commits, refs.len(), committed)
}

#[test]
fn race_of_eight_writers_loses_nothing() {
    let ws = Workspace::new();
    let store = ws.store();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut all_units = HashSet::new();
    for round in 0..3u64 {
        let units: Vec<u64> = (round * 300..round * 300 + 300).collect();
        all_units.extend(units.iter().copied());
        let before = echo_log(&store).list().unwrap().len();
        let mut planned = HashSet::new();
        let children: Vec<_> = (0..8)
            .map(|_| {
                let mut mine = units.clone();
                mine.shuffle(&mut rng);
                mine.truncate(200);
                planned.extend(mine.iter().copied());
                spawn(&WorkerSpec {
                    store: &ws.store_path(),
                    units: &mine,
                    batch: 5,
                    sleep_us: 50,
                })
            })
            .collect();
        check_race(&store, children, before, &planned);
    }
    let out = ws.ml2b().arg("verify").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let committed = assert_unique_units(&store);
    assert!(committed.is_subset(&all_units));
}

#[test]
fn sigkill_while_committing_never_exposes_a_partial_segment() {
    let ws = Workspace::new();
    let store = ws.store();
    let units: Vec<u64> = (0..3000).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut kills = 0;
    while kills < 60 {
        let mut child = spawn(&WorkerSpec {
            store: &ws.store_path(),
            units: &units,
            batch: 3,
            sleep_us: 200,
        });
        std::thread::sleep(Duration::from_millis(rng.random_range(5..120)));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            kills += 1;
        }
        child.wait().unwrap();
        // Whatever is visible must be whole: listing, chain and rows all read.
        assert_unique_units(&store);
    }
    // The kills landed mid-run: some units were committed, not all.
    let before = assert_unique_units(&store).len();
    assert!(
        before > 0 && before < units.len(),
        "{before} of {} committed before the last run",
        units.len()
    );
    let child = spawn(&WorkerSpec {
        store: &ws.store_path(),
        units: &units,
        batch: 3,
        sleep_us: 0,
    });
    // Drain its pipes: the commits it prints can outgrow a pipe buffer.
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let reference = Workspace::new();
    run_echo(&reference.store(), units.clone(), 64);
    assert_eq!(ids(&store), ids(&reference.store()));
    assert_eq!(assert_unique_units(&store).len(), units.len());
    let out = ws.ml2b().arg("verify").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

fn flip_byte(path: &std::path::Path, at: usize) {
    let mut bytes = fs::read(path).unwrap();
    bytes[at] ^= 0x20;
    fs::write(path, bytes).unwrap();
}

/// A store with two logs (`echo`, 4 segments; `other`, 3 segments) and a blob.
fn damaged_fixture(ws: &Workspace) -> Hash {
    let store = ws.store();
    run_echo(&store, (0..40).collect(), 10);
    commit_other(&store, 3);
    store.objects().put(b"a prompt blob").unwrap()
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Other {
    x: i64,
}

impl EventBody for Other {
    const STAGE: &'static str = "other";
    const SCHEMA_VERSION: u32 = 1;
}

fn commit_other(store: &Store, segments: i64) {
    let log = StageLog::new(store, Other::STAGE).unwrap();
    let mut view = log.view().unwrap();
    for x in 0..segments {
        let key = unit_key(Other::STAGE, 1, &[], &x).unwrap();
        let e = Event::new(key, vec![], Other { x }, Provenance::now(0)).unwrap();
        log.commit(&mut view, vec![e], None).unwrap().unwrap();
    }
}

#[test]
fn verify_names_every_damaged_file() {
    let ws = Workspace::new();
    let blob = damaged_fixture(&ws);
    let store = ws.store();
    let echo = echo_log(&store).list().unwrap();
    let other = StageLog::new(&store, "other").unwrap().list().unwrap();
    assert_eq!((echo.len(), other.len()), (4, 3));

    let ok = ws.ml2b().arg("verify").output().unwrap();
    assert!(ok.status.success());

    let truncated = &echo[1].path;
    let len = fs::metadata(truncated).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(truncated)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let flipped = &echo[2].path;
    flip_byte(flipped, 200);
    flip_byte(&store.objects().path(&blob), 3);
    fs::remove_file(&other[1].path).unwrap();

    let out = ws.ml2b().arg("verify").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    for damaged in [truncated, flipped, &store.objects().path(&blob), &other[1].path] {
        assert!(
            stdout.contains(&damaged.display().to_string()),
            "{} not named in:\n{stdout}",
            damaged.display()
        );
    }
    assert!(String::from_utf8_lossy(&out.stderr).contains("verification failed"));
}

#[test]
fn no_command_reads_damaged_data() {
    let ws = Workspace::new();
    damaged_fixture(&ws);
    let store = ws.store();
    let echo = echo_log(&store).list().unwrap();
    flip_byte(&echo[3].path, 100);
    let target = echo[3].path.display().to_string();
    for args in [
        vec!["query", "SELECT count(*) FROM echo"],
        vec!["log"],
        vec!["log", "--stage", "echo"],
    ] {
        let out = ws.ml2b().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&target) && stderr.contains("damaged"),
            "{args:?}: {stderr}"
        );
    }
    assert!(echo_log(&store).read_events::<Echo>(0).is_err());
}

#[test]
fn a_gap_is_refused_by_readers_and_writers() {
    let ws = Workspace::new();
    damaged_fixture(&ws);
    let store = ws.store();
    let other = StageLog::new(&store, "other").unwrap();
    fs::remove_file(&other.list().unwrap()[1].path).unwrap();
    let err = other.head().unwrap_err().to_string();
    assert!(
        err.contains("00000000000000000001.parquet") && err.contains("gap"),
        "{err}"
    );
    let out = ws.ml2b().args(["query", "SELECT * FROM other"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_segment_renamed_to_another_version_is_refused() {
    let ws = Workspace::new();
    let store = ws.store();
    commit_other(&store, 2);
    let log = StageLog::new(&store, "other").unwrap();
    let refs = log.list().unwrap();
    fs::remove_file(&refs[1].path).unwrap();
    fs::hard_link(&refs[0].path, &refs[1].path).unwrap();
    let err = log.read_events::<Other>(0).unwrap_err().to_string();
    assert!(err.contains("00000000000000000001.parquet"), "{err}");
}

fn fold_whole(store: &Store) -> State<Echo> {
    let mut s = State::default();
    s.apply(echo_log(store).read_events(0).unwrap());
    s
}

fn fold_pieces(store: &Store, cuts: &[u64]) -> State<Echo> {
    let log = echo_log(store);
    let mut s = State::default();
    for (i, &from) in cuts.iter().enumerate() {
        let to = cuts.get(i + 1).copied().unwrap_or(u64::MAX);
        s.apply(log.read_range::<Echo>(from, to).unwrap());
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, .. ProptestConfig::default() })]

    #[test]
    fn folding_in_pieces_equals_folding_whole(
        batches in prop::collection::vec(prop::collection::vec(0u64..60, 1..12), 1..8),
        cut_seed in any::<u64>(),
    ) {
        let ws = Workspace::new();
        let store = ws.store();
        let log = echo_log(&store);
        let mut view = View::default();
        let mut seen = HashSet::new();
        for batch in &batches {
            let fresh: Vec<_> = batch.iter().copied().filter(|n| seen.insert(*n)).collect();
            let evs: Vec<_> = fresh.iter().map(|&n| {
                let key = unit_key(Echo::STAGE, 1, &[], &n).unwrap();
                Event::new(key, vec![], Echo::of(n), Provenance::now(0)).unwrap()
            }).collect();
            log.commit(&mut view, evs, None).unwrap();
        }
        let n = log.list().unwrap().len() as u64;
        let mut rng = rand::rngs::StdRng::seed_from_u64(cut_seed);
        let mut cuts: Vec<u64> = (1..n).filter(|_| rng.random_bool(0.5)).collect();
        cuts.insert(0, 0);
        prop_assert_eq!(fold_whole(&store), fold_pieces(&store, &cuts));
    }
}

#[test]
fn planning_reads_only_past_the_key_index() {
    let ws = Workspace::new();
    let store = ws.store();
    let log = echo_log(&store);
    let events = |range: std::ops::Range<u64>| -> Vec<Event<Echo>> {
        range
            .map(|n| {
                let key = unit_key(Echo::STAGE, 1, &[], &n).unwrap();
                Event::new(key, vec![], Echo::of(n), Provenance::now(0)).unwrap()
            })
            .collect()
    };
    let mut view = View::default();
    log.commit(&mut view, events(0..60_000), None).unwrap();
    let index_dir = ws.store_path().join("index").join("echo");
    let key_files = || -> Vec<std::path::PathBuf> {
        let Ok(read) = fs::read_dir(&index_dir) else {
            return Vec::new();
        };
        let paths = read.map(|e| e.unwrap().path());
        paths
            .filter(|p| p.extension().is_some_and(|x| x == "keys"))
            .collect()
    };
    assert!(key_files().is_empty());
    let view = log.view().unwrap();
    assert_eq!(view.len(), 60_000);
    assert_eq!(key_files().len(), 1, "a large tail is indexed");

    let mut view2 = log.view().unwrap();
    log.commit(&mut view2, events(59_990..60_100), None)
        .unwrap()
        .unwrap();
    let view3 = log.view().unwrap();
    assert_eq!(view3.len(), 60_100);
    let key = |n: u64| unit_key(Echo::STAGE, 1, &[], &n).unwrap();
    assert!(view3.contains(&key(0)) && view3.contains(&key(60_099)) && !view3.contains(&key(60_100)));

    // A damaged index is ignored, not trusted.
    let idx = key_files().pop().unwrap();
    flip_byte(&idx, 100);
    let view4 = log.view().unwrap();
    assert_eq!(view4.len(), 60_100);
    assert!(view4.contains(&key(12_345)));
    let summary = run_echo(&store, (60_000..60_200).collect(), 64);
    assert_eq!((summary.skipped, summary.appended()), (100, 100));
}

/// A toy store run twice (one seed, then two): `generate` and `analyze` have two
/// segments each, the second `analyze` recording the second `generate` segment as its head.
fn toy_run_twice() -> Workspace {
    let ws = crate::competitions::toy();
    for seeds in ["1", "2"] {
        let out = ws
            .ml2b()
            .args(["-q", "run", "--models", "reference", "--seeds", seeds])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    ws
}

/// A copy of `ws`'s store, damaged by `damage`; `ml2b verify`'s exit code and stdout.
fn verify_damaged_copy(ws: &Workspace, damage: impl FnOnce(&Store)) -> (Option<i32>, String) {
    let copy = Workspace::new();
    crate::compat::copy_dir(&ws.store_path(), &copy.store_path());
    damage(&copy.store());
    let out = copy.ml2b().arg("verify").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (
        out.status.code(),
        stdout.replace(&copy.store_path().display().to_string(), "STORE"),
    )
}

#[test]
fn verify_sees_what_later_events_name_and_the_log_lost() {
    let ws = toy_run_twice();
    let store = ws.store();
    let generate = StageLog::new(&store, Generation::STAGE).unwrap();
    assert_eq!(generate.list().unwrap().len(), 2);
    let (code, stdout) = verify_damaged_copy(&ws, |_| {});
    assert_eq!(code, Some(0), "{stdout}");

    // The last generate segment: only the analyze event that recorded it as its head
    // shows that it existed.
    let (code, stdout) = verify_damaged_copy(&ws, |s| {
        let log = StageLog::new(s, Generation::STAGE).unwrap();
        fs::remove_file(&log.list().unwrap()[1].path).unwrap();
    });
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "damaged: STORE/log/generate: STORE/log/analyze/00000000000000000001.parquet records head"
        ),
        "{stdout}"
    );

    // The only execute segment: the grade events name its events as their upstream.
    let (code, stdout) = verify_damaged_copy(&ws, |s| {
        let log = StageLog::new(s, Execution::STAGE).unwrap();
        fs::remove_file(&log.list().unwrap()[0].path).unwrap();
    });
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("damaged: STORE/log/grade/00000000000000000000.parquet: its events name 2 upstream event(s) that no intact segment holds"),
        "{stdout}"
    );
    assert!(stdout.contains("damaged: STORE/log/execute: "), "{stdout}");

    // A code object that generate and execute events name.
    let code_object = generate.read_events::<Generation>(0).unwrap()[0].body.code_blake3;
    let object = store.objects().path(&code_object);
    let shown = object
        .display()
        .to_string()
        .replace(&ws.store_path().display().to_string(), "STORE");
    let (code, stdout) = verify_damaged_copy(&ws, |s| {
        fs::remove_file(s.objects().path(&code_object)).unwrap();
    });
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "damaged: {shown}: missing: named by `code_blake3` in STORE/log/"
        )),
        "{stdout}"
    );
}

/// Whether this process runs as root (owns what it creates as uid 0).
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    let probe = tempfile::NamedTempFile::new().unwrap();
    probe.as_file().metadata().unwrap().uid() == 0
}

#[test]
fn verify_says_why_it_cannot_read_a_store() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let ws = Workspace::new();
    damaged_fixture(&ws);
    // The store is another user's: its folders can be listed, its files (0600, as every
    // object and segment is written) cannot be read. Root reads anything, so as root the
    // verifier runs as `nobody`; otherwise the files are made unreadable to their owner.
    fs::set_permissions(ws.dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = ws.ml2b();
    if running_as_root() {
        cmd.uid(65534).gid(65534);
    } else {
        for entry in walkdir::WalkDir::new(ws.store_path()) {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                fs::set_permissions(entry.path(), fs::Permissions::from_mode(0o000)).unwrap();
            }
        }
    }
    let out = cmd.arg("verify").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let problems: Vec<&str> = stdout.lines().filter(|l| l.starts_with("damaged: ")).collect();
    assert_eq!(problems.len(), 7 + 8, "every segment and object:\n{stdout}");
    for line in problems {
        assert!(line.ends_with("Permission denied (os error 13)"), "{line}");
    }
}

/// Runs `script` with `sh` in the workspace, in a mount namespace of its own (as root,
/// `unshare -m`; otherwise `unshare -rm`, inside a user namespace), with `$ML2B` the
/// binary; `None` when this host allows neither.
fn in_mount_namespace(ws: &Workspace, script: &str) -> Option<std::process::Output> {
    let flags = if running_as_root() { "-m" } else { "-rm" };
    let unshare = |args: &[&str]| {
        let mut cmd = std::process::Command::new("unshare");
        cmd.arg(flags)
            .args(args)
            .current_dir(ws.dir.path())
            .env("ML2B", env!("CARGO_BIN_EXE_ml2b"))
            .env_remove("ML2B_STORE")
            .env_remove("RUST_LOG");
        cmd.output().ok()
    };
    unshare(&["true"]).filter(|o| o.status.success())?;
    unshare(&["sh", "-c", script])
}

#[test]
fn a_read_only_or_full_store_says_why_a_unit_failed() {
    let ws = crate::competitions::toy();
    let out = ws
        .ml2b()
        .args(["-q", "stage", "generate", "--model", "reference"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Execute reads the code objects, then cannot store the predictions.
    let cases = [
        (
            "mount --bind store store && mount -o remount,bind,ro store && \"$ML2B\" --store store stage execute",
            "Read-only file system",
        ),
        (
            "mkdir full && mount -t tmpfs -o size=4m tmpfs full && cp -a store/. full/ && \
             { dd if=/dev/zero of=full/fill bs=64k 2>/dev/null || true; } && \"$ML2B\" --store full stage execute",
            "No space left on device",
        ),
    ];
    for (script, cause) in cases {
        let Some(out) = in_mount_namespace(&ws, script) else {
            println!(
                "skipped: this host allows no mount namespace (unshare -m / -rm), so no read-only or full store"
            );
            return;
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{script}:\n{stdout}\n{stderr}");
        let failed: Vec<&str> = stdout.lines().filter(|l| l.contains("FAILED")).collect();
        assert_eq!(failed.len(), 2, "{script}:\n{stdout}\n{stderr}");
        for line in failed {
            assert!(
                line.contains("object store I/O failed at ") && line.contains(cause),
                "{line}"
            );
        }
    }
}
