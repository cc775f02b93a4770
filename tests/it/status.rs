//! `ml2b status`: a store's cluster plans and one plan's committed / planned / failed units
//! and Slurm jobs, read from the store, and, for one plan whose jobs ended, how their tasks
//! ended. Here the plan is frozen by the library over the synthetic `echo` stage, some of
//! its units committed by an in-process run, and its folder holds what a submission leaves
//! there (the job record that `PlanFolder::record_job` writes after sbatch, a shard's output
//! ending in its run summary); Slurm's commands are scripts on PATH answering as a cluster
//! without accounting does (`squeue`: no task left; `sacct`: disabled; `scontrol show job`:
//! the tasks' lines). `slurm.rs` checks the same command after real submissions.

use insta::assert_snapshot;
use ml2b::cluster::arrays::Array;
use ml2b::cluster::folder::PlanFolder;
use ml2b::cluster::{Plan, PlanStatus};
use ml2b::config::{BackendKind, EngineSettings, ExecuteSettings, SandboxSettings};
use ml2b::log::{EventBody, unit_key};
use ml2b::stages::shard_of;
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

/// The echo units of [`submitted_plan`] left uncommitted in `shard` (of 2).
fn uncommitted_in(shard: u32) -> usize {
    (6..10u64)
        .map(|n| unit_key(Echo::STAGE, Echo::SCHEMA_VERSION, &[], &n).unwrap())
        .filter(|k| shard_of(k, 2) == shard)
        .count()
}

