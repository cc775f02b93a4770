//! How a plan's Slurm tasks ended, once its arrays have: the shards whose task left planned
//! units uncommitted without running them (the node could not start ml2b, Slurm killed the
//! task, …). The waiting submitter fails on them; `ml2b status --plan` shows them.
//!
//! A shard is *undone* when some of its planned units are not in the stage's log. An undone
//! shard is the stage's business (units that failed, which the worker reports and the run
//! summary lists) when its task ran `ml2b worker` to the end: the shard's latest run summary
//! exists and was not stopped, and Slurm's record of the task, when there is one, says the
//! task ended by itself with an exit code the worker gives (0, or 1 when a unit failed).
//! Any other undone shard is a *task fault*:
//!
//! - Slurm ended the task: NODE_FAIL, OUT_OF_MEMORY, TIMEOUT, CANCELLED, BOOT_FAIL, DEADLINE,
//!   PREEMPTED, … (every state but the running ones, COMPLETED and FAILED);
//! - no run summary: ml2b never started (the node has no such binary, 127) or died before
//!   it could report;
//! - its latest run was stopped (SIGTERM) and never resumed;
//! - an exit code no worker gives (a crash, a signal).
//!
//! A requeued task is judged by its latest run, so one that later succeeded is fine.
//!
//! Where the task states come from, the first that knows how every task ended (the report
//! names it):
//! 1. `sacct`, the accounting storage (slurmdbd), asked again for a few seconds while it
//!    lags behind the controller;
//! 2. `scontrol show job`, the controller, which forgets a job `MinJobAge` after it ended;
//! 3. neither: the shards' run summaries alone (a shard without one never started ml2b).
//!
//! A task no source knows is judged by its shard's run summary alone.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use serde::Serialize;

use super::arrays::Array;
use super::folder::{FolderError, PlanFolder};
use super::plan::Plan;
use super::slurm::{self, SlurmError};
use crate::log::View;
use crate::stages::RunSummary;
use crate::stages::shard_of;
use crate::store::{Hash, Store};

/// Lines of a faulty task's output shown with it.
const TAIL_LINES: usize = 10;
/// How often, a second apart, `sacct` is asked while it lacks the end of a task that the
/// controller says has ended (slurmctld tells slurmdbd a moment later, task by task).
const SETTLE_TRIES: u32 = 10;

/// Where the task states came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The accounting storage.
    Sacct,
    /// The controller; `sacct` said why not it.
    Scontrol { sacct: String },
    /// No task state: the run summaries alone; what `sacct` and `scontrol` said.
    Summaries { sacct: String, scontrol: String },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sacct => write!(f, "sacct"),
            Self::Scontrol { sacct } => write!(f, "scontrol show job; sacct: {sacct}"),
            Self::Summaries { sacct, scontrol } => write!(
                f,
                "none, the shards' run summaries only; sacct: {sacct}; scontrol: {scontrol}"
            ),
        }
    }
}

/// One array task as Slurm recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskState {
    /// The array's job id.
    pub job: String,
    /// The task's index in the array.
    pub index: u32,
    /// Slurm's job state (`FAILED`, `NODE_FAIL`, …; `CANCELLED by 0` is `CANCELLED`).
    pub state: String,
    /// `exit:signal` of the batch script, as Slurm writes it.
    pub exit_code: Option<String>,
    pub node: Option<String>,
}

/// How a task's state says it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It has not ended (pending, running, requeued, …).
    NotYet,
    /// Its script ended by itself: COMPLETED, or FAILED (a non-zero exit).
    ByItself,
    /// Slurm ended it (or it never ran): every other state.
    BySlurm,
}

