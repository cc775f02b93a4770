//! MLE-bench's grader names (`config.yaml` `grader.name`) and how ml2b grades each:
//! natively, with one of its exact metrics, or by running MLE-bench's own `grade.py` as a
//! grading program. (Provisional table of the integrator; the full table replaces it.)

use super::Metric;
use super::registry::Average;

/// How ml2b grades an MLE-bench grader.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MleGrader {
    /// One of ml2b's metrics computes exactly what every competition using the name does.
    Native {
        metric: Metric,
        note: Option<&'static str>,
    },
    /// MLE-bench's own grade.py, run in the sandbox.
    Program { why: &'static str },
}

/// How the grader named `name` is graded.
pub fn mle_bench_grader(name: &str) -> MleGrader {
    let native = |metric| MleGrader::Native { metric, note: None };
    match name {
        "accuracy" => native(Metric::Accuracy),
        "auc-roc" => native(Metric::RocAuc),
        "multi-class-log-loss" => native(Metric::LogLoss),
        "root-mean-squared-error" => native(Metric::Rmse),
        "mean-column-wise-rmsle" => native(Metric::RmsleMulti),
        "macro-f1-score" => native(Metric::F1(Average::Macro)),
        _ => MleGrader::Program {
            why: "no ml2b metric computes it exactly",
        },
    }
}
