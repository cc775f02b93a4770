//! Running a stage's units on a Slurm cluster: the store on a filesystem every node sees at
//! the same path, the units handed to Slurm as one job array, progress read from the log.
//!
//! ```text
//!  ml2b stage execute --engine slurm            (the submitting host)
//!     │ plan: the units the store lacks (planned − committed), exactly as a local run
//!     │ freeze: Plan {stage, settings, units, shards B} ──► objects.put ──► hash P
//!     │ sbatch --array=0-(B-1)%K --requeue  ──►  task i:  ml2b worker --plan P --shard i
//!     │                                                   │ runs the still-uncommitted units
//!     │                                                   │ whose key is in shard i
//!     │                                                   │ (first 8 bytes of the key mod B)
//!     │                                                   └─► the same runner, sandbox,
//!     │                                                       commit protocol and events
//!     │ records the arrays' job ids ──► cluster/<P>/jobs.jsonl
//!     │ waits: committed / planned units of P, read from the log, until the array ends
//!     └ checks how the tasks ended (sacct, else scontrol, else the run summaries): a
//!       task that left its shard's units uncommitted without running ml2b to its summary
//!       (never started, killed by Slurm) fails the run ([`tasks`])
//! ```
//!
//! No leases and no claims: a shard is a pure function of the unit key, so a requeued task
//! runs the same units, and a unit that runs twice (a task killed after its commit, two
//! submissions of one selection) costs compute but never a second event, because the
//! commit protocol drops a unit key the log already holds.
//!
//! A worker that gets SIGTERM (preemption, `scancel --signal=TERM`, the time limit's
//! warning) starts no unit, abandons those in flight (their sandboxes die with it), commits
//! what finished, requeues its own task (`scontrol requeue`) and exits: the task runs again
//! and resumes its shard, skipping what the log holds.
//!
//! The store is a directory every node sees at the same path, or S3 (`s3://BUCKET/PREFIX`,
//! which the nodes reach with the submitter's `AWS_*` settings): beside the log, in
//! `cluster/<P>/`, the plan's folder ([`folder`]) holds the Slurm jobs the plan was
//! submitted as ([`jobs`]) and each shard run's summary (on a directory store, the last
//! line of the worker's output `<shard>.out`; on S3, a key per run). Plans of more shards
//! than one array may hold (`MaxArraySize − 1`) are submitted as several arrays, one after
//! another ([`slurm`]). `ml2b status` reads all of it ([`status`]).

pub mod arrays;
pub mod engine;
pub mod folder;
pub mod jobs;
pub mod plan;
pub mod slurm;
pub mod status;
pub mod tasks;
pub mod term;

pub use engine::{ClusterError, ClusterRun};
pub use plan::{Plan, PlanError};
pub use slurm::{SlurmError, Submission};
pub use status::PlanStatus;
pub use tasks::TasksFailed;