impl TaskState {
    pub fn ending(&self) -> Ending {
        match self.state.as_str() {
            "COMPLETED" | "FAILED" => Ending::ByItself,
            "PENDING" | "RUNNING" | "REQUEUED" | "REQUEUE_FED" | "REQUEUE_HOLD" | "RESIZING"
            | "SUSPENDED" | "CONFIGURING" | "COMPLETING" | "SIGNALING" | "STAGE_OUT" | "STOPPED"
            | "RESV_DEL_HOLD" | "SPECIAL_EXIT" => Ending::NotYet,
            _ => Ending::BySlurm,
        }
    }

    /// Whether the exit code is one that `ml2b worker` gives (0; 1 when a unit failed), or
    /// unknown.
    fn worker_exit(&self) -> bool {
        self.exit_code
            .as_deref()
            .is_none_or(|code| code == "0:0" || code == "1:0")
    }
}

/// `sacct --noheader --parsable2 --allocations --format=`[`slurm::SACCT_FIELDS`]: one
/// `JobID|State|ExitCode|NodeList` line per task (`42_3|CANCELLED by 0|0:15|n2`). Lines
/// that are not one array task (a range still pending, `42_[4-9]`; a step) are skipped.
pub fn parse_sacct(text: &str) -> Vec<TaskState> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.trim().split('|');
            let (id, state, exit, node) = (fields.next()?, fields.next()?, fields.next()?, fields.next()?);
            let (job, index) = id.split_once('_')?;
            Some(TaskState {
                job: job.to_string(),
                index: index.parse().ok()?,
                state: state.split_whitespace().next()?.to_string(),
                exit_code: Some(exit.to_string()).filter(|e| !e.is_empty()),
                node: Some(node.to_string()).filter(|n| !n.is_empty() && n != "None assigned"),
            })
        })
        .collect()
}

/// `scontrol --oneliner show job A`: one line of `Key=Value` words per task of the array
/// `A` (`ArrayJobId=A ArrayTaskId=3 … JobState=FAILED … ExitCode=127:0 … NodeList=n1 …`).
/// A range of tasks still pending (`ArrayTaskId=4-9`) is skipped.
pub fn parse_scontrol(text: &str) -> Vec<TaskState> {
    text.lines()
        .filter_map(|line| {
            let fields: HashMap<&str, &str> = line
                .split_whitespace()
                .filter_map(|w| w.split_once('='))
                .collect();
            let known = |key: &str| {
                fields
                    .get(key)
                    .filter(|v| !v.is_empty() && **v != "(null)")
                    .map(|v| v.to_string())
            };
            Some(TaskState {
                job: known("ArrayJobId")?,
                index: fields.get("ArrayTaskId")?.parse().ok()?,
                state: known("JobState")?,
                exit_code: known("ExitCode"),
                node: known("NodeList"),
            })
        })
        .collect()
}

/// A shard that its task left undone.
#[derive(Clone, Debug, Serialize)]
pub struct TaskFault {
    /// The array's job id and the task's index in it.
    pub job: String,
    pub index: u32,
    pub shard: u32,
    /// Slurm's record of the task, when the source has one.
    pub state: Option<String>,
    pub exit_code: Option<String>,
    pub node: Option<String>,
    /// The shard's planned units that the log lacks.
    pub uncommitted: usize,
    /// What went wrong, besides the state.
    pub why: String,
    /// Where the task's output is.
    pub output: String,
    /// Its last lines, when it can be read from here.
    pub tail: Vec<String>,
}

impl fmt::Display for TaskFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "task {}_{} (shard {}, {} unit(s) uncommitted): ",
            self.job, self.index, self.shard, self.uncommitted
        )?;
        match &self.state {
            Some(state) => write!(f, "{state}")?,
            None => write!(f, "state unknown")?,
        }
        if let Some(code) = &self.exit_code {
            write!(f, ", exit code {code}")?;
        }
        if let Some(node) = &self.node {
            write!(f, ", on {node}")?;
        }
        write!(f, "; {}\n    output: {}", self.why, self.output)?;
        for line in &self.tail {
            write!(f, "\n    | {line}")?;
        }
        Ok(())
    }
}

