"""Runs MLE-bench's own grader (a competition's grade.py) on one submission, in ml2b's
sandbox: no network, everything read-only but /out.

The sandbox starts every program with the harness's command line
(`--code --mode --spec --train --test --out --result`); this driver reads only `--result`,
`--out` and the folder of `--train`, which holds:

    submission.csv                      the submission, in the sample submission's shape
    answers.csv                         the competition's private answers, as prepared
    grader/mlebench/competitions/<id>/  grade.py and the competition's other modules
    grader/mlebench/competitions/utils.py, grader/mlebench/metrics.py   (when the checkout has them)

`mlebench.grade_helpers` (InvalidSubmissionError) and `mlebench.utils` (get_logger,
read_csv) are provided here, so the grader runs without MLE-bench's own dependencies
(kaggle, py7zr). Both files are read as MLE-bench reads them (pandas, float_precision
"round_trip"); the score is returned unrounded (ml2b's medal rule rounds it to 5 places as
MLE-bench's Grader does).

The grader's module is imported first; once it loaded, the driver prints `ml2b-harness:
ready` on stdout. A grader that cannot load (a missing library, a broken environment) ends
without that line, which ml2b records as a fault of the grading environment, not as a
verdict on the submission. With a file `preflight` in the data folder the driver stops
there (ok, score 0): ml2b's check that the grader loads, before a run.

Result (`--result`): {"success": true, "outcome": "ok", "score": s} and exit 0, with a
one-row Parquet file (`--out`, column `score`) as every ok run leaves; or {"success":
false, "outcome": "bad_predictions", "reason": "..."} (the grader raised
InvalidSubmissionError, or returned something that is not a finite number) or
{"outcome": "runtime_error", "reason": "...", "traceback": "..."} (it crashed), exit 1.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import math
import sys
import traceback
import types
from pathlib import Path


# The first line on stdout once the grader loaded (ml2b's sandbox::run::READY).
READY = "ml2b-harness: ready"
# A file in the data folder that asks only whether the grader loads (ml2b's preflight).
PREFLIGHT = "preflight"


class InvalidSubmissionError(Exception):
    """MLE-bench's: the submission cannot be graded."""


def read_csv(*args, **kwargs):
    import pandas as pd

    try:
        return pd.read_csv(*args, **{"float_precision": "round_trip", **kwargs})
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def install_shims(grader: Path) -> None:
    package = types.ModuleType("mlebench")
    package.__path__ = [str(grader / "mlebench")]
    helpers = types.ModuleType("mlebench.grade_helpers")
    helpers.InvalidSubmissionError = InvalidSubmissionError
    utils = types.ModuleType("mlebench.utils")
    utils.get_logger = logging.getLogger
    utils.read_csv = read_csv
    sys.modules.update({"mlebench": package, "mlebench.grade_helpers": helpers, "mlebench.utils": utils})


def competition(grader: Path) -> str:
    found = sorted(p.parent.name for p in (grader / "mlebench/competitions").glob("*/grade.py"))
    if len(found) != 1:
        raise RuntimeError(f"expected one competition's grade.py under the grader, found {found}")
    return found[0]


def write(result_path: str, record: dict) -> None:
    Path(result_path).write_text(json.dumps(record))


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ["code", "mode", "spec", "train", "test", "out", "result"]:
        parser.add_argument(f"--{name}", required=True)
    args = parser.parse_args()
    data = Path(args.train).parent
    grader = data / "grader"
    install_shims(grader)
    # The grader and its libraries load before anything is read: a grader that cannot load
    # is a fault of the grading environment, never a verdict on the submission. The line
    # READY on stdout tells ml2b the grader loaded (a run without it is `sandbox_error`).
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401

    module = importlib.import_module(f"mlebench.competitions.{competition(grader)}.grade")
    print(READY, flush=True)
    if (data / PREFLIGHT).exists():
        write(args.result, {"success": True, "outcome": "ok", "score": 0.0, "preflight": True})
        write_score(args.out, 0.0)
        return 0
    try:
        submission = read_csv(data / "submission.csv")
        answers = read_csv(data / "answers.csv")
        score = module.grade(submission, answers)
    except InvalidSubmissionError as e:
        reason = f"MLE-bench's grader rejected the submission: {e}"
        write(args.result, {"success": False, "outcome": "bad_predictions", "reason": reason})
        return 1
    except Exception as e:  # the grader's own failure, reported with its traceback
        write(
            args.result,
            {
                "success": False,
                "outcome": "runtime_error",
                "reason": f"grade.py raised {type(e).__name__}: {e}",
                "traceback": traceback.format_exc()[-4000:],
            },
        )
        return 1
    try:
        score = float(score)
    except (TypeError, ValueError):
        score = math.nan
    if not math.isfinite(score):
        write(
            args.result,
            {"success": False, "outcome": "bad_predictions", "reason": f"grade.py returned {score}, not a finite number"},
        )
        return 1
    write_score(args.out, score)
    write(args.result, {"success": True, "outcome": "ok", "score": score})
    return 0


def write_score(path: str, score: float) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"score": [score]}), path)


if __name__ == "__main__":
    sys.exit(main())