/// Puts Slurm's commands first on the workspace's PATH, answering for job 41, ended, as a
/// cluster without accounting: `scontrol show job 41` gives one line per `(task, state,
/// exit code, node)`.
fn slurm_answering(ws: &mut Workspace, tasks: &[(u32, &str, &str, &str)]) {
    let bin = ws.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let lines: String = tasks
        .iter()
        .map(|(task, state, exit, node)| {
            format!(
                "JobId={} ArrayJobId=41 ArrayTaskId={task} JobName=ml2b-echo JobState={state} \
                 Reason=None Requeue=1 Restarts=0 ExitCode={exit} NodeList={node} BatchHost={node}\n",
                42 + task
            )
        })
        .collect();
    std::fs::write(bin.join("scontrol.txt"), lines).unwrap();
    let scripts = [
        ("squeue", "exit 0".to_string()),
        (
            "sacct",
            "echo 'Slurm accounting storage is disabled' >&2; exit 1".into(),
        ),
        (
            "scontrol",
            format!("cat '{}'", bin.join("scontrol.txt").display()),
        ),
    ];
    for (name, body) in scripts {
        let path = bin.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let path = std::env::var("PATH").unwrap_or_default();
    ws.env.push(("PATH".into(), format!("{}:{path}", bin.display())));
}

fn redacted(ws: &Workspace, args: &[&str]) -> String {
    ws.run(args).replace(&ml2b::log::event::host_name(), "[HOST]")
}

#[test]
fn status_lists_the_plans_and_shows_one() {
    let mut ws = Workspace::new();
    assert_snapshot!("status_empty", ws.run(&["status"]));
    let hash = submitted_plan(&ws);
    // Shard 0 ran to its summary too; shard 1's task failed as a worker with a failed unit
    // does: the stage's business, not the task's.
    let summary =
        r#"{"stage":"echo","planned":6,"skipped":6,"ran":0,"commits":[],"failed":[],"interrupted":false}"#;
    let dir = PlanFolder::new(&ws.store(), hash).path();
    std::fs::write(dir.join("0.out"), format!("{summary}\n")).unwrap();
    slurm_answering(
        &mut ws,
        &[(0, "COMPLETED", "0:0", "n1"), (1, "FAILED", "1:0", "n2")],
    );
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
    assert_eq!(json["tasks"]["known"], 2, "{json}");
    assert_eq!(json["tasks"]["faults"], serde_json::json!([]), "{json}");
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

/// A shard whose task never started ml2b (exit 127, no run summary) is named with its
/// state, exit code, node, output and the output's last lines; exit 1. The other shard's
/// task ran ml2b, which reported a failed unit: not a task fault.
#[test]
fn status_names_each_task_that_left_its_shard_undone() {
    let mut ws = Workspace::new();
    let hash = submitted_plan(&ws);
    let undone = (0..2).find(|&s| s != 1 && uncommitted_in(s) > 0);
    let undone = undone.expect("the fixture leaves units uncommitted in shard 0");
    let dir = PlanFolder::new(&ws.store(), hash).path();
    std::fs::write(
        dir.join(format!("{undone}.out")),
        "/var/spool/slurmd/job00042/slurm_script: 3: exec: /nowhere/ml2b: not found\n",
    )
    .unwrap();
    slurm_answering(
        &mut ws,
        &[(0, "FAILED", "127:0", "n1"), (1, "FAILED", "1:0", "n2")],
    );
    assert_snapshot!(
        "status_plan_undone",
        redacted(&ws, &["status", "--plan", &hash.to_hex()[..8]])
    );
    let out = ws
        .ml2b()
        .args(["--json", "status", "--plan", &hash.to_hex()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let faults = json["tasks"]["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 1, "{json}");
    let fault = &faults[0];
    assert_eq!(
        (&fault["job"], &fault["index"], &fault["shard"]),
        (&Value::from("41"), &Value::from(undone), &Value::from(undone))
    );
    assert_eq!(
        (&fault["state"], &fault["exit_code"], &fault["node"]),
        (&Value::from("FAILED"), &Value::from("127:0"), &Value::from("n1"))
    );
    assert_eq!(fault["uncommitted"], uncommitted_in(undone));
    assert_eq!(
        fault["output"],
        dir.join(format!("{undone}.out")).display().to_string()
    );
    assert_eq!(
        json["tasks"]["source"],
        serde_json::json!({"scontrol": {"sacct": "Slurm accounting storage is disabled"}})
    );

    // `MinJobAge` later the controller has forgotten the job: the run summaries alone say
    // that the shard never started ml2b.
    let forgotten = "#!/bin/sh\necho 'slurm_load_jobs error: Invalid job id specified' >&2\nexit 1\n";
    for name in ["squeue", "scontrol"] {
        std::fs::write(ws.dir.path().join("bin").join(name), forgotten).unwrap();
    }
    let out = ws
        .ml2b()
        .args(["--json", "status", "--plan", &hash.to_hex()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        json["tasks"]["source"],
        serde_json::json!({"summaries": {
            "sacct": "Slurm accounting storage is disabled",
            "scontrol": "job 41: slurm_load_jobs error: Invalid job id specified"
        }})
    );
    let faults = json["tasks"]["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 1, "{json}");
    assert_eq!(
        (&faults[0]["shard"], &faults[0]["state"]),
        (&Value::from(undone), &Value::Null)
    );
    assert!(
        faults[0]["why"].as_str().unwrap().starts_with("no run summary"),
        "{json}"
    );
}

#[test]
fn status_of_a_half_finished_local_run() {
    // The modular samples ran to their grades; the mono ones were generated only.
    let ws = crate::competitions::toy();
    for args in [
        &["stage", "translate-validate"][..],
        &["stage", "generate", "--model", "reference", "--format", "modular"],
        &["stage", "execute"],
        &["stage", "grade"],
        &["stage", "generate", "--model", "reference", "--format", "mono"],
    ] {
        let out = ws.ml2b().args(args).output().unwrap();
        // translate-validate exits 1: the toy's machine translations fail their gate.
        assert!(
            out.status.success() || args[1] == "translate-validate",
            "{args:?}"
        );
    }
    assert_snapshot!("status_half_finished", ws.run(&["status"]));
}