/// How a plan's tasks ended.
#[derive(Clone, Debug, Serialize)]
pub struct TaskReport {
    pub source: Source,
    /// The tasks whose state the source gave.
    pub known: usize,
    pub faults: Vec<TaskFault>,
}

/// The tasks of a plan whose arrays ended left shards undone: the run's work is not done.
#[derive(Debug, thiserror::Error)]
pub struct TasksFailed {
    pub plan: Hash,
    pub shards: u32,
    pub report: TaskReport,
}

impl fmt::Display for TasksFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of the {} Slurm tasks of plan {} ended without running their shard, whose units are \
             not committed (task states from {}):",
            self.report.faults.len(),
            self.shards,
            self.plan.short(),
            self.report.source
        )?;
        for fault in &self.report.faults {
            write!(f, "\n  {fault}")?;
        }
        Ok(())
    }
}

/// The shards of `plan` (stored as `hash`, submitted as `arrays`, which have ended) that
/// their tasks left undone, counting committed units in `view` (the stage's log).
pub fn check(
    store: &Store,
    hash: &Hash,
    plan: &Plan,
    arrays: &[Array],
    view: &View,
) -> Result<TaskReport, FolderError> {
    let folder = PlanFolder::new(store, *hash);
    let (source, states) = states(arrays);
    let known = states.len();
    let tasks: HashMap<(String, u32), TaskState> = states
        .into_iter()
        .map(|t| ((t.job.clone(), t.index), t))
        .collect();
    let mut undone = vec![0usize; plan.shards as usize];
    for key in plan.units.iter().filter(|k| !view.contains(k)) {
        undone[shard_of(key, plan.shards) as usize] += 1;
    }
    let summaries = folder.latest_summaries(plan.shards)?;
    let mut faults = Vec::new();
    for array in arrays {
        for index in 0..array.shards {
            let shard = array.first + index;
            let uncommitted = undone.get(shard as usize).copied().unwrap_or(0);
            if uncommitted == 0 {
                continue;
            }
            let task = tasks.get(&(array.job_id.clone(), index));
            let Some(why) = judge(task, summaries.get(&shard)) else {
                continue;
            };
            let node = task.and_then(|t| t.node.clone());
            faults.push(TaskFault {
                job: array.job_id.clone(),
                index,
                shard,
                state: task.map(|t| t.state.clone()),
                exit_code: task.and_then(|t| t.exit_code.clone()),
                output: folder.task_output(shard, &array.job_id, index, node.as_deref()),
                tail: folder.output_tail(shard, TAIL_LINES),
                node,
                uncommitted,
                why: why.into(),
            });
        }
    }
    Ok(TaskReport {
        source,
        known,
        faults,
    })
}

/// Why an undone shard is its task's fault rather than the stage's, if it is: its task's
/// state (when known) and its latest run summary (when any).
pub fn judge(task: Option<&TaskState>, summary: Option<&RunSummary>) -> Option<&'static str> {
    let ending = task.map(TaskState::ending);
    if ending == Some(Ending::BySlurm) {
        return Some("Slurm ended the task");
    }
    match summary {
        None => Some("no run summary: ml2b never started on the node, or died before it could report"),
        Some(s) if s.interrupted => Some("its latest run was stopped (SIGTERM) and never resumed"),
        Some(_) if task.is_some_and(|t| !t.worker_exit()) => {
            Some("ml2b's run did not end as a worker's does (exit code 0, or 1 when a unit failed)")
        }
        Some(_) => None,
    }
}

