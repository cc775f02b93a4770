#!/usr/bin/env python3
"""Reference values for queries/leaderboard.sql: MLE-bench's aggregation over seeds.

Writes tests/fixtures/leaderboard.json: generated runs (entrants × formats × competitions ×
languages × seeds, some seeds missing a cell, some runs invalid, missing a verdict, without a
baseline or with a medal) and, per (model, format, scope), what MLE-bench's aggregation gives:
the per-seed metric over every cell of the scope, only the seeds that cover every cell, then
numpy's mean, scipy's standard error of the mean (ddof 1; 0 for one seed, as
`average_metrics_across_seeds` in experiments/aggregate_grading_reports.py) and mean ± 1.96·SE.
The rule is written from reading that script; this one does not import MLE-bench. The Rust
test (`query::leaderboard_tests`) runs the SQL on these runs and compares every value to 1e-9.
Nothing in the fixture is typed by hand.

    "$(scripts/python-env)" tests/reference/leaderboard.py     # any Python 3 with numpy, scipy
"""

import json
import os
import random
from collections import defaultdict

import numpy as np
from scipy import stats

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "leaderboard.json")
RNG = random.Random(20261205)

LANGUAGES = [("en", "high", 0), ("fr", "high", 1), ("ru", "medium", 5), ("kk", "low", 12)]
COMPETITIONS = ["alpha", "beta", "gamma", "delta"]
MLE = {"gamma", "delta"}  # their grades carry a medal
TIER_ORDER = {"high": 0, "medium": 1, "low": 2}


def make_runs():
    runs = []
    grades = []
    entrants = [
        # (model, format, seeds, share of cells each seed drops, share valid)
        ("gpt-x", "modular", 5, 0.0, 0.8),
        ("gpt-x", "mono", 3, 0.05, 0.6),
        ("small", "modular", 4, 0.15, 0.3),
        ("one-seed", "modular", 1, 0.0, 0.7),
        ("sparse", "modular", 3, 0.6, 0.5),
    ]
    n = 0
    for model, fmt, seeds, drop, valid_share in entrants:
        languages = LANGUAGES if model != "one-seed" else LANGUAGES[:2]
        for comp in COMPETITIONS:
            for code, tier, position in languages:
                for seed in range(seeds):
                    if RNG.random() < drop:
                        continue
                    n += 1
                    valid = RNG.random() < valid_share
                    missing = None
                    if not valid and RNG.random() < 0.3:
                        missing = RNG.choice(["generate", "execute", "grade"])
                    grade_id = None if missing else f"g{n}"
                    if not valid:
                        r_p = 0.0
                    elif comp == "beta" and RNG.random() < 0.4:
                        r_p = None  # a valid run of a competition without a baseline
                    else:
                        r_p = RNG.choice([RNG.uniform(-0.5, 1.6), 1.0, 0.0, RNG.random()])
                    if grade_id is not None:
                        medal = None
                        if comp in MLE:
                            medal = RNG.choice(["gold", "silver", "bronze", "none", "none"])
                            if not valid:
                                medal = "none"
                        grades.append({"event_id": grade_id, "competition": comp, "medal": medal})
                    runs.append({
                        "model": model, "format": fmt, "competition": comp,
                        "language": code, "tier": tier, "language_position": position,
                        "seed": seed, "r_p": r_p, "valid": valid,
                        "missing_stage": missing, "grade_id": grade_id,
                    })
    return runs, grades


def aggregate(values):
    mean = float(np.mean(values))
    se = float(stats.sem(values, ddof=1)) if len(values) > 1 else 0.0
    return mean, se, mean - 1.96 * se, mean + 1.96 * se


def expected(runs, grades):
    medal_of = {g["event_id"]: g["medal"] for g in grades}
    mle = {r["competition"] for r in runs if medal_of.get(r["grade_id"]) is not None}
    scopes = defaultdict(list)
    for r in runs:
        key = (r["model"], r["format"])
        scopes[key + ("All",)].append(r)
        scopes[key + (r["tier"],)].append(r)
        scopes[key + (r["language"],)].append(r)
    rows = []
    for (model, fmt, scope), rs in scopes.items():
        cells = {(r["competition"], r["language"]) for r in rs}
        by_seed = defaultdict(list)
        for r in rs:
            by_seed[r["seed"]].append(r)
        complete = [s for s in sorted(by_seed)
                    if {(r["competition"], r["language"]) for r in by_seed[s]} == cells]
        aups, passes, medals, missing = [], [], [], 0
        for s in complete:
            seed_runs = by_seed[s]
            with_baseline = [min(max(r["r_p"], 0.0), 1.0) for r in seed_runs
                             if r["r_p"] is not None]
            aups.append(float(np.mean(with_baseline)) if with_baseline else 0.0)
            passes.append(100.0 * sum(r["valid"] for r in seed_runs) / len(seed_runs))
            in_mle = [r for r in seed_runs if r["competition"] in mle]
            if in_mle:
                won = sum(medal_of.get(r["grade_id"]) in ("gold", "silver", "bronze")
                          for r in in_mle)
                medals.append(100.0 * won / len(in_mle))
            missing += sum(r["missing_stage"] is not None for r in seed_runs)
        row = {
            "model": model, "format": fmt, "scope": scope,
            "competitions": len({c for c, _ in cells}), "cells": len(cells),
            "seeds": len(complete), "seeds_dropped": len(by_seed) - len(complete),
            "missing": missing,
        }
        for name, values in [("aup", aups), ("pass_rate", passes), ("any_medal", medals)]:
            if values:
                mean, se, low, high = aggregate(values)
            else:
                mean = se = low = high = None
            row.update({name: mean, f"{name}_se": se, f"{name}_low": low, f"{name}_high": high})
        rows.append(row)
    return rows


def main():
    runs, grades = make_runs()
    rows = expected(runs, grades)
    with open(OUT, "w") as f:
        json.dump({"runs": runs, "grades": grades, "expected": rows}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(rows)} rows from {len(runs)} runs to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
