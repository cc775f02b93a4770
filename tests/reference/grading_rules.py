#!/usr/bin/env python3
"""Reference verdicts for ml2b's grading rules V2 (src/metrics/grading/rules.rs).

Writes tests/fixtures/grading_rules.json: small answers and predictions files and what the
references make of them, read as the originals read them (pandas.read_csv) and scored with
scikit-learn, or with ML2B's own `apk` (python/grade_functions.py of enaix/ml2b, transcribed
below in its two lines: `actual in predicted`, then `1 / (predicted.index(actual) + 1)`):

* "value": the reference returned a finite number;
* "error": it raised (scikit-learn's "Mix of label input types", ...);
* "warns": scikit-learn warned that the rows "do not sum to one": ml2b refuses such rows.

The Rust test (src/metrics/grading/submission_tests.rs) grades each case with rules V2 and
compares (a value to 1e-9, "error" and "warns" as an invalid submission). `aup_quad` records
scipy.integrate.quad's AUP_{-ln tau} (the original's metrics/AUP_stats.py) on many cells,
where it strays furthest from the exact integral (src/metrics/aup.rs, QUAD_GAP).

    /var/tmp/ml2b-venv/bin/python tests/reference/grading_rules.py        # from the crate root
    (any environment with tests/reference/requirements-grade.txt: its pandas 3.1.1 and the
    ml2b venv's pandas 2.3.3 give the same file)
"""

import io
import json
import math
import os
import sys
import warnings

import numpy as np
import pandas as pd
import scipy
import sklearn
from scipy import integrate
from sklearn import metrics as skm

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "grading_rules.json")
RNG = np.random.RandomState(20261203)
CASES = []


def read(text):
    return pd.read_csv(io.StringIO(text), float_precision="round_trip")


def aligned(answers_csv, predictions_csv, id_col):
    a, p = read(answers_csv), read(predictions_csv)
    merged = a.merge(p, on=id_col, suffixes=("_true", ""), validate="one_to_one")
    assert len(merged) == len(a), "ids differ"
    return a, merged