/// The arrays' task states, from the first source that answers for every task (else the
/// one that knows some).
fn states(arrays: &[Array]) -> (Source, Vec<TaskState>) {
    let (sacct, partial) = match accounted(arrays) {
        Ok(states) if ended_tasks(arrays, &states) == task_count(arrays) => {
            return (Source::Sacct, states);
        }
        Ok(states) => {
            let held = ended_tasks(arrays, &states);
            let why = format!("holds the end of {held} of the {} tasks", task_count(arrays));
            (why, states)
        }
        Err(why) => (why, Vec::new()),
    };
    let mut states = Vec::new();
    let mut unknown = Vec::new();
    for array in arrays {
        match slurm::show_job(&array.job_id) {
            Ok(text) => states.extend(parse_scontrol(&text)),
            Err(e) => unknown.push(format!("job {}: {}", array.job_id, e.reason())),
        }
    }
    match (states.is_empty(), partial.is_empty()) {
        (false, _) => (Source::Scontrol { sacct }, states),
        (true, false) => (Source::Sacct, partial),
        (true, true) => {
            let scontrol = unknown.join("; ");
            (Source::Summaries { sacct, scontrol }, Vec::new())
        }
    }
}

/// The tasks of `arrays`.
fn task_count(arrays: &[Array]) -> usize {
    arrays.iter().map(|a| a.shards as usize).sum()
}

/// How many tasks of `arrays` have ended according to `states`.
fn ended_tasks(arrays: &[Array], states: &[TaskState]) -> usize {
    let ours = |t: &&TaskState| arrays.iter().any(|a| a.job_id == t.job && t.index < a.shards);
    let ended: std::collections::HashSet<(&str, u32)> = states
        .iter()
        .filter(ours)
        .filter(|t| t.ending() != Ending::NotYet)
        .map(|t| (t.job.as_str(), t.index))
        .collect();
    ended.len()
}

