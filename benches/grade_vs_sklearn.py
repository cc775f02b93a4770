#!/usr/bin/env python3
"""Times scikit-learn against a Rust scorer on the same large answer/prediction files.

    .venv-grade/bin/python benches/grade_vs_sklearn.py [--rows 10000000] [--repeat 2] \
        [--rust-cmd 'ml2b score --json --metric {metric} --answers {answers} --predictions {predictions}']

Generates seeded Parquet files (id + target / prediction columns), then for each metric
(roc_auc, log_loss, rmse, macro-F1) times
  * scikit-learn: pandas.read_parquet of both files (pyarrow), the id check a grader needs
    (answer ids unique, predictions in the same order), and the sklearn metric;
  * the Rust command (any command line printing {"metric","score","valid":true} JSON),
and prints both side by side (best of --repeat), checking the values agree to 1e-9.
The default Rust command is the release build of `ml2b score` (`cargo build --release`).
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd
from sklearn import metrics as skm

CRATE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(CRATE, "target"))
DEFAULT_CMD = (os.path.join(TARGET, "release", "ml2b")
               + " score --json --metric {metric} --answers {answers} --predictions {predictions}")


def generate(directory, rows):
    """Writes the benchmark files; returns {metric: (answers, predictions)}."""
    rng = np.random.default_rng(20260501)
    ids = np.arange(rows, dtype=np.int64)
    y = rng.integers(0, 2, rows)
    p = np.clip(0.3 * y + rng.uniform(0, 0.7, rows), 0, 1)
    t = rng.normal(10, 3, rows)
    q = t + rng.normal(0, 1, rows)
    c = rng.integers(0, 10, rows)
    c_hat = np.where(rng.random(rows) < 0.6, c, rng.integers(0, 10, rows))
    tables = {
        "binary_answers": {"id": ids, "y": y}, "binary_predictions": {"id": ids, "p": p},
        "regression_answers": {"id": ids, "target": t}, "regression_predictions": {"id": ids, "target": q},
        "labels_answers": {"id": ids, "label": c}, "labels_predictions": {"id": ids, "label": c_hat},
    }
    paths = {}
    for name, columns in tables.items():
        paths[name] = os.path.join(directory, f"{name}.parquet")
        pd.DataFrame(columns).to_parquet(paths[name], index=False, engine="pyarrow")
    return {
        "roc_auc": (paths["binary_answers"], paths["binary_predictions"]),
        "log_loss": (paths["binary_answers"], paths["binary_predictions"]),
        "rmse": (paths["regression_answers"], paths["regression_predictions"]),
        "f1_macro": (paths["labels_answers"], paths["labels_predictions"]),
    }


SKLEARN = {
    "roc_auc": skm.roc_auc_score,
    "log_loss": skm.log_loss,
    "rmse": skm.root_mean_squared_error,
    "f1_macro": lambda a, b: skm.f1_score(a, b, average="macro"),
}


def sklearn_score(metric, answers, predictions):
    a = pd.read_parquet(answers, engine="pyarrow")
    p = pd.read_parquet(predictions, engine="pyarrow")
    if len(a) != len(p) or not a["id"].is_unique or not np.array_equal(a["id"].to_numpy(), p["id"].to_numpy()):
        p = p.set_index("id").loc[a["id"]].reset_index()
    target = [col for col in a.columns if col != "id"][0]
    pred = [col for col in p.columns if col != "id"][0]
    return float(SKLEARN[metric](a[target].to_numpy(), p[pred].to_numpy()))


def rust_score(template, metric, answers, predictions):
    cmd = template.format(metric=metric, answers=shlex.quote(answers), predictions=shlex.quote(predictions))
    out = subprocess.run(cmd, shell=True, check=True, capture_output=True, text=True).stdout
    try:
        result = json.loads(out)  # ml2b prints one (pretty-printed) JSON document
    except json.JSONDecodeError:
        result = json.loads(out.strip().splitlines()[-1])
    if not result.get("valid"):
        raise SystemExit(f"{metric}: Rust scorer says invalid: {result}")
    return float(result["score"])


def best_time(fn, repeat):
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--rust-cmd", default=DEFAULT_CMD)
    parser.add_argument("--metrics", default="roc_auc,log_loss,rmse,f1_macro")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="grade-bench-") as directory:
        start = time.perf_counter()
        files = generate(directory, args.rows)
        print(f"generated {args.rows:,} rows per file in {time.perf_counter() - start:.1f} s (Parquet, snappy)")
        print(f"{'metric':<10} {'sklearn s':>10} {'rust s':>8} {'speed-up':>9}  {'sklearn value':>22} {'rust value':>22}  agree")
        ok = True
        for metric in args.metrics.split(","):
            answers, predictions = files[metric]
            t_py, v_py = best_time(lambda: sklearn_score(metric, answers, predictions), args.repeat)
            t_rs, v_rs = best_time(lambda: rust_score(args.rust_cmd, metric, answers, predictions), args.repeat)
            agree = abs(v_py - v_rs) <= 1e-9 * max(1.0, abs(v_py))
            ok &= agree
            print(f"{metric:<10} {t_py:>10.3f} {t_rs:>8.3f} {t_py / t_rs:>8.1f}x  {v_py:>22.15g} {v_rs:>22.15g}  {'yes' if agree else 'NO'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
