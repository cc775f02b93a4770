//! The Slurm cluster that `scripts/slurm-cluster up` starts (a controller and two compute
//! nodes, each a Docker container; `scripts/test` starts it and exports `SLURM_CONF` and
//! `ML2B_SHARED`): a job array submitted from this host with Debian's `sbatch` runs the
//! real `ml2b` on both compute nodes, each task grading a solution in the local sandbox
//! (bubblewrap inside the node) over a root on the shared directory, with the score that the
//! same command gives on this host; and `ml2b stage execute --engine slurm` plans here,
//! submits one array of `ml2b worker` tasks and commits, from the compute nodes, what a
//! local run commits, each segment naming the Slurm task that wrote it and `ml2b status`
//! the plan's job; a node killed, a task sent SIGTERM and two submissions of one selection
//! at once lose no unit and commit none twice; `ml2b run --engine slurm` grades here what
//! the nodes executed. Nothing here fakes Slurm.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use ml2b::events::Execution;
use ml2b::log::{EventBody, StageLog};
use ml2b::store::Store;
use serde_json::Value;

use crate::common::{Workspace, stderr, write};
use crate::competitions::{TOY_MODULAR, TOY_MONO, toy_in};

/// One cluster test at a time: one of them kills a node.
static CLUSTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `SLURM_CONF` and `ML2B_SHARED` as `scripts/slurm-cluster up` prints them.
fn cluster() -> (PathBuf, PathBuf) {
    let var = |name: &str| {
        std::env::var_os(name).map(PathBuf::from).unwrap_or_else(|| {
            panic!(
                "{name} is not set: start the test cluster with `scripts/slurm-cluster up` and \
                 export the two lines it prints last (scripts/test does)"
            )
        })
    };
    let (conf, shared) = (var("SLURM_CONF"), var("ML2B_SHARED"));
    // A node restarted by an earlier test registers again within seconds.
    wait_for(120, "both compute nodes idle", || {
        ["n1", "n2"].iter().all(|n| node_state(&conf, n) == "idle")
    });
    (conf, shared)
}

/// `ml2b --json grade-file` of the toy's reference solution, as a shell command line.
fn grade_file(root: &std::path::Path) -> String {
    format!(
        "'{}' --json grade-file '{}/data/toy/solution/modular.py' --competition toy \
         --format modular --root '{}'",
        env!("CARGO_BIN_EXE_ml2b"),
        root.display(),
        root.display()
    )
}

