#!/usr/bin/env python3
"""Reference values for MLE-bench's medals, for ml2b's `metrics::medals`.

Writes tests/fixtures/medal_stats.json: generated Kaggle leaderboards (every team-count band
of MLE-bench's rule, both directions, ties, a constant and an unsorted one), scores probing
every threshold (each threshold itself, the next doubles above and below it, values that
round onto it, every position of the leaderboard or, on large ones, those around the
thresholds), and what MLE-bench answers for each; leaderboard files read with pandas'
`read_csv` as MLE-bench reads them; and Python's `round(x, 5)` on ties and long fractions.
The Rust tests compare every value exactly. Nothing in the fixture is typed by hand.

    "$(scripts/python-env)" tests/reference/medal_stats.py          # any Python 3 with pandas

The rule below is MLE-bench's `Grader.is_lower_better`, `Grader.rank_score` and the rounding
of `Grader.__call__` (mlebench/grade_helpers.py), and `get_leaderboard` (mlebench/data.py:
a plain `pd.read_csv`), written from reading them; this script does not import MLE-bench.
The fixture was written with pandas 2 (whose default float converter, unlike the correctly
rounded one, keeps 17 significant digits: see the `long_digits` file case).
"""

import io
import json
import math
import os
import random
import sys

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "medal_stats.json")
RNG = random.Random(20260527)


# ---------------------------------------------------------------- MLE-bench's rule


def is_lower_better(leaderboard):
    scores = leaderboard["score"]
    return bool(scores.iloc[0] < scores.iloc[-1])


def rank_score(score, leaderboard):
    """MLE-bench's rank_score: medals, above-median and the four thresholds."""
    lower_is_better = is_lower_better(leaderboard)
    num_teams = len(leaderboard)
    scores = leaderboard["score"]

    def at(position):
        if position - 1 >= len(scores) or position < 1:
            raise IndexError("Position out of bounds in the leaderboard.")
        return scores.iloc[position - 1]

    if 1 <= num_teams < 100:
        gold = at(max(1, int(num_teams * 0.1)))
        silver = at(max(1, int(num_teams * 0.2)))
        bronze = at(max(1, int(num_teams * 0.4)))
    elif 100 <= num_teams < 250:
        gold = at(10)
        silver = at(max(1, int(num_teams * 0.2)))
        bronze = at(max(1, int(num_teams * 0.4)))
    elif 250 <= num_teams < 1000:
        gold = at(10 + int(num_teams * 0.002))
        silver = at(50)
        bronze = at(100)
    elif num_teams >= 1000:
        gold = at(10 + int(num_teams * 0.002))
        silver = at(max(1, int(num_teams * 0.05)))
        bronze = at(max(1, int(num_teams * 0.1)))
    else:
        raise ValueError("Number of teams in leaderboard must be greater than 0.")
    median = scores.median()
    gold, silver, bronze, median = float(gold), float(silver), float(bronze), float(median)
    if score is None:
        return {"gold_medal": False, "silver_medal": False, "bronze_medal": False, "above_median": False,
                "thresholds": (gold, silver, bronze, median), "lower_is_better": lower_is_better}
    gold_medal = score <= gold if lower_is_better else score >= gold
    silver_medal = not gold_medal and (score <= silver if lower_is_better else score >= silver)
    bronze_medal = not gold_medal and not silver_medal and (score <= bronze if lower_is_better else score >= bronze)
    above_median = score < median if lower_is_better else score > median
    return {"gold_medal": bool(gold_medal), "silver_medal": bool(silver_medal), "bronze_medal": bool(bronze_medal),
            "above_median": bool(above_median), "thresholds": (gold, silver, bronze, median),
            "lower_is_better": lower_is_better}


def graded(score):
    """What MLE-bench's Grader hands rank_score: the score rounded to 5 decimals."""
    return None if score is None else round(score, 5)


# ---------------------------------------------------------------- cases


def band(n):
    return "<100" if n < 100 else "100-249" if n < 250 else "250-999" if n < 1000 else ">=1000"


def medal(r):
    return "gold" if r["gold_medal"] else "silver" if r["silver_medal"] else "bronze" if r["bronze_medal"] else "none"