def verdict(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = float(fn())
        except (ValueError, TypeError) as err:
            return "error", None, str(err)
    sums = [w for w in caught if "do not sum to one" in str(w.message)]
    if sums:
        return "warns", value, str(sums[0].message)
    assert math.isfinite(value)
    return "value", value, ""


def case(name, metric, id_col, targets, answers_csv, predictions_csv, fn):
    outcome, value, message = verdict(fn)
    CASES.append({"name": name, "metric": metric, "id_col": id_col, "targets": targets,
                  "answers_csv": answers_csv, "predictions_csv": predictions_csv,
                  "outcome": outcome, "value": value, "message": message})


def csv(df):
    return df.to_csv(index=False, lineterminator="\n")


def log_loss_cases():
    classes = ["a", "b", "c"]
    n = 12
    ids = np.arange(n) + 100
    labels = [classes[i] for i in RNG.randint(0, 3, n)]
    labels[:3] = classes
    answers = csv(pd.DataFrame({"id": ids, "label": labels}))

    def score(predictions_csv):
        def fn():
            a, m = aligned(answers, predictions_csv, "id")
            return skm.log_loss(m["label_true"] if "label_true" in m else m["label"], m[classes].to_numpy(),
                                labels=classes)
        return fn

    probs = RNG.dirichlet(np.ones(3), n)
    for name, p in [
        ("log_loss_normalised", probs),
        ("log_loss_all_ones", np.ones((n, 3))),
        ("log_loss_rounded_6", np.round(probs, 6)),
        ("log_loss_halves", probs / 2),
    ]:
        df = pd.DataFrame(p, columns=classes)
        df.insert(0, "id", ids)
        text = csv(df)
        case(name, "log_loss", "id", ["label"], answers, text, score(text))

    one_hot = pd.DataFrame(0, index=range(n), columns=classes)
    for r, label in enumerate(labels):
        one_hot.loc[r, label] = 1
    one_hot.insert(0, "id", ids)
    one_hot_csv = csv(one_hot)
    for name, p in [("one_hot_normalised", probs), ("one_hot_all_ones", np.ones((n, 3)))]:
        df = pd.DataFrame(p, columns=classes)
        df.insert(0, "id", ids)
        text = csv(df)

        def fn(text=text):
            a, m = aligned(one_hot_csv, text, "id")
            return skm.log_loss(m[[c + "_true" for c in classes]].to_numpy(), m[classes].to_numpy())
        case(name, "log_loss", "id", classes, one_hot_csv, text, fn)


def label_cases():
    n = 10
    ids = [f"{i:04d}_01" for i in range(n)]
    truth = RNG.randint(0, 2, n).astype(bool)
    answers = csv(pd.DataFrame({"PassengerId": ids, "Transported": truth}))
    for name, cells in [
        ("bool_answers_text_prediction", ["True" if t else "False" for t in truth[:-1]] + ["high"]),
        ("bool_answers_int_predictions", [str(int(t)) for t in truth]),
        ("bool_answers_bool_predictions", ["False" if t else "True" for t in truth[:3]] + [str(t) for t in truth[3:]]),
    ]:
        text = csv(pd.DataFrame({"PassengerId": ids, "Transported": cells}))

        def fn(text=text):
            a, m = aligned(answers, text, "PassengerId")
            return skm.accuracy_score(m["Transported_true"], m["Transported"])
        case(name, "accuracy", "PassengerId", ["Transported"], answers, text, fn)

    ratings = RNG.randint(0, 5, 20)
    ids = np.arange(20) + 1
    answers = csv(pd.DataFrame({"id": ids, "score": ratings}))
    stray = [str(r) for r in np.clip(ratings + RNG.randint(-1, 2, 20), 0, 4)]
    stray[4] = "high"
    good = [str(r) for r in np.clip(ratings + RNG.randint(-1, 2, 20), 0, 4)]
    for name, metric, cells in [
        ("qwk_stray_label", "qwk_sklearn", stray),
        ("qwk_kaggle_stray_label", "qwk", stray),
        ("qwk_numbers", "qwk_sklearn", good),
    ]:
        text = csv(pd.DataFrame({"id": ids, "score": cells}))

        def fn(text=text, metric=metric):
            a, m = aligned(answers, text, "id")
            if metric == "qwk":
                lo, hi = int(m["score_true"].min()), int(m["score_true"].max())
                pred = [int(x) for x in m["score"]]  # ml_metrics casts ratings with int()
                lo, hi = min(lo, min(pred)), max(hi, max(pred))
                return skm.cohen_kappa_score(m["score_true"], pred, labels=np.arange(lo, hi + 1),
                                             weights="quadratic")
            return skm.cohen_kappa_score(m["score_true"], m["score"], weights="quadratic")
        case(name, metric, "id", ["score"], answers, text, fn)


def id_cases():
    n = 15
    ids = np.arange(n) * 7 + 3
    y = RNG.normal(10, 3, n)
    answers = csv(pd.DataFrame({"id": ids, "target": y}))
    for name, cells in [
        ("leading_space_ids", [f" {i}" for i in ids]),
        ("padded_ids", [f"  {i} " for i in ids[::-1]]),
        ("plus_sign_ids", [f"+{i}" for i in ids]),
    ]:
        pred = y + RNG.normal(0, 1, n)
        if name == "padded_ids":
            pred = pred[::-1]
        text = csv(pd.DataFrame({"id": cells, "target": pred}))

        def fn(text=text):
            a, m = aligned(answers, text, "id")
            return skm.root_mean_squared_error(m["target_true"], m["target"])
        case(name, "rmse", "id", ["target"], answers, text, fn)

    labels = ["x", "y", "z"]
    truth = [labels[i] for i in RNG.randint(0, 3, n)]
    answers = csv(pd.DataFrame({"id": ids, "label": truth}))
    text = csv(pd.DataFrame({"id": [f" {i}" for i in ids], "label": truth[:5] + ["x"] * (n - 5)}))

    def fn(text=text):
        a, m = aligned(answers, text, "id")
        return skm.accuracy_score(m["label_true"], m["label"])
    case("leading_space_ids_labels", "accuracy", "id", ["label"], answers, text, fn)


def ml2b_apk(actual, predicted, k=5):
    """enaix/ml2b python/grade_functions.py `apk`."""
    if actual in predicted:
        return 1.0 / (predicted.index(actual) + 1)
    return 0.0


def map_cases():
    fertilisers = ["DAP", "Urea", "28-28", "14-35-14", "17-17-17", "20-20", "10-26-26"]
    n = 25
    ids = np.arange(n) + 750000
    truth = [fertilisers[i] for i in RNG.randint(0, len(fertilisers), n)]
    truth[0] = "DAP"
    answers = csv(pd.DataFrame({"id": ids, "Fertilizer Name": truth}))
    preds = [" ".join(RNG.permutation(fertilisers)[:3]) for _ in range(n)]
    preds[0] = "Urea DAP 20-20"
    text = csv(pd.DataFrame({"id": ids, "Fertilizer Name": preds}))

    def fn():
        a, m = aligned(answers, text, "id")
        return np.mean([ml2b_apk(t, p) for t, p in zip(m["Fertilizer Name_true"], m["Fertilizer Name"])])
    case("map_ml2b_substrings", "map_ml2b", "id", ["Fertilizer Name"], answers, text, fn)


def aup_quad_cases():
    def rho(r, tau):
        return np.mean(r <= tau)

    def quad(r):
        def integrand(tau):
            return 0.0 if tau <= 1e-100 else rho(r, tau) * (-np.log(tau))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return integrate.quad(integrand, 0, 1, limit=500, epsabs=1e-6, epsrel=1e-6)[0]
    def exact(r):
        x = np.clip(r, 0, 1)
        return float(np.mean(np.where(x > 0, 1 - x + x * np.log(np.where(x > 0, x, 1)), 1.0)))
    out = []
    for n in [12, 100, 300, 490]:
        # Of a few draws, the one where quad strays furthest (the docs quote the widest).
        draws = [RNG.uniform(0, 1.5, n) for _ in range(4)]
        r = max(draws, key=lambda r: abs(quad(r) - exact(r)))
        out.append({"r": [float(x) for x in r], "quad": float(quad(r))})
    return out


def main():
    log_loss_cases()
    label_cases()
    id_cases()
    map_cases()
    out = {
        "generated_by": "tests/reference/grading_rules.py",
        "versions": {"python": sys.version.split()[0], "numpy": np.__version__, "scipy": scipy.__version__,
                     "scikit-learn": sklearn.__version__, "pandas": pd.__version__},
        "cases": CASES,
        "aup_quad": aup_quad_cases(),
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"wrote {len(CASES)} cases to {OUT}")


if __name__ == "__main__":
    main()
