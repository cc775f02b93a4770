#!/usr/bin/env python3
"""MLE-bench's own verdicts on malformed submissions, for ml2b's native MLE-bench grading.

Writes tests/fixtures/mle_bench_validity.json: for each competition that ml2b grades natively
(src/metrics/grading/mle_bench.rs), a well-formed submission and variants of it (an extra
column, a misnamed target, shuffled rows, a wrong, duplicate or missing id, an empty or text
cell, values out of range, rows that do not sum to 1, ids with a leading space, ...), each
graded by the competition's real grade.py, imported from an MLE-bench checkout, as
MLE-bench's Grader calls it: the files read with mlebench.utils.read_csv (pandas), any
exception an invalid submission (None). The Rust test (src/metrics/grading/mle_bench_tests.rs)
grades the same files (the answers once per competition, then each variant's submission)
with ml2b's rules for MLE-bench competitions and requires the same
validity and score (1e-9) on every case, except where ml2b reports a departure
(`Graded::departure`, metrics::grading::rules): there the verdicts must differ.

    git clone https://github.com/openai/mle-bench /tmp/mle-bench && git -C /tmp/mle-bench checkout 783b15a
    /var/tmp/ml2b-venv/bin/python tests/reference/mle_bench_validity.py /tmp/mle-bench   # from the crate root

The environment: tests/reference/requirements-grade.txt's numpy, scipy and scikit-learn,
with pandas 2.3.3 (the ml2b venv of assets/execute/requirements.txt, which MLE-bench's
`pandas>=2.2` admits), PyYAML and tqdm (imported by mlebench.utils); the other modules
mlebench.utils imports at the top (py7zr) are stubbed when absent: grading never calls them.
With requirements-grade.txt's pandas 3.1.1 instead, two verdicts differ: hotel-id and whale
with an empty cell (pandas 3's `astype(str)` keeps NaN missing and grade.py fails, pandas 2
makes it the token `nan`). MLE-bench's verdict there depends on the pandas version; the
fixture records pandas 2's, the one MLE-bench's results were graded with.
The base files come from tests/fixtures/mle_bench_grades.json (tests/reference/
mle_bench_grades.py); competitions whose grade.py names every class column (leaf, dog-breed,
google-quest) get files with the checkout's class lists. Scores are not rounded.
"""

import importlib
import io
import json
import math
import os
import sys
import types
import warnings

import numpy as np
import pandas as pd
import scipy
import sklearn

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "..", "fixtures", "mle_bench_grades.json")
OUT = os.path.join(HERE, "..", "fixtures", "mle_bench_validity.json")
RNG = np.random.RandomState(20261203)


def load_mle_bench(path):
    sys.path.insert(0, os.path.abspath(path))
    for name in ["py7zr"]:
        try:
            importlib.import_module(name)
        except ImportError:
            sys.modules[name] = types.ModuleType(name)
    from mlebench import utils  # noqa: F401  (fails early on a wrong path)
    return utils


def csv(df):
    return df.to_csv(index=False, lineterminator="\n")


def grade(utils, competition, answers_csv, submission_csv):
    """(valid, score) as MLE-bench's Grader computes it, unrounded; score None when invalid."""
    module = importlib.import_module(f"mlebench.competitions.{competition}.grade")
    submission = utils.read_csv(io.StringIO(submission_csv))
    answers = utils.read_csv(io.StringIO(answers_csv))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            score = module.grade(submission, answers)
        except Exception:  # noqa: BLE001 (the Grader's own rule)
            return False, None
    return True, float(score)


def classes(competition, module, name):
    return list(getattr(importlib.import_module(f"mlebench.competitions.{competition}.{module}"), name))


def one_hot_base(competition, class_list, rows):
    ids = [f"i{n:04d}" for n in RNG.permutation(10 * rows)[:rows]]
    truth = RNG.randint(0, len(class_list), rows)
    answers = pd.DataFrame(0, index=range(rows), columns=class_list)
    for r, c in enumerate(truth):
        answers.iloc[r, c] = 1
    answers.insert(0, "id", ids)
    probs = RNG.dirichlet(np.ones(len(class_list)), rows)
    submission = pd.DataFrame(probs, columns=class_list)
    submission.insert(0, "id", ids)
    return {"competition": competition, "metric": "log_loss", "id_col": "id", "targets": class_list,
            "answers_csv": csv(answers), "predictions_csv": csv(submission)}


def google_quest_base(class_list, rows):
    ids = RNG.permutation(10 * rows)[:rows] + 1000
    answers = pd.DataFrame(RNG.randint(0, 4, (rows, len(class_list))) / 3.0, columns=class_list)
    answers.insert(0, "qa_id", ids)
    submission = pd.DataFrame(RNG.uniform(0, 1, (rows, len(class_list))), columns=class_list)
    submission.insert(0, "qa_id", ids)
    return {"competition": "google-quest-challenge", "metric": "spearman_columns", "id_col": "qa_id",
            "targets": class_list, "answers_csv": csv(answers), "predictions_csv": csv(submission)}


