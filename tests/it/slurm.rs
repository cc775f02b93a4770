//! The Slurm cluster that `scripts/slurm-cluster up` starts (a controller and two compute
//! nodes, each a Docker container; `scripts/test` starts it and exports `SLURM_CONF` and
//! `ML2B_SHARED`): a job array submitted from this host with Debian's `sbatch` runs the
//! real `ml2b` on both compute nodes, each task grading a solution in the local sandbox
//! (bubblewrap inside the node) over a root on the shared directory, with the score that the
//! same command gives on this host. Nothing here fakes Slurm.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::common::{Workspace, stderr, write};
use crate::competitions::toy_in;

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
    (var("SLURM_CONF"), var("ML2B_SHARED"))
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
        .args(["--wait", "--parsable", "--array=0-3", "--ntasks=1", "--cpus-per-task=1"])
        .arg(format!("--output={}/%a.log", out.display()))
        .arg(&job)
        .output()
        .unwrap();
    assert!(
        submitted.status.success(),
        "sbatch: {}\n{}",
        stderr(&submitted),
        String::from_utf8_lossy(&submitted.stdout)
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
