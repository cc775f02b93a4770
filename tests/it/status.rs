//! `ml2b status`: a store's cluster plans and one plan's committed / planned / failed units
//! and Slurm jobs, read from the store alone. Here the plan is frozen by the library over
//! the synthetic `echo` stage, some of its units committed by an in-process run, and its
//! folder holds what a submission leaves there (the job record that `PlanFolder::record_job`
//! writes after sbatch, a shard's output ending in its run summary); `slurm.rs` checks the same
//! command after real submissions.

use insta::assert_snapshot;
use ml2b::cluster::folder::PlanFolder;
use ml2b::cluster::slurm::Array;
use ml2b::cluster::{Plan, PlanStatus};
use ml2b::log::{EventBody, unit_key};
use ml2b::settings::{BackendKind, EngineSettings, ExecuteSettings, SandboxSettings};
use ml2b::store::Hash;
use serde_json::Value;

use crate::common::{Echo, Workspace, run_echo};

/// A plan of the echo units 0..10 in 2 shards, submitted as job `41`, with units 0..6
/// committed and one unit reported failed by shard 1; its hash.
fn submitted_plan(ws: &Workspace) -> Hash {
    let store = ws.store();
    let settings = ExecuteSettings {
        root: ws.dir.path().to_path_buf(),
        sandbox: SandboxSettings::of(BackendKind::Local, 60, 1 << 30, 1),
        since: None,
        engine: EngineSettings::Local,
        shard: None,
        stop: None,
    };
    let units = (0..10u64)
        .map(|n| unit_key(Echo::STAGE, Echo::SCHEMA_VERSION, &[], &n).unwrap())
        .collect();
    let plan = Plan {
        stage: Echo::STAGE.into(),
        units,
        ..Plan::execute(&settings, Vec::new(), 2)
    };
    let hash = plan.put(&store).unwrap();
    let folder = PlanFolder::new(&store, hash);
    folder.create().unwrap();
    let dir = folder.path();
    let array = Array {
        job_id: "41".into(),
        first: 0,
        shards: 2,
    };
    folder.record_job(&array).unwrap();
    let summary = r#"{"stage":"echo","planned":4,"skipped":0,"ran":4,"commits":[],"failed":[["unit-9","boom"]],"interrupted":false}"#;
    std::fs::write(dir.join("1.out"), format!("a progress line\n{summary}\n")).unwrap();
    run_echo(&store, (0..6).collect(), 10);
    hash
}

fn redacted(ws: &Workspace, args: &[&str]) -> String {
    ws.run(args).replace(&ml2b::log::event::host_name(), "[HOST]")
}

#[test]
fn status_lists_the_plans_and_shows_one() {
    let ws = Workspace::new();
    assert_snapshot!("status_empty", ws.run(&["status"]));
    let hash = submitted_plan(&ws);
    assert_snapshot!("status_list", redacted(&ws, &["status"]));
    let prefix = &hash.to_hex()[..8];
    assert_snapshot!("status_plan", redacted(&ws, &["status", "--plan", prefix]));

    let out = ws
        .ml2b()
        .args(["--json", "status", "--plan", &hash.to_hex()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["plan"], hash.to_hex());
    assert_eq!(
        (json["planned"].as_u64(), json["committed"].as_u64()),
        (Some(10), Some(6))
    );
    assert_eq!(json["failed"], serde_json::json!([["unit-9", "boom"]]));
    assert_eq!(json["jobs"][0]["job_id"], "41");
    let status = PlanStatus::read(&ws.store(), &hash).unwrap();
    assert!(!status.done());
    let list = ws.ml2b().args(["--json", "status"]).output().unwrap();
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
}

#[test]
fn status_names_a_bad_plan() {
    let ws = Workspace::new();
    submitted_plan(&ws);
    for (plan, says) in [
        ("zz", "--plan zz: not a plan hash"),
        ("0123", "--plan 0123: not a plan hash"),
        ("ffffffffffff", "--plan ffffffffffff: no plan submitted"),
        (&"f".repeat(64), "holds no such plan"),
    ] {
        let out = ws.ml2b().args(["status", "--plan", plan]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{plan}: {err}");
        assert!(err.contains(says), "{plan}: {err}");
    }
}