def probe_scores(scores, thresholds, exhaustive):
    """Scores around every threshold and at the leaderboard's positions."""
    out = [None]
    for t in thresholds:
        out += [t, math.nextafter(t, math.inf), math.nextafter(t, -math.inf),
                t + 4e-6, t - 4e-6, t + 6e-6, t - 6e-6, t + 1e-5, t - 1e-5, t + 5e-6, t - 5e-6]
    n = len(scores)
    if exhaustive:
        positions = range(n)
    else:
        from_thresholds = [i for i, s in enumerate(scores) if s in set(thresholds)]
        near = set()
        for i in from_thresholds[:3] + from_thresholds[-3:]:
            near.update(range(max(0, i - 2), min(n, i + 3)))
        for p in (1, 10, 11, 12, 13, 50, 100, n // 20, n // 10, n // 5, (2 * n) // 5, n // 2):
            near.update(range(max(0, p - 3), min(n, p + 3)))
        positions = sorted(near | set(range(0, n, max(1, n // 40))) | {n - 1})
    out += [scores[i] for i in positions]
    out += [min(scores) - 1.0, max(scores) + 1.0]
    return out


def leaderboard_case(name, scores, exhaustive=None):
    frame = pd.DataFrame({"score": scores})
    exhaustive = len(scores) <= 120 if exhaustive is None else exhaustive
    base = rank_score(None, frame)
    probes = []
    for s in probe_scores(list(frame["score"]), base["thresholds"], exhaustive):
        s = None if s is None else float(s)
        g = graded(s)
        r = rank_score(g, frame)
        probes.append([s, g, medal(r), r["above_median"]])
    gold, silver, bronze, median = base["thresholds"]
    return {"name": name, "band": band(len(scores)), "lower_is_better": base["lower_is_better"],
            "thresholds": {"gold": gold, "silver": silver, "bronze": bronze, "median": median},
            "scores": [float(s) for s in frame["score"]], "probes": probes}


def generated(n, lower_is_better, kind):
    """A Kaggle-like leaderboard of n teams, best first."""
    if kind == "ties":
        # Few distinct values: thresholds fall inside runs of equal scores.
        values = [round(RNG.uniform(0.5, 0.9), 2) for _ in range(n)]
    elif kind == "integers":
        values = [RNG.randint(0, 40) * 5 for _ in range(n)]
    else:
        values = [round(RNG.gauss(0.8, 0.08), 5) for _ in range(n)]
    return sorted(values, reverse=not lower_is_better)


def leaderboards():
    cases = []
    sizes = [1, 2, 3, 5, 9, 10, 11, 19, 20, 42, 99, 100, 101, 149, 249, 250, 251, 499, 500, 999, 1000, 1001, 1499,
             2500]
    for i, n in enumerate(sizes):
        for lower in (False, True):
            kind = ["distinct", "ties", "integers"][(i + lower) % 3]
            direction = "lower" if lower else "higher"
            cases.append(leaderboard_case(f"{kind}-{n}-{direction}", generated(n, lower, kind)))
    cases.append(leaderboard_case("constant-7", [0.5] * 7))
    cases.append(leaderboard_case("constant-300", [1.25] * 300, exhaustive=True))
    cases.append(leaderboard_case("unsorted-30", [round(RNG.uniform(0, 1), 3) for _ in range(30)]))
    # Scores of 5 decimals whose ties at the thresholds are exact after rounding.
    cases.append(leaderboard_case("five-decimals-120-higher", sorted(
        [round(RNG.uniform(0.9, 1.0), 5) for _ in range(120)], reverse=True)))
    return cases


# ---------------------------------------------------------------- files


def file_case(name, text):
    frame = pd.read_csv(io.StringIO(text))
    case = leaderboard_case(name, list(frame["score"]))
    case["csv"] = text
    return case


def files():
    out = []
    rows = ["scoreNullable,teamId,hasTeamName,submissionDate,score,hasScore"]
    scores = sorted((round(RNG.gauss(0.9, 0.03), 5) for _ in range(130)), reverse=True)
    for i, s in enumerate(scores):
        rows.append(f"{s},{1000 + i},True,2019-0{1 + i % 9}-1{i % 10} 12:00:00,{s},True")
    out.append(file_case("kaggle_columns", "\n".join(rows) + "\n"))
    out.append(file_case("quoted_and_spaced", 'teamName,score\n"a, b", 0.25\n"c",0.5 \n" d ",1e-1\n'
                                              '"e",+0.75\n"f",.5\n"g",5.\n'))
    out.append(file_case("integers", "teamName,score\na,12\nb,10\nc,10\nd,-3\ne,+7\n"))
    long_digits = sorted((RNG.uniform(0, 1) for _ in range(60)), reverse=True)
    text = "score,teamName\n" + "".join(f"{s:.20f},t{i}\n" for i, s in enumerate(long_digits))
    text += "73169764747.261017,big\n3.2165901074338938,pi-ish\n0.1234567890123456789,long\n"
    out.append(file_case("long_digits", text))
    out.append(file_case("exponents", "score\n1.5e3\n2E-4\n3e+2\n-4.25e-1\n0.000123e5\n"))
    out.append(file_case("crlf_and_blank_lines", "team,score\r\na,0.9\r\n\r\nb,0.8\r\nc,0.7\r\n"))
    return out


# ---------------------------------------------------------------- Python's round


def rounding():
    values = []
    for j in range(-130, 131):
        values.append(j / 64)            # exact ties at the fifth decimal among them
        values.append(j / 1024)
        values.append(j * 1e-5 + 5e-6)   # near-ties, off by the binary representation
    for _ in range(500):
        values.append(RNG.uniform(-10, 10))
        values.append(RNG.uniform(-1e-4, 1e-4))
        values.append(round(RNG.uniform(0, 1), 6))
    values += [0.0, -0.0, 0.000005, -0.000005, 0.000015, 0.000025, 2.675, 1.000005, 0.123455, 1e-7, -1e-7,
               123456789.123455, 1e16 + 2, 1.7976931348623157e308, 5e-324, 0.5, 1.5, 2.5]
    return [[v, round(v, 5)] for v in values]


def main():
    fixture = {
        "generated_by": "tests/reference/medal_stats.py",
        "versions": {"python": sys.version.split()[0], "pandas": pd.__version__, "numpy": np.__version__},
        "leaderboards": leaderboards(),
        "files": files(),
        "round": rounding(),
    }
    with open(OUT, "w") as f:
        json.dump(fixture, f, indent=None, separators=(",", ":"), allow_nan=False)
        f.write("\n")
    probes = sum(len(c["probes"]) for c in fixture["leaderboards"] + fixture["files"])
    print(f"wrote {os.path.relpath(OUT)}: {len(fixture['leaderboards'])} leaderboards, "
          f"{len(fixture['files'])} files, {probes} probes, {len(fixture['round'])} roundings")


if __name__ == "__main__":
    main()