/// The arrays' task states from `sacct`, once it holds the end of every task (or after
/// [`SETTLE_TRIES`] asks); why not, when it keeps no accounting or holds no record of them.
fn accounted(arrays: &[Array]) -> Result<Vec<TaskState>, String> {
    let mut tries = 0;
    loop {
        let states = parse_sacct(&slurm::sacct(arrays).map_err(|e: SlurmError| e.reason())?);
        tries += 1;
        if ended_tasks(arrays, &states) == task_count(arrays) || tries >= SETTLE_TRIES {
            return match states.is_empty() {
                true => Err("holds no record of the jobs".into()),
                false => Ok(states),
            };
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sacct_lines_are_read_as_array_tasks_and_classified() {
        let text = "42_0|COMPLETED|0:0|n1\n\
                    42_1|FAILED|127:0|n2\n\
                    42_2|FAILED|1:0|n1\n\
                    42_3|NODE_FAIL|0:0|n2\n\
                    42_4|OUT_OF_MEMORY|0:125|n1\n\
                    42_5|TIMEOUT|0:0|n2\n\
                    42_6|CANCELLED by 0|0:15|n1\n\
                    42_7|CANCELLED by 0|0:0|None assigned\n\
                    42_8|BOOT_FAIL|0:0|n2\n\
                    42_9|RUNNING|0:0|n1\n\
                    42_[10-12]|PENDING|0:0|None assigned\n";
        let tasks = parse_sacct(text);
        type Seen<'a> = (u32, &'a str, Option<&'a str>, Option<&'a str>, Ending);
        let seen: Vec<Seen> = tasks
            .iter()
            .map(|t| {
                assert_eq!(t.job, "42");
                (
                    t.index,
                    t.state.as_str(),
                    t.exit_code.as_deref(),
                    t.node.as_deref(),
                    t.ending(),
                )
            })
            .collect();
        use Ending::*;
        assert_eq!(
            seen,
            vec![
                (0, "COMPLETED", Some("0:0"), Some("n1"), ByItself),
                (1, "FAILED", Some("127:0"), Some("n2"), ByItself),
                (2, "FAILED", Some("1:0"), Some("n1"), ByItself),
                (3, "NODE_FAIL", Some("0:0"), Some("n2"), BySlurm),
                (4, "OUT_OF_MEMORY", Some("0:125"), Some("n1"), BySlurm),
                (5, "TIMEOUT", Some("0:0"), Some("n2"), BySlurm),
                (6, "CANCELLED", Some("0:15"), Some("n1"), BySlurm),
                (7, "CANCELLED", Some("0:0"), None, BySlurm),
                (8, "BOOT_FAIL", Some("0:0"), Some("n2"), BySlurm),
                (9, "RUNNING", Some("0:0"), Some("n1"), NotYet),
            ],
            "the pending range is no task yet"
        );
        // sacct holds the end of 9 of the array's 13 tasks: not yet all of them.
        let array = Array {
            job_id: "42".into(),
            first: 0,
            shards: 13,
        };
        assert_eq!(
            (
                ended_tasks(std::slice::from_ref(&array), &tasks),
                task_count(&[array])
            ),
            (9, 13)
        );
    }

    #[test]
    fn scontrol_lines_are_read_as_array_tasks() {
        let text = "JobId=2 ArrayJobId=1 ArrayTaskId=0 ArrayTaskThrottle=2 JobName=job.sh \
                    JobState=FAILED Reason=NonZeroExitCode Dependency=(null) Requeue=1 \
                    ExitCode=127:0 RunTime=00:00:00 NodeList=n1 BatchHost=n1 StdOut=/x/slurm.log \n\
                    JobId=1 ArrayJobId=1 ArrayTaskId=2-3 JobState=PENDING ExitCode=0:0 NodeList=(null)\n\
                    JobId=4 ArrayJobId=1 ArrayTaskId=1 JobState=CANCELLED ExitCode=0:0 NodeList=(null)\n";
        assert_eq!(
            parse_scontrol(text),
            vec![
                TaskState {
                    job: "1".into(),
                    index: 0,
                    state: "FAILED".into(),
                    exit_code: Some("127:0".into()),
                    node: Some("n1".into()),
                },
                TaskState {
                    job: "1".into(),
                    index: 1,
                    state: "CANCELLED".into(),
                    exit_code: Some("0:0".into()),
                    node: None,
                },
            ]
        );
    }

    /// A task that ran ml2b to its summary leaves its failed units to the stage; every other
    /// way of ending with units uncommitted is the task's fault.
    #[test]
    fn an_undone_shard_is_the_tasks_fault_unless_ml2b_ran_to_its_summary() {
        let task = |state: &str, exit: &str| TaskState {
            job: "42".into(),
            index: 0,
            state: state.into(),
            exit_code: Some(exit.into()),
            node: Some("n1".into()),
        };
        let finished = RunSummary {
            failed: vec![("toy/en".into(), "boom".into())],
            ..RunSummary::default()
        };
        let stopped = RunSummary {
            interrupted: true,
            ..RunSummary::default()
        };
        let ok = |t: Option<&TaskState>, s: Option<&RunSummary>| judge(t, s).is_none();
        // ml2b ran and a unit failed: the stage's business.
        assert!(ok(Some(&task("FAILED", "1:0")), Some(&finished)));
        assert!(ok(Some(&task("COMPLETED", "0:0")), Some(&finished)));
        assert!(
            ok(None, Some(&finished)),
            "no state known: the summary says it ran"
        );
        // The node could not start ml2b: no summary, exit 127.
        assert!(!ok(Some(&task("FAILED", "127:0")), None));
        assert!(!ok(None, None), "no state known and no summary: never started");
        // A summary from an earlier run does not excuse a later run that crashed.
        assert!(!ok(Some(&task("FAILED", "0:9")), Some(&finished)));
        assert!(!ok(Some(&task("FAILED", "101:0")), Some(&finished)));
        assert!(!ok(Some(&task("COMPLETED", "0:0")), Some(&stopped)));
        for state in [
            "NODE_FAIL",
            "OUT_OF_MEMORY",
            "TIMEOUT",
            "CANCELLED",
            "BOOT_FAIL",
            "DEADLINE",
            "PREEMPTED",
        ] {
            assert_eq!(
                judge(Some(&task(state, "0:0")), Some(&finished)),
                Some("Slurm ended the task"),
                "{state}"
            );
        }
    }
}