def bases():
    cases = json.load(open(BASE))["cases"]
    rebuilt = {
        "leaf-classification": one_hot_base(
            "leaf-classification", classes("leaf-classification", "classes", "CLASSES"), 6),
        "dog-breed-identification": one_hot_base(
            "dog-breed-identification", classes("dog-breed-identification", "dogs", "DOGS_LIST"), 6),
        "google-quest-challenge": google_quest_base(
            classes("google-quest-challenge", "classes", "CLASSES"), 20),
    }
    out = []
    for case in cases:
        base = rebuilt.get(case["competition"], case)
        out.append({k: base[k] for k in
                    ["competition", "metric", "id_col", "targets", "answers_csv", "predictions_csv"]})
    return out


def frame(text):
    """The CSV as text cells, so that a variant changes exactly what it means to."""
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)


def target_columns(case, sub):
    return [t for t in case["targets"] if t in sub.columns]


def numeric_metric(case):
    return case["metric"] in {"rmse", "rmsle_multi", "pearson", "spearman_columns", "pf1",
                              "roc_auc", "roc_auc_columns", "log_loss"}


def variants(case):
    """(name, submission DataFrame of text) for each variant that applies."""
    sub = frame(case["predictions_csv"])
    ans = frame(case["answers_csv"])
    id_col, metric = case["id_col"], case["metric"]
    targets = target_columns(case, sub)
    first = targets[0]
    out = [("base", sub.copy())]

    v = sub.copy()
    v["extra"] = "0.5"
    out.append(("extra_column", v))

    out.append(("shuffled", sub.sample(frac=1.0, random_state=RNG).reset_index(drop=True)))

    if len(targets) == 1 and len(case["targets"]) == 1:
        out.append(("renamed_target", sub.rename(columns={first: "prediction"})))

    v = sub.copy()
    v.loc[0, id_col] = "99999999" if ans[id_col].str.fullmatch(r"\d+").all() else "zz-unknown"
    out.append(("unknown_id", v))

    v = sub.copy()
    v.loc[1, id_col] = v.loc[0, id_col]
    out.append(("duplicate_id", v))

    out.append(("missing_row", sub.iloc[:-1].copy()))
    out.append(("missing_id_column", sub.drop(columns=[id_col])))

    v = sub.copy()
    v.loc[0, first] = ""
    out.append(("empty_value", v))

    v = sub.copy()
    v.loc[0, first] = "high"
    out.append(("text_value", v))

    if ans[id_col].str.fullmatch(r"\d+").all():
        v = sub.copy()
        v[id_col] = " " + v[id_col]
        out.append(("leading_space_ids", v))

    if numeric_metric(case):
        for name, value in [("value_1_5", "1.5"), ("value_0_5", "0.5"), ("value_negative", "-0.5")]:
            v = sub.copy()
            v.loc[0, first] = value
            out.append((name, v))
        v = sub.copy()
        for t in targets:
            v[t] = "0.5"
        out.append(("constant", v))

    if metric == "log_loss" and len(targets) > 1:
        v = sub.copy()
        for t in targets:
            v[t] = "1"
        out.append(("all_ones", v))
        for digits in [4, 6]:
            v = sub.copy()
            for t in targets:
                v[t] = [f"{float(x):.{digits}f}" for x in v[t]]
            out.append((f"rounded_{digits}", v))
        v = sub.copy()
        for t in targets:
            v[t] = [repr(float(x) * (1 + 5e-6)) for x in v[t]]
        out.append(("sums_1_plus_5e-6", v))

    if metric in {"accuracy", "f1_macro", "f1_micro", "mcc", "qwk_sklearn", "top1_error"}:
        labels = sub[first]
        if labels.str.fullmatch(r"-?\d+").all():
            v = sub.copy()
            v[first] = labels + ".0"
            out.append(("float_labels", v))
            v = sub.copy()
            v.loc[0, first] = labels[0] + ".7"
            out.append(("fractional_label", v))
        v = sub.copy()
        v.loc[0, first] = v.loc[0, first] + " extra"
        out.append(("label_with_space", v))

    if metric in {"map@5", "f1_micro_known", "top1_error"}:
        v = sub.copy()
        v[first] = [s.replace(" ", "  ") for s in v[first]]
        out.append(("double_spaces", v))
        v = sub.copy()
        v[first] = ["  " + s for s in v[first]]
        out.append(("leading_spaces", v))
    return out


def main():
    utils = load_mle_bench(sys.argv[1] if len(sys.argv) > 1 else "/tmp/mle-bench")
    competitions = []
    for base in bases():
        graded = []
        for name, sub in variants(base):
            submission_csv = csv(sub)
            valid, score = grade(utils, base["competition"], base["answers_csv"], submission_csv)
            nan = valid and math.isnan(score)
            graded.append({"variant": name, "predictions_csv": submission_csv, "valid": valid,
                           "score": None if (score is None or nan) else score, "nan_score": nan})
        competitions.append({**{k: v for k, v in base.items() if k != "predictions_csv"},
                             "variants": graded})
    out = {
        "generated_by": "tests/reference/mle_bench_validity.py",
        "mle_bench_revision": "783b15a",
        "versions": {"python": sys.version.split()[0], "numpy": np.__version__, "scipy": scipy.__version__,
                     "scikit-learn": sklearn.__version__, "pandas": pd.__version__},
        "competitions": competitions,
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    cases = [v for c in competitions for v in c["variants"]]
    valid = sum(v["valid"] for v in cases)
    print(f"wrote {len(cases)} cases ({valid} valid) to {OUT}")


if __name__ == "__main__":
    main()
