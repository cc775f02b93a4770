#!/usr/bin/env python3
"""Times pandas against `ml2b query` on the same table over the same store.

    /var/tmp/ml2b-venv/bin/python benches/analyze_vs_pandas.py STORE [--repeat 3] \
        [--ml2b target/release/ml2b]

STORE is a store whose logs hold generate, execute and grade events, such as the one
`ML2B_BENCH_STORE=STORE cargo bench --bench analyze` builds (1,000,000 runs). For the
failure taxonomy (queries/failures.sql) it times
  * pandas: reading the three logs' columns from their Parquet segments (pyarrow, into
    Arrow-backed columns: pandas' object strings took twice as long), the
    latest event per key of each log (as the `runs` view takes it: by created_at, ties by
    event_id), the two joins of `runs` (an execution meets its grade by id, a sample meets
    its execution by competition, format and code) and the group-by;
  * `ml2b query queries/failures.sql --store STORE --format csv`, the whole process (opening
    the session, the views, the table), run from the repository root;
and prints both side by side (best of --repeat), checking the two tables hold the same rows.
The default ml2b is the release build (`cargo build --release`).
"""

import argparse
import glob
import io
import os
import subprocess
import sys
import time

import pandas as pd
import pyarrow.parquet as pq

CRATE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(CRATE, "target"))
KEYS = ["model", "format", "language", "outcome"]


def log(store, stage, columns):
    """The committed segments of one stage's log, as one DataFrame of `columns`."""
    files = sorted(glob.glob(os.path.join(store, "log", stage, "*.parquet")))
    return pd.concat([pq.read_table(f, columns=columns).to_pandas(types_mapper=pd.ArrowDtype) for f in files],
                     ignore_index=True)


def latest(frame, key):
    """The latest event per key: by created_at, ties broken by event_id."""
    frame = frame.sort_values(["created_at", "event_id"], kind="stable")
    return frame.drop_duplicates(key, keep="last")


def failures_pandas(store):
    gen = log(store, "generate", ["event_id", "created_at", "model", "agent", "format",
                                  "competition", "language", "seed", "code_blake3"])
    gen["model"] = gen["model"].where(gen["agent"] != "aide", gen["model"] + "+aide")
    gen = latest(gen, ["model", "format", "competition", "language", "seed"])
    exe = log(store, "execute", ["event_id", "created_at", "competition", "format",
                                 "code_blake3", "outcome"])
    exe = latest(exe, ["competition", "format", "code_blake3"])
    gr = log(store, "grade", ["event_id", "created_at", "upstream", "valid"])
    gr["execution_id"] = gr["upstream"].list[0]
    gr = latest(gr, ["execution_id"])
    xg = exe.merge(gr[["execution_id", "valid"]], how="left", left_on="event_id",
                   right_on="execution_id")
    runs = gen[["model", "format", "competition", "language", "code_blake3"]].merge(
        xg[["competition", "format", "code_blake3", "outcome", "valid"]], how="left",
        on=["competition", "format", "code_blake3"])
    runs["outcome"] = runs["outcome"].fillna("not_executed")
    runs["valid"] = runs["valid"].astype("boolean").fillna(False).astype(int)
    table = runs.groupby(KEYS).agg(runs=("valid", "size"), valid=("valid", "sum"))
    return table.reset_index()


def failures_ml2b(binary, store):
    out = subprocess.run([binary, "query", "queries/failures.sql", "--store", store,
                          "--format", "csv", "--quiet"], cwd=CRATE, check=True,
                         capture_output=True, text=True).stdout
    return pd.read_csv(io.StringIO(out))


def best(fn, repeat):
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ml2b", default=os.path.join(TARGET, "release", "ml2b"))
    args = parser.parse_args()
    store = os.path.abspath(args.store)
    t_pd, ours = best(lambda: failures_pandas(store), args.repeat)
    t_rs, theirs = best(lambda: failures_ml2b(args.ml2b, store), args.repeat)
    a = ours.sort_values(KEYS).reset_index(drop=True)
    b = theirs[KEYS + ["runs", "valid"]].sort_values(KEYS).reset_index(drop=True)
    same = a.astype(str).equals(b.astype(str))
    print(f"failures ({len(a)} rows, {int(a['runs'].sum())} runs)")
    print(f"  pandas     {t_pd:8.3f} s")
    print(f"  ml2b query {t_rs:8.3f} s   (the whole process)")
    print(f"  same rows: {same}")
    if not same:
        print(a.compare(b), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