#[test]
fn an_array_runs_ml2b_in_the_sandbox_on_every_compute_node() {
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let (conf, shared) = cluster();
    let ws = toy_in(Workspace::new_in(&shared));
    let root = ws.dir.path();
    let here = Command::new("sh")
        .args(["-c", &grade_file(root)])
        .output()
        .unwrap();
    assert!(here.status.success(), "{}", stderr(&here));
    let expected: Value = serde_json::from_slice(&here.stdout).unwrap();
    assert_eq!(expected["outcome"], "ok", "{expected}");

    let out = root.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let job = root.join("job.sh");
    write(
        &job,
        format!(
            "#!/bin/sh\nset -e\nhostname > '{out}/'$SLURM_ARRAY_TASK_ID.host\n\
             {grade} > '{out}/'$SLURM_ARRAY_TASK_ID.json\n",
            out = out.display(),
            grade = grade_file(root),
        ),
    );
    // Four one-CPU tasks on two nodes of two CPUs each: all run at once, on both nodes.
    let submitted = Command::new("sbatch")
        .env("SLURM_CONF", &conf)
        .args([
            "--wait",
            "--parsable",
            "--array=0-3",
            "--ntasks=1",
            "--cpus-per-task=1",
        ])
        .arg(format!("--output={}/%a.log", out.display()))
        .arg(format!("--chdir={}", out.display()))
        .arg(&job)
        .output()
        .unwrap();
    let logs = || {
        (0..4)
            .map(|t| std::fs::read_to_string(out.join(format!("{t}.log"))).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n---\n")
    };
    assert!(
        submitted.status.success(),
        "sbatch: {}\n{}\ntask logs:\n{}",
        stderr(&submitted),
        String::from_utf8_lossy(&submitted.stdout),
        logs()
    );

    let mut hosts = BTreeSet::new();
    for task in 0..4 {
        let log = std::fs::read_to_string(out.join(format!("{task}.log"))).unwrap_or_default();
        let report = std::fs::read(out.join(format!("{task}.json")))
            .unwrap_or_else(|e| panic!("task {task} wrote no report ({e}); its log:\n{log}"));
        let report: Value = serde_json::from_slice(&report).unwrap();
        assert_eq!(report["outcome"], "ok", "task {task}: {report}\n{log}");
        assert_eq!(report["score"], expected["score"], "task {task}: {report}");
        let host = std::fs::read_to_string(out.join(format!("{task}.host"))).unwrap();
        hosts.insert(host.trim().to_string());
    }
    assert_eq!(
        hosts,
        BTreeSet::from(["n1".to_string(), "n2".to_string()]),
        "the array ran on both compute nodes"
    );
}

/// The execute events of the store at `store`: unit key → (outcome, predictions, host).
fn executions(store: &std::path::Path) -> std::collections::BTreeMap<String, (String, String, String)> {
    let log = StageLog::new(&Store::open(store), Execution::STAGE).unwrap();
    log.read_events::<Execution>(0)
        .unwrap()
        .into_iter()
        .map(|e| {
            let predictions = e.body.predictions_blake3.map(|h| h.to_hex()).unwrap_or_default();
            (
                e.unit_key.to_hex(),
                (e.body.outcome.to_string(), predictions, e.provenance.host),
            )
        })
        .collect()
}

/// (host, Slurm task) of every execute segment of the store at `store`, from its footer.
fn slurm_tasks(store: &std::path::Path) -> Vec<(String, Option<ml2b::log::segment::SlurmTask>)> {
    let log = StageLog::new(&Store::open(store), Execution::STAGE).unwrap();
    log.list()
        .unwrap()
        .iter()
        .map(|r| {
            let (_, meta) = log.check_with_meta(r).unwrap();
            (meta.host, meta.slurm)
        })
        .collect()
}

/// A command's stdout, which must succeed.
fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// A command's stdout as JSON, which must succeed.
fn json_of(cmd: &mut Command) -> Value {
    let text = stdout_of(cmd);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The unit keys of the execute log at `store`, once per event.
fn execute_keys(store: &std::path::Path) -> Vec<String> {
    StageLog::new(&Store::open(store), Execution::STAGE)
        .unwrap()
        .read_events::<Execution>(0)
        .unwrap()
        .iter()
        .map(|e| e.unit_key.to_hex())
        .collect()
}

#[test]
fn execute_on_slurm_commits_what_a_local_run_commits() {
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let (conf, shared) = cluster();
    let ws = toy_in(Workspace::new_in(&shared));
    let local = ws.dir.path().join("local-store");
    let stage = |store: &std::path::Path, args: &[&str]| {
        let out = ws
            .ml2b()
            .env("ML2B_STORE", store)
            .env("SLURM_CONF", &conf)
            .args(["--json", "stage"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let cluster_store = ws.store_path();
    for store in [&cluster_store, &local] {
        stage(store, &["generate", "--force"]);
    }
    stage(&local, &["execute"]);
    let run = stage(
        &cluster_store,
        &[
            "execute",
            "--engine",
            "slurm",
            "--shards",
            "3",
            "--max-running",
            "3",
        ],
    );
    assert_eq!(run["planned"], 2, "{run}");
    assert_eq!(run["committed"], 2, "{run}");
    assert_eq!(run["shards"], 2, "no more shards than units: {run}");
    assert_eq!(run["failed"], serde_json::json!([]), "{run}");
    assert!(
        run["submission"]["job_id"]
            .as_str()
            .is_some_and(|j| !j.is_empty()),
        "{run}"
    );

    // Every segment says where it ran: a task of the submitted array.
    let job = run["submission"]["job_id"].as_str().unwrap();
    let tasks = slurm_tasks(&cluster_store);
    assert!(!tasks.is_empty());
    for (host, task) in &tasks {
        assert!(["n1", "n2"].contains(&host.as_str()), "{tasks:?}");
        let task = task
            .as_ref()
            .unwrap_or_else(|| panic!("no Slurm task recorded: {tasks:?}"));
        assert_eq!(task.job, job, "{tasks:?}");
        assert!(task.task.is_some_and(|t| t < 2), "{tasks:?}");
    }
    assert!(
        stdout_of(ws.ml2b().env("ML2B_STORE", &cluster_store).arg("log")).contains(&format!(" slurm {job}_"))
    );
    assert!(
        slurm_tasks(&local).iter().all(|(_, t)| t.is_none()),
        "a local run is not a Slurm task"
    );
    // `ml2b status` names the plan, its job and its progress, from the store alone.
    let plan = run["plan"].as_str().unwrap();
    let status = json_of(ws.ml2b().env("ML2B_STORE", &cluster_store).args([
        "--json",
        "status",
        "--plan",
        &plan[..10],
    ]));
    assert_eq!(status["plan"], plan, "{status}");
    assert_eq!(
        (status["planned"].as_u64(), status["committed"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(status["failed"], serde_json::json!([]), "{status}");
    assert_eq!(status["jobs"][0]["job_id"], job, "{status}");

    // The same units with the same outcomes and predictions, run on the compute nodes.
    let (here, there) = (executions(&local), executions(&cluster_store));
    let strip = |m: &std::collections::BTreeMap<String, (String, String, String)>| {
        m.iter()
            .map(|(k, (o, p, _))| (k.clone(), o.clone(), p.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&there), strip(&here));
    for (key, (_, _, host)) in &there {
        assert!(["n1", "n2"].contains(&host.as_str()), "{key} ran on {host}");
    }
    // Graded where the submission runs: the same scores as the local store's.
    let score = |store: &std::path::Path| {
        stage(store, &["grade"]);
        let out = ws
            .ml2b()
            .env("ML2B_STORE", store)
            .args([
                "--json",
                "query",
                "SELECT unit_key, score FROM grade ORDER BY unit_key",
            ])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let (graded_here, graded_there) = (score(&local), score(&cluster_store));
    assert_eq!(graded_there.as_array().map(Vec::len), Some(2), "{graded_there}");
    let scores = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["score"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(scores(&graded_there), scores(&graded_here));
    let verify = ws.ml2b().args(["verify"]).output().unwrap();
    assert!(verify.status.success(), "{}", stderr(&verify));

    // Everything is committed: a second submission has nothing to run.
    let again = stage(&cluster_store, &["execute", "--engine", "slurm"]);
    assert_eq!(again["planned"], 0, "{again}");
    assert_eq!(again["submission"], Value::Null, "{again}");
}

/// The node each running task of `job` is on (`squeue`).
fn running_nodes(conf: &std::path::Path, job: &str) -> Vec<String> {
    let out = Command::new("squeue")
        .env("SLURM_CONF", conf)
        .args(["-h", "-j", job, "-t", "RUNNING", "-o", "%N"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The Slurm state of `node` (`idle`, `down*`, …).
fn node_state(conf: &std::path::Path, node: &str) -> String {
    let out = Command::new("sinfo")
        .env("SLURM_CONF", conf)
        .args(["-h", "-N", "-n", node, "-o", "%t"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn slurm_cluster(args: &[&str]) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-cluster");
    let out = Command::new(script).args(args).output().unwrap();
    assert!(out.status.success(), "slurm-cluster {args:?}: {}", stderr(&out));
}

/// The toy's reference solutions, training for `seconds` first (inside the functions: the
/// harness drops top-level statements, as the original loader does).
fn slow_solutions(ws: &Workspace, seconds: u32) {
    let pause = |code: &str, def: &str| {
        let slept = format!("{def}\n    time.sleep({seconds})\n");
        format!("import time\n{}", code.replacen(&format!("{def}\n"), &slept, 1))
    };
    let solutions = [
        ("modular", pause(TOY_MODULAR, "def train(data):")),
        ("mono", pause(TOY_MONO, "def train_and_predict(data, X_val):")),
    ];
    for (format, code) in solutions {
        assert!(code.contains("time.sleep"), "{code}");
        write(
            &ws.dir.path().join(format!("data/toy/solution/{format}.py")),
            code,
        );
    }
}

/// Generates the toy's solutions and submits their execution with `--engine slurm
/// --no-wait` and `args`: the job id and the plan's hash.
fn generate_and_submit(ws: &Workspace, conf: &std::path::Path, args: &[&str]) -> (String, String) {
    let generated = ws.ml2b().args(["stage", "generate", "--force"]).output().unwrap();
    assert!(generated.status.success(), "{}", stderr(&generated));
    let submitted = ws
        .ml2b()
        .env("SLURM_CONF", conf)
        .args(["--json", "stage", "execute", "--engine", "slurm", "--no-wait"])
        .args(args)
        .output()
        .unwrap();
    assert!(submitted.status.success(), "{}", stderr(&submitted));
    let submitted: Value = serde_json::from_slice(&submitted.stdout).unwrap();
    let job = submitted["submission"]["job_id"].as_str().unwrap().to_string();
    (job, submitted["plan"].as_str().unwrap().to_string())
}

/// Whether the job has no task left in the queue.
fn array_ended(conf: &std::path::Path, job: &str) -> bool {
    Command::new("squeue")
        .env("SLURM_CONF", conf)
        .args(["-h", "-j", job])
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.is_empty())
}

/// Waits (up to `seconds`) until `done` holds.
fn wait_for(seconds: u64, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "{what} within {seconds} s");
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// `ml2b status --plan` of an ended plan whose requeued task finished its shard on a later
/// run: every task's latest run did its shard, so none is a fault (exit 0).
fn requeued_task_is_no_fault(ws: &Workspace, plan: &str, tasks: u64) {
    let status = json_of(ws.ml2b().args(["--json", "status", "--plan", plan]));
    assert_eq!(status["tasks"]["faults"], serde_json::json!([]), "{status}");
    assert_eq!(status["tasks"]["known"], tasks, "every task's state: {status}");
}

#[test]
fn a_node_killed_mid_run_has_its_task_requeued_and_nothing_is_lost_or_doubled() {
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let (conf, shared) = cluster();
    let ws = toy_in(Workspace::new_in(&shared));
    // Slow solutions (two distinct programs: two units); a task takes a whole node.
    slow_solutions(&ws, 20);
    let (job, plan) = generate_and_submit(&ws, &conf, &["--slurm-arg=--cpus-per-task=2"]);

    let queue = || {
        let out = Command::new("squeue").env("SLURM_CONF", &conf).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while running_nodes(&conf, &job).is_empty() {
        let outputs = || {
            let dir = ws.store_path().join("cluster").join(&plan);
            std::fs::read_dir(&dir)
                .map(|d| {
                    d.filter_map(Result::ok)
                        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                        .collect::<Vec<_>>()
                        .join("\n---\n")
                })
                .unwrap_or_default()
        };
        assert!(
            std::time::Instant::now() < deadline,
            "a task running within 60 s:\n{}\n{}",
            queue(),
            outputs()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // Kill a node running a task (the shards hold the units as their keys fall).
    let node = running_nodes(&conf, &job)[0].clone();
    slurm_cluster(&["kill", &node]);
    wait_for(60, "the killed node marked down", || {
        node_state(&conf, &node).starts_with("down")
    });
    slurm_cluster(&["start", &node]);
    // Slurm holds a requeued task for 120 s before it runs it again.
    wait_for(400, "the array to end", || array_ended(&conf, &job));

    let events = StageLog::new(&ws.store(), Execution::STAGE)
        .unwrap()
        .read_events::<Execution>(0)
        .unwrap();
    let keys: BTreeSet<String> = events.iter().map(|e| e.unit_key.to_hex()).collect();
    assert_eq!(events.len(), 2, "both units committed once: {keys:?}");
    assert_eq!(keys.len(), 2);
    assert!(events.iter().all(|e| e.body.outcome.to_string() == "ok"));
    let out = std::fs::read_dir(ws.store_path().join("cluster").join(&plan))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "out"))
        .count();
    assert_eq!(out, 2, "one output per shard");
    requeued_task_is_no_fault(&ws, &plan, 2);
    let again = ws
        .ml2b()
        .env("SLURM_CONF", &conf)
        .args(["--json", "stage", "execute", "--engine", "slurm"])
        .output()
        .unwrap();
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["planned"], 0, "nothing left: {again}");
    let verify = ws.ml2b().args(["verify"]).output().unwrap();
    assert!(verify.status.success(), "{}", stderr(&verify));
}

#[test]
fn a_task_sent_sigterm_commits_what_finished_and_its_requeued_run_finishes_the_rest() {
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let (conf, shared) = cluster();
    let ws = toy_in(Workspace::new_in(&shared));
    slow_solutions(&ws, 12);
    // One shard, one unit at a time: the task runs both units, one after the other.
    let (job, plan) = generate_and_submit(&ws, &conf, &["-j", "1", "--shards", "1"]);
    let log = StageLog::new(&ws.store(), Execution::STAGE).unwrap();
    let committed = || log.read_events::<Execution>(0).map_or(0, |e| e.len());

    // The first unit is committed while the second runs: then SIGTERM.
    let out = ws.store_path().join(format!("cluster/{plan}/0.out"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while committed() != 1 {
        let seen = std::fs::read_to_string(&out).unwrap_or_default();
        assert!(
            std::time::Instant::now() < deadline && committed() == 0,
            "the first unit alone committed within 120 s; {} committed; the task's output:\n{seen}",
            committed()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let term = Command::new("scancel")
        .env("SLURM_CONF", &conf)
        .args(["--batch", "--signal=TERM", &format!("{job}_0")])
        .output()
        .unwrap();
    assert!(term.status.success(), "{}", stderr(&term));
    wait_for(300, "the array to end", || array_ended(&conf, &job));

    let events = log.read_events::<Execution>(0).unwrap();
    let keys: BTreeSet<String> = events.iter().map(|e| e.unit_key.to_hex()).collect();
    assert_eq!((events.len(), keys.len()), (2, 2), "both units, once each");
    let output = std::fs::read_to_string(&out).unwrap();
    let summaries: Vec<Value> = output
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("stage").is_some())
        .collect();
    assert_eq!(
        summaries.len(),
        2,
        "the stopped run and the requeued one:\n{output}"
    );
    assert_eq!(summaries[0]["interrupted"], true, "{output}");
    assert_eq!(summaries[0]["ran"], 1, "{output}");
    assert_eq!(summaries[1]["interrupted"], false, "{output}");
    assert_eq!(
        (
            summaries[1]["planned"].as_u64(),
            summaries[1]["skipped"].as_u64(),
            summaries[1]["ran"].as_u64()
        ),
        (Some(2), Some(1), Some(1)),
        "the requeued run skips what the stopped one committed:\n{output}"
    );
    requeued_task_is_no_fault(&ws, &plan, 1);
    let verify = ws.ml2b().args(["verify"]).output().unwrap();
    assert!(verify.status.success(), "{}", stderr(&verify));
}

#[test]
fn two_submissions_of_one_selection_at_once_commit_each_unit_once() {
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let (conf, shared) = cluster();
    let ws = toy_in(Workspace::new_in(&shared));
    // Long enough that both submissions' tasks run the same units at the same time.
    slow_solutions(&ws, 6);
    let generated = ws.ml2b().args(["stage", "generate", "--force"]).output().unwrap();
    assert!(generated.status.success(), "{}", stderr(&generated));
    let submit = || {
        ws.ml2b()
            .env("SLURM_CONF", &conf)
            .args(["--json", "stage", "execute", "--engine", "slurm"])
            .args(["--slurm-arg=--cpus-per-task=1", "--max-running", "2"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (first, second) = (submit(), submit());
    let runs: Vec<Value> = [first, second]
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            serde_json::from_slice(&out.stdout).unwrap()
        })
        .collect();
    for run in &runs {
        assert_eq!(run["committed"], run["planned"], "{run}");
    }
    let plans: BTreeSet<&str> = runs.iter().filter_map(|r| r["plan"].as_str()).collect();
    assert_eq!(plans.len(), 2, "two plans: {runs:?}");
    // Both planned the two units before either committed one: both submitted them.
    let submitted = runs.iter().filter(|r| !r["submission"].is_null()).count();
    assert_eq!(submitted, 2, "{runs:?}");
    for run in &runs {
        assert_eq!(run["planned"], 2, "{run}");
    }

    let keys = execute_keys(&ws.store_path());
    let distinct: BTreeSet<&String> = keys.iter().collect();
    assert_eq!((keys.len(), distinct.len()), (2, 2), "each unit once: {keys:?}");
    let verify = ws.ml2b().args(["verify"]).output().unwrap();
    assert!(verify.status.success(), "{}", stderr(&verify));
    // Both plans are listed, newest first, each done.
    let status = json_of(ws.ml2b().args(["--json", "status"]));
    let listed = status.as_array().unwrap();
    assert_eq!(listed.len(), submitted, "{status}");
    for p in listed {
        assert_eq!(p["committed"], p["planned"], "{p}");
    }
}

#[test]
fn run_on_slurm_grades_here_what_the_nodes_executed() {
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let (conf, shared) = cluster();
    let ws = toy_in(Workspace::new_in(&shared));
    let local = ws.dir.path().join("local-store");
    let run = |store: &std::path::Path, engine: &[&str]| {
        json_of(
            ws.ml2b()
                .env("ML2B_STORE", store)
                .env("SLURM_CONF", &conf)
                .args(["--json", "run", "--models", "reference"])
                .args(engine),
        )
    };
    let here = run(&local, &[]);
    let there = run(&ws.store_path(), &["--engine", "slurm", "--max-running", "2"]);
    for r in [&here, &there] {
        assert!(r["problems"].as_array().is_some_and(Vec::is_empty), "{r}");
    }
    let strip = |m: std::collections::BTreeMap<String, (String, String, String)>| {
        m.into_iter().map(|(k, (o, p, _))| (k, o, p)).collect::<Vec<_>>()
    };
    assert_eq!(strip(executions(&ws.store_path())), strip(executions(&local)));
    assert!(
        slurm_tasks(&ws.store_path())
            .iter()
            .all(|(h, t)| t.is_some() && h != &ml2b::log::event::host_name()),
        "every execute segment was written by a task on a node"
    );
    let scores = |store: &std::path::Path| {
        json_of(ws.ml2b().env("ML2B_STORE", store).args([
            "--json",
            "query",
            "SELECT unit_key, score FROM grade ORDER BY unit_key",
        ]))
    };
    // Grade keys follow the executions' ids (which hold wall times): compare the scores.
    let score_list = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["score"].clone())
            .collect::<Vec<_>>()
    };
    let graded = scores(&ws.store_path());
    assert_eq!(graded.as_array().map(Vec::len), Some(2), "{graded}");
    assert_eq!(score_list(&graded), score_list(&scores(&local)));
    // The grade segments were written here, where `ml2b run` ran.
    let grade = StageLog::new(&ws.store(), "grade").unwrap();
    for r in grade.list().unwrap() {
        let (_, meta) = grade.check_with_meta(&r).unwrap();
        assert_eq!((meta.host, meta.slurm), (ml2b::log::event::host_name(), None));
    }
}

/// The cluster's `MaxArraySize` set to `size` (its slurm.conf rewritten, `scontrol
/// reconfigure`) until dropped; `scripts/slurm-cluster up` writes the usual value too.
struct MaxArraySize {
    conf: PathBuf,
    original: String,
}

impl MaxArraySize {
    fn set(conf: &std::path::Path, size: u32) -> Self {
        let original = std::fs::read_to_string(conf).unwrap();
        let line = original
            .lines()
            .find(|l| l.starts_with("MaxArraySize="))
            .expect("slurm.conf sets MaxArraySize");
        let changed = original.replace(line, &format!("MaxArraySize={size}"));
        std::fs::write(conf, changed).unwrap();
        reconfigure(conf, size);
        Self {
            conf: conf.to_path_buf(),
            original,
        }
    }
}

impl Drop for MaxArraySize {
    fn drop(&mut self) {
        std::fs::write(&self.conf, &self.original).unwrap();
        let _ = Command::new("scontrol")
            .env("SLURM_CONF", &self.conf)
            .arg("reconfigure")
            .status();
    }
}

/// `scontrol reconfigure`, then waits until the controller reports `MaxArraySize = size`.
fn reconfigure(conf: &std::path::Path, size: u32) {
    let done = Command::new("scontrol")
        .env("SLURM_CONF", conf)
        .arg("reconfigure")
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", stderr(&done));
    wait_for(30, "the controller to take the new MaxArraySize", || {
        let out = Command::new("scontrol")
            .env("SLURM_CONF", conf)
            .args(["show", "config"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["MaxArraySize", "=", &size.to_string()])
    });
}

#[test]
fn more_shards_than_one_array_holds_are_submitted_as_several_arrays() {
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let (conf, shared) = cluster();
    let ws = toy_in(Workspace::new_in(&shared));
    // One task per array: the plan's two shards need two arrays, the second after the first.
    let _small = MaxArraySize::set(&conf, 2);
    let (_, plan) = generate_and_submit(&ws, &conf, &["--shards", "2"]);
    let status = || json_of(ws.ml2b().args(["--json", "status", "--plan", &plan]));
    let jobs = status()["jobs"].as_array().unwrap().clone();
    let spans: Vec<(u64, u64)> = jobs
        .iter()
        .map(|j| (j["first"].as_u64().unwrap(), j["shards"].as_u64().unwrap()))
        .collect();
    assert_eq!(spans, vec![(0, 1), (1, 1)], "{jobs:?}");
    for job in &jobs {
        let id = job["job_id"].as_str().unwrap().to_string();
        wait_for(300, "the arrays to end", || array_ended(&conf, &id));
    }
    let done = status();
    assert_eq!(
        (done["planned"].as_u64(), done["committed"].as_u64()),
        (Some(2), Some(2)),
        "{done}"
    );
    // Each array's task ran its own shard: shard 1 is the second array's task 0. Which
    // shard a unit falls in follows from its key (the plan says), so a shard may hold none.
    let sizes = shard_sizes(&ws, &plan);
    assert_eq!(sizes.iter().sum::<usize>(), 2, "{sizes:?}");
    let mut ran: Vec<String> = slurm_tasks(&ws.store_path())
        .into_iter()
        .map(|(_, t)| t.expect("a Slurm task wrote it").to_string())
        .collect();
    ran.sort();
    ran.dedup();
    let ids: Vec<String> = jobs
        .iter()
        .zip(&sizes)
        .filter(|(_, units)| **units > 0)
        .map(|(j, _)| format!("{}_0", j["job_id"].as_str().unwrap()))
        .collect();
    assert_eq!(
        ran, ids,
        "a segment from task 0 of each array whose shard holds units"
    );
    for (shard, units) in sizes.iter().enumerate() {
        let out = ws.store_path().join(format!("cluster/{plan}/{shard}.out"));
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        assert!(
            text.contains(&format!("\"planned\":{units}")),
            "shard {shard} ran its {units} unit(s):\n{text}"
        );
    }
    let verify = ws.ml2b().args(["verify"]).output().unwrap();
    assert!(verify.status.success(), "{}", stderr(&verify));
}

/// How many units each shard of the plan `plan` (in the store of `ws`) holds.
fn shard_sizes(ws: &Workspace, plan: &str) -> Vec<usize> {
    let plan = ml2b::cluster::Plan::get(&ws.store(), &plan.parse().unwrap()).unwrap();
    (0..plan.shards).map(|shard| plan.shard_len(shard)).collect()
}

/// This host's address on the cluster's network: the source of a route to the controller
/// that slurm.conf names (`SlurmctldHost=ctl(ADDRESS)`), which the compute nodes reach.
fn host_address_on_cluster(conf: &std::path::Path) -> String {
    let text = std::fs::read_to_string(conf).unwrap();
    let ctl = text
        .lines()
        .find_map(|l| l.strip_prefix("SlurmctldHost="))
        .and_then(|v| v.split_once('(')?.1.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{}: no SlurmctldHost=name(address)", conf.display()));
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    socket.connect((ctl, 6817)).unwrap();
    socket.local_addr().unwrap().ip().to_string()
}

/// The store on S3 (a moto server on this host's address on the cluster's network, which the
/// nodes reach with the `AWS_*` settings the submission exports): the nodes share no store
/// directory, only the URL. `ml2b run --engine slurm` commits from the nodes what a local
/// run into a local store commits, `ml2b status` reads the plan's jobs and summaries from
/// the bucket, `verify` passes there and nothing is written to a local store.
#[test]
fn run_on_slurm_into_an_s3_store_matches_a_local_run() {
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let (conf, shared) = cluster();
    let server = crate::s3::Server::start_on(&host_address_on_cluster(&conf));
    let env = server.endpoint().env();
    let ws = toy_in(Workspace::new_in(&shared));
    let local = ws.dir.path().join("local-store");
    let on_s3 = || {
        let mut cmd = ws.ml2b();
        cmd.envs(env.clone())
            .env("ML2B_STORE", crate::s3::URL)
            .env("SLURM_CONF", &conf);
        cmd
    };
    let started = std::time::Instant::now();
    let here = json_of(
        ws.ml2b()
            .env("ML2B_STORE", &local)
            .args(["--json", "run", "--models", "reference"]),
    );
    let local_s = started.elapsed().as_secs_f64();
    // The benchmark's Slurm defaults (manifests/cluster.toml) reach sbatch.
    write(
        &ws.dir.path().join("manifests/cluster.toml"),
        "[slurm]\nmax_running = 2\nsbatch_args = [\"--comment=from-cluster-toml\"]\n",
    );
    let started = std::time::Instant::now();
    let there = json_of(on_s3().args(["--json", "run", "--models", "reference", "--engine", "slurm"]));
    // Printed for the record, one run each (nothing asserted on time).
    println!(
        "ml2b run, 2 units: into a local store here {local_s:.1} s, into S3 through Slurm {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for r in [&here, &there] {
        assert!(r["problems"].as_array().is_some_and(Vec::is_empty), "{r}");
    }
    for sql in [
        "SELECT event_id FROM generate ORDER BY 1",
        "SELECT unit_key, outcome, predictions_blake3 FROM execute ORDER BY 1",
        "SELECT competition, format, valid, score FROM grade ORDER BY 1, 2",
    ] {
        let query = ["--json", "query", sql];
        let local_rows = json_of(ws.ml2b().env("ML2B_STORE", &local).args(query));
        let s3_rows = json_of(on_s3().args(query));
        assert_eq!(s3_rows, local_rows, "{sql}");
        assert!(
            s3_rows.as_array().is_some_and(|r| r.len() == 2),
            "{sql}: {s3_rows}"
        );
    }
    let hosts = json_of(on_s3().args(["--json", "query", "SELECT DISTINCT host FROM execute"]));
    for row in hosts.as_array().unwrap() {
        assert!(["n1", "n2"].contains(&row["host"].as_str().unwrap()), "{hosts}");
    }
    // The plan's folder is keys in the bucket: its job and its shards' summaries.
    let plans = json_of(on_s3().args(["--json", "status"]));
    let plan = &plans.as_array().unwrap()[0];
    assert_eq!(plan["stage"], "execute", "{plans}");
    assert_eq!(
        (plan["planned"].as_u64(), plan["committed"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(plan["failed"], serde_json::json!([]), "{plan}");
    let job = plan["jobs"][0]["job_id"].as_str().unwrap().to_string();
    assert!(stdout_of(on_s3().arg("log")).contains(&format!(" slurm {job}_")));
    let shown = stdout_of(
        Command::new("scontrol")
            .env("SLURM_CONF", &conf)
            .args(["show", "job", &job]),
    );
    assert!(
        shown.contains("Comment=from-cluster-toml") && shown.contains("ArrayTaskThrottle=2"),
        "{shown}"
    );
    stdout_of(on_s3().arg("verify"));
    assert!(
        ws.store_path().read_dir().is_err(),
        "nothing went to a local store"
    );
}

/// A searching agent's generate on Slurm: `ml2b stage generate --agent aide --engine slurm`
/// plans the searches here and the compute nodes run them (the model is a scripted server on
/// this host's address on the cluster's network; each attempt's validation run is in the
/// node's sandbox). The journal and the submissions are those of the same search run here
/// into a local store, and every generate and journal segment was written on a node.
#[test]
fn aide_searches_on_slurm_take_the_path_a_local_search_takes() {
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let (conf, shared) = cluster();
    let host = host_address_on_cluster(&conf);
    let (port, seen) = crate::aide::scripted_on(&host, Default::default());
    let mut there = toy_in(Workspace::new_in(&shared));
    let here = crate::competitions::toy();
    for ws in [&here, &there] {
        crate::common::add_model_at(ws, &host, port);
        crate::common::ml2b(ws, &["stage", "translate-validate"]);
    }
    there.env = vec![("SLURM_CONF".into(), conf.display().to_string())];
    let generate = |ws: &Workspace, engine: &[&str]| {
        let args = [
            &["--json", "stage", "generate", "--langs", "en"][..],
            &crate::aide::SEARCH,
            engine,
        ]
        .concat();
        crate::common::ml2b(ws, &args).0
    };
    let started = std::time::Instant::now();
    generate(&here, &[]);
    let local_s = started.elapsed().as_secs_f64();
    let asked_here = seen.lock().unwrap().requests.len();
    let started = std::time::Instant::now();
    let run = generate(&there, &["--engine", "slurm", "--max-running", "2"]);
    // Printed for the record, one run each (nothing asserted on time).
    println!(
        "one aide search of {asked_here} steps: here {local_s:.1} s, through Slurm {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(
        (run["planned"].as_u64(), run["committed"].as_u64()),
        (Some(1), Some(1)),
        "{run}"
    );
    assert_eq!(run["stage"], "generate", "{run}");
    assert_eq!(run["failed"], serde_json::json!([]), "{run}");
    assert_eq!(
        seen.lock().unwrap().requests.len(),
        2 * asked_here,
        "the nodes asked what the local search asked"
    );
    for sql in [
        "SELECT unit_key, agent, code_blake3, attempts, input_tokens FROM generate",
        "SELECT step, stage, node, parent, code_blake3, outcome, metric, is_buggy FROM journal ORDER BY step",
    ] {
        let (a, b) = (
            crate::common::query(&here, sql),
            crate::common::query(&there, sql),
        );
        assert_eq!(b, a, "{sql}");
        assert!(b.as_array().is_some_and(|r| !r.is_empty()), "{sql}");
    }
    for log in ["generate", "journal"] {
        let hosts = crate::common::query(&there, &format!("SELECT DISTINCT host FROM {log}"));
        for row in hosts.as_array().unwrap() {
            assert!(
                ["n1", "n2"].contains(&row["host"].as_str().unwrap()),
                "{log}: {hosts}"
            );
        }
    }
    // Done: a second submission plans nothing.
    let again = generate(&there, &["--engine", "slurm"]);
    assert_eq!(again["planned"], 0, "{again}");
}

/// `ml2b run --agent aide --engine slurm`: the searches and the executions both go to the
/// cluster (grade and analyze run here), and the search submits what it submits here.
#[test]
fn run_with_a_searching_agent_on_slurm_searches_and_executes_on_the_nodes() {
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let (conf, shared) = cluster();
    let host = host_address_on_cluster(&conf);
    let (port, _) = crate::aide::scripted_on(&host, Default::default());
    let mut ws = toy_in(Workspace::new_in(&shared));
    crate::common::add_model_at(&ws, &host, port);
    ws.env = vec![("SLURM_CONF".into(), conf.display().to_string())];
    // aide's scripted search, without its `--model` (run takes `--models`).
    let search = &crate::aide::SEARCH[..10];
    let run = [
        &["--json", "run", "--models", "fake", "--langs", "en"][..],
        search,
        &["--engine", "slurm", "--max-running", "2"],
    ]
    .concat();
    let (report, _) = crate::common::ml2b(&ws, &run);
    assert!(
        report["problems"].as_array().is_some_and(Vec::is_empty),
        "{report}"
    );
    for log in ["generate", "journal", "execute"] {
        let hosts = crate::common::query(&ws, &format!("SELECT DISTINCT host FROM {log}"));
        let rows = hosts.as_array().unwrap();
        assert!(!rows.is_empty(), "{log}: no events");
        for row in rows {
            assert!(
                ["n1", "n2"].contains(&row["host"].as_str().unwrap()),
                "{log}: {hosts}"
            );
        }
    }
    let graded = crate::common::query(&ws, "SELECT valid, host FROM grade");
    assert_eq!(graded[0]["valid"], true, "{graded}");
    assert_eq!(graded[0]["host"], ml2b::log::event::host_name(), "graded here");
    let runs = crate::common::query(&ws, "SELECT model FROM runs");
    assert_eq!(runs, serde_json::json!([{"model": "fake+aide"}]));
}

/// The task states' source the test cluster offers: `sacct` when it keeps accounting
/// (slurmdbd), else the controller's `scontrol show job`.
fn task_state_source(conf: &std::path::Path) -> &'static str {
    let text = std::fs::read_to_string(conf).unwrap();
    match text
        .lines()
        .any(|l| l.trim() == "AccountingStorageType=accounting_storage/slurmdbd")
    {
        true => "task states from sacct)",
        false => "task states from scontrol show job; sacct: ",
    }
}

/// This build's ml2b at a path the nodes lack (they see its target dir and the shared dir,
/// not a folder beside the target dir: a hard link there, or a copy across filesystems),
/// and the folder, which goes when dropped.
fn ml2b_not_on_the_nodes() -> (PathBuf, tempfile::TempDir) {
    let built = std::path::Path::new(env!("CARGO_BIN_EXE_ml2b"));
    let beside = built
        .ancestors()
        .nth(3)
        .expect("<target>/debug/ml2b has a parent dir");
    let elsewhere = tempfile::Builder::new()
        .prefix("ml2b-not-on-the-nodes-")
        .tempdir_in(beside)
        .unwrap();
    let exe = elsewhere.path().join("ml2b");
    if std::fs::hard_link(built, &exe).is_err() {
        std::fs::copy(built, &exe).unwrap();
    }
    (exe, elsewhere)
}

/// `ml2b run --models reference --engine slurm` by `ml2b` in the workspace, which must exit
/// 1 printing no headline and no run hash; its stderr.
fn run_failing(ml2b: &mut Command, ws: &Workspace, conf: &std::path::Path) -> String {
    let out = ml2b
        .current_dir(ws.dir.path())
        .env("SLURM_CONF", conf)
        .env_remove("RUST_LOG")
        .args([
            "run",
            "--models",
            "reference",
            "--engine",
            "slurm",
            "--max-running",
            "2",
        ])
        .output()
        .unwrap();
    let (stdout, err) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
    println!("{err}");
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{err}");
    assert!(
        !stdout.lines().any(|l| l.starts_with("run ")) && !stdout.contains("pass_rate"),
        "no run hash and no headline: {stdout}"
    );
    err
}

/// The issue's cluster whose nodes could not start ml2b (it was not mounted at the same path
/// on them): `ml2b run --engine slurm` started from a copy of ml2b where the nodes have none.
/// Every task's script fails before ml2b starts (exit 127); the run exits 1 naming each task,
/// its state, exit code and output (whose last line says why), prints no headline and no run
/// hash, and nothing is committed as a verdict. `ml2b status --plan` says the same, exit 1.
#[test]
fn a_run_whose_nodes_cannot_start_ml2b_fails_naming_each_task() {
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let (conf, shared) = cluster();
    let ws = toy_in(Workspace::new_in(&shared));
    let (exe, _keep) = ml2b_not_on_the_nodes();
    let err = run_failing(Command::new(&exe).env("ML2B_STORE", ws.store_path()), &ws, &conf);

    let plans = json_of(ws.ml2b().args(["--json", "status"]));
    let plan = plans[0]["plan"].as_str().unwrap().to_string();
    let job = plans[0]["jobs"][0]["job_id"].as_str().unwrap().to_string();
    assert_eq!(plans[0]["shards"], 2, "{plans}");
    assert!(err.contains("error: the cluster run of execute failed"), "{err}");
    let undone = undone_tasks(&err, &job);
    assert!(
        err.contains(&format!(
            "{} of the 2 Slurm tasks of plan {} ended",
            undone.len(),
            &plan[..12]
        )),
        "{err}"
    );
    assert!(err.contains(task_state_source(&conf)), "{err}");
    let dir = ws.store_path().join("cluster").join(&plan);
    for &shard in &undone {
        let output = format!("output: {}", dir.join(format!("{shard}.out")).display());
        assert!(err.contains(&output), "{output}\n{err}");
    }
    assert!(
        err.contains("    | ") && err.contains(&format!("{}: not found", exe.display())),
        "the outputs' last lines: {err}"
    );
    assert!(
        execute_keys(&ws.store_path()).is_empty(),
        "no execution committed"
    );
    let grade = StageLog::new(&ws.store(), "grade").unwrap();
    assert!(grade.list().unwrap().is_empty(), "no grade committed");

    let status = ws.ml2b().args(["status", "--plan", &plan]).output().unwrap();
    let shown = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(1), "{shown}\n{}", stderr(&status));
    assert!(
        shown.contains("  units     0 of 2 committed, 0 failed")
            && shown.contains(&format!(
                "tasks     ended; {} left their shard undone",
                undone.len()
            ))
            && undone
                .iter()
                .all(|s| shown.contains(&format!("UNDONE    task {job}_{s} (shard {s}"))),
        "{shown}"
    );
    // A client whose slurm.conf keeps no accounting gets the same from the controller.
    let conf_text = std::fs::read_to_string(&conf).unwrap();
    let no_accounting = ws.dir.path().join("slurm-no-accounting.conf");
    let accounting = regex::Regex::new(r"(?m)^AccountingStorageType=.*$").unwrap();
    write(
        &no_accounting,
        accounting
            .replace(&conf_text, "AccountingStorageType=accounting_storage/none")
            .into_owned(),
    );
    let status = ws
        .ml2b()
        .env("SLURM_CONF", &no_accounting)
        .args(["--json", "status", "--plan", &plan])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1), "{}", stderr(&status));
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(
        status["tasks"]["source"],
        serde_json::json!({"scontrol": {"sacct": "Slurm accounting storage is disabled"}}),
        "{status}"
    );
    let faults: Vec<(u64, &str, &str)> = status["tasks"]["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let field = |k: &str| f[k].as_str().unwrap_or_default();
            (f["shard"].as_u64().unwrap(), field("state"), field("exit_code"))
        })
        .collect();
    let expected: Vec<(u64, &str, &str)> = undone
        .iter()
        .map(|&s| (u64::from(s), "FAILED", "127:0"))
        .collect();
    assert_eq!(faults, expected, "{status}");
}

/// The shards of the tasks of `job` that `err` names as failed before ml2b started, each
/// with its uncommitted units, which add up to the toy's two: which shard holds a unit
/// follows from its key, so one shard may hold both (its task then leaves nothing undone).
fn undone_tasks(err: &str, job: &str) -> Vec<u32> {
    let task = regex::Regex::new(&format!(
        r"task {job}_(\d+) \(shard (\d+), (\d+) unit\(s\) uncommitted\): FAILED, exit code 127:0, on n"
    ))
    .unwrap();
    let mut units = 0;
    let shards: Vec<u32> = task
        .captures_iter(err)
        .map(|c| {
            assert_eq!(c[1], c[2], "task i runs shard i: {err}");
            units += c[3].parse::<usize>().unwrap();
            c[2].parse().unwrap()
        })
        .collect();
    assert_eq!(units, 2, "every uncommitted unit in a named task: {err}");
    shards
}

/// The same cluster with the store on S3: the tasks' output stays on their node, and the
/// error names that file on that node; nothing is committed to the bucket.
#[test]
fn a_run_into_s3_whose_nodes_cannot_start_ml2b_names_each_tasks_file_on_its_node() {
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let (conf, shared) = cluster();
    let server = crate::s3::Server::start_on(&host_address_on_cluster(&conf));
    let ws = toy_in(Workspace::new_in(&shared));
    let (exe, _keep) = ml2b_not_on_the_nodes();
    let mut ml2b = Command::new(&exe);
    ml2b.envs(server.endpoint().env())
        .env("ML2B_STORE", crate::s3::URL);
    let err = run_failing(&mut ml2b, &ws, &conf);
    let on_s3 = || {
        let mut cmd = ws.ml2b();
        cmd.envs(server.endpoint().env())
            .env("ML2B_STORE", crate::s3::URL);
        cmd
    };
    let plans = json_of(on_s3().args(["--json", "status"]));
    let plan = plans[0]["plan"].as_str().unwrap().to_string();
    let job = plans[0]["jobs"][0]["job_id"].as_str().unwrap().to_string();
    for shard in undone_tasks(&err, &job) {
        let output = regex::Regex::new(&format!(
            r"output: n\d:/tmp/ml2b-{plan}-{job}_{shard}\.log \(on the node"
        ))
        .unwrap();
        assert!(output.is_match(&err), "{output}\n{err}");
    }
    assert_eq!(
        (plans[0]["planned"].as_u64(), plans[0]["committed"].as_u64()),
        (Some(2), Some(0)),
        "nothing committed: {plans}"
    );
}

/// `--network proxy` on the nodes: each task starts its own squid, and code a model wrote
/// downloads from the allowed host (a server on this host, named by the manifest), is
/// refused the blocked one, and the events the nodes commit record it, as a local run's do.
#[test]
fn execute_on_slurm_goes_out_through_a_proxy_on_each_node() {
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let (conf, shared) = cluster();
    let ws = toy_in(Workspace::new_in(&shared));
    let host = host_address_on_cluster(&conf);
    let (allowed, blocked, allowed_hits, blocked_hits) = crate::network::internet_in(&ws, &host);
    let code = format!("```python\n{}```", crate::network::solution(allowed, blocked));
    let (port, _) = crate::common::chat_server(move |_, _| (200, crate::common::completion(&code)));
    crate::common::add_model(&ws, port);
    let stage = |args: &[&str]| {
        let out = ws
            .ml2b()
            .env("ML2B_TEST_KEY", crate::common::KEY)
            .env("SLURM_CONF", &conf)
            .args(["--json", "stage"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    stage(&["generate", "--model", "fake", "--format", "mono", "--langs", "en"]);
    let run = stage(&[
        "execute",
        "--network",
        "proxy",
        "--engine",
        "slurm",
        "--shards",
        "1",
    ]);
    assert_eq!(run["committed"], 1, "{run}");
    let rows = crate::common::query(
        &ws,
        "SELECT network, requests_total, requests_denied, outcome, host, stdout_tail FROM execute",
    );
    let row = &rows[0];
    assert!(["n1", "n2"].contains(&row["host"].as_str().unwrap()), "{rows}");
    assert_eq!(row["network"], "proxy", "{rows}");
    assert_eq!(
        (row["requests_total"].as_u64(), row["requests_denied"].as_u64()),
        (Some(3), Some(1)),
        "{rows}"
    );
    assert_eq!(row["outcome"], "ok", "{rows}");
    let said = row["stdout_tail"].as_str().unwrap();
    for way in [
        "direct: failed ConnectionRefusedError",
        "dns: failed gaierror",
        "udp: failed OSError",
    ] {
        assert!(said.contains(way), "{way} on the node: {said}");
    }
    assert_eq!(allowed_hits.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(blocked_hits.load(std::sync::atomic::Ordering::SeqCst), 0);
}
