#!/usr/bin/env python3
"""Reference values for the grading metrics, r_p and AUP of ml2b.

Writes tests/fixtures/grade_stats.json: inputs and the values the pinned reference
implementations (requirements-grade.txt) compute for them. The Rust tests read that file
and compare to 1e-9; nothing there is typed by hand.

    python3 -m venv .venv-grade && .venv-grade/bin/pip install -r tests/reference/requirements-grade.txt
    .venv-grade/bin/python tests/reference/grade_stats.py          # from the crate root

Outcomes: "value" (the reference returned a finite number), "undefined" (it returned NaN,
with a warning), "error" (it raised). Kaggle's ml_metrics (apk, mapk, quadratic weighted
kappa) and ML2B's own functions (apk, wmae, compute_rp, the AUP functions of
metrics/AUP_stats.py) are not installable packages, so they are transcribed below verbatim
in their formulas; Kaggle's QWK is also checked against scikit-learn with the full label
range.
"""

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
OUT = os.path.join(HERE, "..", "fixtures", "grade_stats.json")
RNG = np.random.RandomState(20260501)


def py(values):
    """JSON-able list (numpy scalars to Python)."""
    return [v.item() if hasattr(v, "item") else v for v in values]


def outcome(fn):
    """Runs a reference function: (outcome, value, message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = float(fn())
        except (ValueError, ZeroDivisionError) as err:
            return "error", None, str(err)
    if math.isnan(value):
        return "undefined", None, "reference returned NaN"
    return "value", value, ""


CASES = []


def case(name, metric, kind, inputs, fn):
    result, value, message = outcome(fn)
    CASES.append({"name": name, "metric": metric, "kind": kind, "input": inputs,
                  "outcome": result, "expected": value, "message": message})


# ---------------------------------------------------------------- regression

def regression_cases():
    n = 400
    y = RNG.normal(10, 3, n)
    p = y + RNG.normal(0, 1.5, n)
    w = RNG.uniform(0.1, 3, n)
    pos_y = np.abs(RNG.lognormal(2, 1, n))
    pos_p = np.abs(pos_y * RNG.uniform(0.5, 1.5, n))
    small = np.round(RNG.uniform(-0.9, 3, 60), 3)
    small_p = np.round(RNG.uniform(-0.99, 3, 60), 3)
    sets = {
        "random": (y, p), "integers": (np.round(y), np.round(p)), "perfect": (y, y.copy()),
        "positive": (pos_y, pos_p), "near_minus_one": (small, small_p),
        "single_row": (np.array([3.0]), np.array([1.5])),
        "constant_truth": (np.full(20, 2.5), np.full(20, 2.5) + RNG.normal(0, 1, 20)),
        "constant_truth_perfect": (np.full(20, 2.5), np.full(20, 2.5)),
    }
    fns = {
        "rmse": skm.root_mean_squared_error, "mse": skm.mean_squared_error,
        "mae": skm.mean_absolute_error, "r2": skm.r2_score,
        "rmsle": skm.root_mean_squared_log_error,
    }
    for set_name, (t, q) in sets.items():
        for metric, fn in fns.items():
            if metric == "rmsle" and set_name in ("random", "integers", "perfect") and (t.min() <= -1 or q.min() <= -1):
                continue
            case(f"{metric}/{set_name}", metric, "values", {"y_true": py(t), "y_pred": py(q)},
                 lambda fn=fn, t=t, q=q: fn(t, q))
    bad = np.array([0.5, -1.0, 2.0])
    case("rmsle/minus_one", "rmsle", "values", {"y_true": [0.5, 1.0, 2.0], "y_pred": py(bad)},
         lambda: skm.root_mean_squared_log_error([0.5, 1.0, 2.0], bad))
    for set_name in ("random", "integers"):
        t, q = sets[set_name]
        inputs = {"y_true": py(t), "y_pred": py(q), "weights": py(w)}
        case(f"wmae/{set_name}", "wmae", "values", inputs,
             lambda t=t, q=q: skm.mean_absolute_error(t, q, sample_weight=w))
        # ML2B calculate_wae: (weight_vals * np.abs(y_true - y_pred)).mean()
        case(f"wmae_ml2b/{set_name}", "wmae_ml2b", "values", inputs,
             lambda t=t, q=q: (w * np.abs(t - q)).mean())
    cols = 3
    ym = np.abs(RNG.normal(5, 2, (n, cols)))
    pm = np.abs(ym + RNG.normal(0, 1, (n, cols)))
    multi = {"y_true": [py(ym[:, j]) for j in range(cols)], "y_pred": [py(pm[:, j]) for j in range(cols)]}
    case("rmse_multi/random", "rmse_multi", "multi", multi, lambda: skm.root_mean_squared_error(ym, pm))
    case("rmsle_multi/random", "rmsle_multi", "multi", multi, lambda: skm.root_mean_squared_log_error(ym, pm))


# ---------------------------------------------------------------- labels

def label_sets():
    n = 300
    y5 = RNG.randint(0, 5, n)
    p5 = np.where(RNG.rand(n) < 0.6, y5, RNG.randint(0, 6, n))  # label 5 only predicted
    yb = RNG.randint(0, 2, n)
    pb = np.where(RNG.rand(n) < 0.7, yb, 1 - yb)
    words = np.array(["cat", "dog", "emu", "Ant"])
    ys = words[RNG.randint(0, 4, 120)]
    ps = np.where(RNG.rand(120) < 0.5, ys, words[RNG.randint(0, 4, 120)])
    return {
        "multiclass": (y5, p5), "binary": (yb, pb), "strings": (ys, ps),
        "binary_constant_prediction": (yb, np.zeros(n, dtype=int)),
        "all_zero": (np.zeros(10, dtype=int), np.zeros(10, dtype=int)),
        "binary_one_two": (RNG.randint(1, 3, 50), RNG.randint(1, 3, 50)),
        "perfect": (y5, y5.copy()),
    }


def label_cases():
    fns = {
        "accuracy": skm.accuracy_score, "balanced_accuracy": skm.balanced_accuracy_score,
        "f1": skm.f1_score,
        "f1_macro": lambda a, b: skm.f1_score(a, b, average="macro"),
        "f1_micro": lambda a, b: skm.f1_score(a, b, average="micro"),
        "f1_weighted": lambda a, b: skm.f1_score(a, b, average="weighted"),
        "precision_macro": lambda a, b: skm.precision_score(a, b, average="macro"),
        "recall_macro": lambda a, b: skm.recall_score(a, b, average="macro"),
        "mcc": skm.matthews_corrcoef,
    }
    for set_name, (t, q) in label_sets().items():
        for metric, fn in fns.items():
            case(f"{metric}/{set_name}", metric, "labels", {"y_true": py(t), "y_pred": py(q)},
                 lambda fn=fn, t=t, q=q: fn(t, q))


def kaggle_qwk(rater_a, rater_b):
    """ml_metrics.quadratic_weighted_kappa (benhamner/Metrics), transcribed."""
    rater_a = np.array(rater_a, dtype=int)
    rater_b = np.array(rater_b, dtype=int)
    min_rating = min(min(rater_a), min(rater_b))
    max_rating = max(max(rater_a), max(rater_b))
    num_ratings = int(max_rating - min_rating + 1)
    conf_mat = [[0 for _ in range(num_ratings)] for _ in range(num_ratings)]
    for a, b in zip(rater_a, rater_b):
        conf_mat[a - min_rating][b - min_rating] += 1
    hist_a = [0] * num_ratings
    hist_b = [0] * num_ratings
    for r in rater_a:
        hist_a[r - min_rating] += 1
    for r in rater_b:
        hist_b[r - min_rating] += 1
    num_scored_items = float(len(rater_a))
    numerator = 0.0
    denominator = 0.0
    for i in range(num_ratings):
        for j in range(num_ratings):
            expected_count = hist_a[i] * hist_b[j] / num_scored_items
            d = pow(i - j, 2.0) / pow(num_ratings - 1, 2.0)
            numerator += d * conf_mat[i][j] / num_scored_items
            denominator += d * expected_count / num_scored_items
    return 1.0 - numerator / denominator


def kaggle_qwk_checked(a, b):
    value = kaggle_qwk(a, b)
    lo, hi = min(min(a), min(b)), max(max(a), max(b))
    sk = skm.cohen_kappa_score(a, b, labels=np.arange(lo, hi + 1), weights="quadratic")
    assert abs(value - sk) < 1e-12, (value, sk)
    return value


def kappa_cases():
    n = 250
    y = RNG.randint(0, 6, n)
    p = np.clip(y + RNG.randint(-2, 3, n), 0, 5)
    gap_a = np.array([1, 1, 3, 3, 3, 1, 3, 1])
    gap_b = np.array([1, 3, 3, 1, 3, 1, 3, 3])
    sets = {
        "random": (y, p), "gap": (gap_a, gap_b), "shifted": (y + 3, p + 3),
        "single_label": (np.full(5, 2), np.full(5, 2)),
        "disjoint_constant": (np.full(5, 2), np.full(5, 4)),
        "negative": (y - 2, p - 2),
    }
    for set_name, (a, b) in sets.items():
        inputs = {"y_true": py(a), "y_pred": py(b)}
        case(f"qwk/{set_name}", "qwk", "labels", inputs, lambda a=a, b=b: kaggle_qwk_checked(list(a), list(b)))
        case(f"qwk_sklearn/{set_name}", "qwk_sklearn", "labels", inputs,
             lambda a=a, b=b: skm.cohen_kappa_score(a, b, weights="quadratic"))


# ---------------------------------------------------------------- label lists

def kaggle_apk(actual, predicted, k=10):
    """ml_metrics.apk (benhamner/Metrics), transcribed."""
    if len(predicted) > k:
        predicted = predicted[:k]
    score = 0.0
    num_hits = 0.0
    for i, p in enumerate(predicted):
        if p in actual and p not in predicted[:i]:
            num_hits += 1.0
            score += num_hits / (i + 1.0)
    if not actual:
        return 0.0
    return score / min(len(actual), k)


def kaggle_mapk(actual, predicted, k=10):
    return np.mean([kaggle_apk(a, p, k) for a, p in zip(actual, predicted)])


def ml2b_apk(actual, predicted, k=5):
    """ML2B python/grade_functions.py apk: ignores k."""
    if actual in predicted:
        return 1.0 / (predicted.index(actual) + 1)
    return 0.0


def list_cases():
    vocab = [f"t{i}" for i in range(12)]
    n = 200
    actual = [[vocab[RNG.randint(12)]] for _ in range(n)]
    ranked = [list(RNG.choice(vocab, RNG.randint(0, 6), replace=False)) for _ in range(n)]
    for i in range(0, n, 7):  # duplicates inside a prediction list
        if ranked[i]:
            ranked[i] = ranked[i] + ranked[i][:1]
    multi_actual = [list(RNG.choice(vocab, RNG.randint(0, 4), replace=False)) for _ in range(n)]
    for k in (1, 3, 5, 10):
        case(f"map@{k}/single_truth", f"map@{k}", "lists", {"y_true": actual, "y_pred": ranked},
             lambda k=k: kaggle_mapk(actual, ranked, k))
        case(f"map@{k}/multi_truth", f"map@{k}", "lists", {"y_true": multi_actual, "y_pred": ranked},
             lambda k=k: kaggle_mapk(multi_actual, ranked, k))
    dup_actual = [["a", "a"], ["b"], []]
    dup_pred = [["a", "b"], [], ["c"]]
    case("map@3/duplicate_truth_empty_lists", "map@3", "lists", {"y_true": dup_actual, "y_pred": dup_pred},
         lambda: kaggle_mapk(dup_actual, dup_pred, 3))
    flat = [a[0] for a in actual]
    case("map_ml2b/single_truth", "map_ml2b", "lists", {"y_true": actual, "y_pred": ranked},
         lambda: np.mean([ml2b_apk(a, p) for a, p in zip(flat, ranked)]))
    long_pred = [["x", "y", "z", "w", "v", "u", "a"], ["a"]]
    case("map_ml2b/beyond_k", "map_ml2b", "lists", {"y_true": [["a"], ["a"]], "y_pred": long_pred},
         lambda: np.mean([ml2b_apk(a, p) for a, p in zip(["a", "a"], long_pred)]))
    case("map@3/beyond_k", "map@3", "lists", {"y_true": [["a"], ["a"]], "y_pred": long_pred},
         lambda: kaggle_mapk([["a"], ["a"]], long_pred, 3))
    multilabel_cases(vocab)


def multilabel_cases(vocab):
    n = 150
    truth = [list(RNG.choice(vocab[:8], RNG.randint(0, 4), replace=False)) for _ in range(n)]
    pred = [list(RNG.choice(vocab[:9], RNG.randint(0, 4), replace=False)) for _ in range(n)]
    truth[0], pred[0] = [], []  # both empty: zero_division
    truth[1], pred[1] = ["t1"], []
    mlb = sklearn.preprocessing.MultiLabelBinarizer(classes=sorted(set(vocab)))
    tb, pb = mlb.fit_transform(truth), mlb.transform(pred)
    inputs = {"y_true": truth, "y_pred": pred}
    case("f1_samples/random", "f1_samples", "lists", inputs, lambda: skm.f1_score(tb, pb, average="samples"))
    for beta in (1.0, 2.0, 0.5):
        name = "fbeta_micro" if beta == 1.0 else f"fbeta_micro@{beta}"
        case(f"{name}/multilabel", name, "lists", inputs, lambda beta=beta: skm.fbeta_score(tb, pb, beta=beta, average="micro"))
    y, p = label_sets()["strings"]
    single = {"y_true": [[v] for v in py(y)], "y_pred": [[v] for v in py(p)]}
    case("fbeta_micro/single_label", "fbeta_micro", "lists", single, lambda: skm.fbeta_score(y, p, beta=1.0, average="micro"))
    empty = {"y_true": [[], []], "y_pred": [[], []]}
    e = np.zeros((2, 3), dtype=int)
    case("f1_samples/all_empty", "f1_samples", "lists", empty, lambda: skm.f1_score(e, e, average="samples"))
    case("fbeta_micro/all_empty", "fbeta_micro", "lists", empty, lambda: skm.fbeta_score(e, e, beta=1.0, average="micro"))


# ---------------------------------------------------------------- probabilities

def prob_case(name, metric, y, classes, columns, fn):
    inputs = {"y_true": py(y), "classes": py(classes), "columns": [py(c) for c in columns]}
    case(name, metric, "probabilities", inputs, fn)


def binary_prob_cases():
    n = 500
    y = RNG.randint(0, 2, n)
    s = np.clip(0.35 * y + RNG.uniform(0, 0.65, n), 0, 1)
    tied = np.round(s, 1)
    exact = np.where(RNG.rand(n) < 0.1, y.astype(float), s)  # exact 0/1 on the right class
    wrong = exact.copy()
    wrong[:5] = 1.0 - y[:5]  # confident and wrong: clipped at eps
    logits = RNG.normal(0, 3, n) + y
    sets = {"random": s, "ties": tied, "exact_zero_one": exact, "confident_wrong": wrong,
            "all_tied": np.full(n, 0.5)}
    for set_name, score in sets.items():
        prob_case(f"roc_auc/{set_name}", "roc_auc", y, [0, 1], [score], lambda score=score: skm.roc_auc_score(y, score))
        prob_case(f"log_loss/{set_name}", "log_loss", y, [0, 1], [score], lambda score=score: skm.log_loss(y, score))
        two = [1 - score, score]
        prob_case(f"log_loss/{set_name}_two_columns", "log_loss", y, [0, 1], two,
                  lambda two=two: skm.log_loss(y, np.column_stack(two), labels=[0, 1]))
    prob_case("roc_auc/logits", "roc_auc", y, [0, 1], [logits], lambda: skm.roc_auc_score(y, logits))
    prob_case("roc_auc/perfect", "roc_auc", y, [0, 1], [y.astype(float)], lambda: skm.roc_auc_score(y, y.astype(float)))
    prob_case("roc_auc/inverted", "roc_auc", y, [0, 1], [1.0 - y], lambda: skm.roc_auc_score(y, 1.0 - y))
    ones = np.ones(20, dtype=int)
    u = RNG.uniform(0, 1, 20)
    prob_case("roc_auc/one_class", "roc_auc", ones, [0, 1], [u], lambda: skm.roc_auc_score(ones, u))
    prob_case("log_loss/one_class_with_labels", "log_loss", ones, [0, 1], [u],
              lambda: skm.log_loss(ones, u, labels=[0, 1]))
    words = np.array(["no", "yes"])[y]
    prob_case("roc_auc/string_labels", "roc_auc", words, ["no", "yes"], [s], lambda: skm.roc_auc_score(words, s))
    prob_case("log_loss/string_labels", "log_loss", words, ["no", "yes"], [s], lambda: skm.log_loss(words, s))
    over = s.copy()
    over[3] = 1.2
    prob_case("log_loss/above_one", "log_loss", y, [0, 1], [over], lambda: skm.log_loss(y, over))
    neg = s.copy()
    neg[7] = -0.1
    prob_case("log_loss/below_zero", "log_loss", y, [0, 1], [neg], lambda: skm.log_loss(y, neg))


def multiclass_prob_cases():
    for k, labels in ((3, [0, 1, 2]), (5, ["a", "b", "c", "d", "e"])):
        n = 400
        codes = RNG.randint(0, k, n)
        codes[:k] = np.arange(k)
        y = np.array(labels)[codes]
        raw = RNG.dirichlet(np.ones(k), n) + 0.8 * np.eye(k)[codes]
        p = raw / raw.sum(axis=1, keepdims=True)
        rounded = np.round(p, 1)
        rounded[:, -1] = 1.0 - rounded[:, :-1].sum(axis=1)  # ties, rows still sum to 1
        rounded = np.clip(rounded, 0, 1)
        rounded[:, -1] = 1.0 - rounded[:, :-1].sum(axis=1)
        for set_name, probs in (("random", p), ("ties", rounded)):
            if probs.min() < 0:
                continue
            cols = [probs[:, j] for j in range(k)]
            tag = f"{k}class_{set_name}"
            for multi, avg, metric in (("ovr", "macro", "roc_auc_ovr"), ("ovr", "weighted", "roc_auc_ovr_weighted"),
                                       ("ovo", "macro", "roc_auc_ovo"), ("ovo", "weighted", "roc_auc_ovo_weighted")):
                prob_case(f"{metric}/{tag}", metric, y, labels, cols,
                          lambda probs=probs, multi=multi, avg=avg, y=y: skm.roc_auc_score(y, probs, multi_class=multi, average=avg))
            prob_case(f"log_loss/{tag}", "log_loss", y, labels, cols, lambda probs=probs, y=y: skm.log_loss(y, probs))
            prob_case(f"roc_auc/{tag}", "roc_auc", y, labels, cols, lambda probs=probs, y=y: skm.roc_auc_score(y, probs))
        unnormalised = p * 1.3
        unnormalised = np.clip(unnormalised, 0, 1)
        cols = [unnormalised[:, j] for j in range(k)]
        prob_case(f"log_loss/{k}class_unnormalised", "log_loss", y, labels, cols,
                  lambda u=unnormalised, y=y: skm.log_loss(y, u))
        prob_case(f"roc_auc_ovr/{k}class_unnormalised", "roc_auc_ovr", y, labels, cols,
                  lambda u=unnormalised, y=y: skm.roc_auc_score(y, u, multi_class="ovr"))


# ---------------------------------------------------------------- whole files

FILES = []


def frame_csv(df):
    return df.to_csv(index=False, lineterminator="\n")


def file_case(name, metric, answers, predictions, fn, options=None):
    result, value, message = outcome(fn)
    FILES.append({"name": name, "metric": metric, "answers_csv": frame_csv(answers),
                  "predictions_csv": frame_csv(predictions), "options": options or {},
                  "outcome": result, "expected": value, "message": message})


def file_cases():
    n = 60
    ids = [f"r{i:03d}" for i in range(n)]
    perm = RNG.permutation(n)
    y = RNG.randint(0, 3, n)
    y[:3] = [0, 1, 2]
    raw = RNG.dirichlet(np.ones(3), n)
    answers = pd.DataFrame({"id": ids, "label": y})
    probs = pd.DataFrame({"id": ids, "0": raw[:, 0], "1": raw[:, 1], "2": raw[:, 2]}).iloc[perm]
    file_case("log_loss/shuffled_ids", "log_loss", answers, probs, lambda: skm.log_loss(y, raw))
    file_case("roc_auc_ovo/shuffled_ids", "roc_auc_ovo", answers, probs[["id", "2", "0", "1"]],
              lambda: skm.roc_auc_score(y, raw, multi_class="ovo"))
    yb = (y > 0).astype(int)
    pb = pd.DataFrame({"id": ids, "label": raw[:, 0]}).iloc[perm]
    file_case("roc_auc/binary_single_column", "roc_auc", pd.DataFrame({"id": ids, "label": yb}), pb,
              lambda: skm.roc_auc_score(yb, raw[:, 0]))
    t = RNG.normal(0, 1, n)
    q = t + RNG.normal(0, 0.3, n)
    w = RNG.uniform(0.5, 2, n)
    file_case("rmse/shuffled_ids", "rmse", pd.DataFrame({"id": range(n), "target": t}),
              pd.DataFrame({"id": range(n), "prediction": q}).iloc[perm], lambda: skm.root_mean_squared_error(t, q))
    file_case("wmae/weight_column", "wmae", pd.DataFrame({"id": range(n), "target": t, "w": w}),
              pd.DataFrame({"id": range(n), "target": q}).iloc[perm],
              lambda: skm.mean_absolute_error(t, q, sample_weight=w), {"weight_col": "w"})
    m_t = np.abs(RNG.normal(3, 1, (n, 2)))
    m_q = np.abs(m_t + RNG.normal(0, 0.2, (n, 2)))
    file_case("rmsle_multi/two_targets", "rmsle_multi", pd.DataFrame({"id": range(n), "col_5": m_t[:, 0], "col_8": m_t[:, 1]}),
              pd.DataFrame({"id": range(n), "col_8": m_q[:, 1], "col_5": m_q[:, 0]}).iloc[perm],
              lambda: skm.root_mean_squared_log_error(m_t, m_q))
    words = np.array(["cat", "dog", "emu"])
    lp = np.where(RNG.rand(n) < 0.6, y, RNG.randint(0, 3, n))
    file_case("f1_macro/string_labels", "f1_macro", pd.DataFrame({"id": ids, "animal": words[y]}),
              pd.DataFrame({"id": ids, "animal": words[lp]}).iloc[perm],
              lambda: skm.f1_score(words[y], words[lp], average="macro"))
    truth = [str(words[v]) for v in y]
    ranked = [" ".join(RNG.permutation(words)[: RNG.randint(0, 4)]) for _ in range(n)]
    file_case("map@3/space_separated", "map@3", pd.DataFrame({"id": ids, "animal": truth}),
              pd.DataFrame({"id": ids, "animal": ranked}).iloc[perm],
              lambda: kaggle_mapk([[a] for a in truth], [r.split() for r in ranked], 3))


# ---------------------------------------------------------------- r_p and AUP

HIGHER_IS_BETTER_METRICS = ["roc_auc", "f1_score", "accuracy", "r2_score", "FScoreMacro"]


def ml2b_code_invalid(v):
    if v is None:
        return True
    if isinstance(v, float) and np.isnan(v):
        return True
    s = str(v)
    return any(bad in s for bad in ("None", "nan", "NaN", "Error", "err"))


def ml2b_code_rp(runs, baseline_score, metric_name):
    """metrics/AUP_stats.py compute_rp, transcribed (padding to 3 seeds)."""
    rp_list = []
    for v in runs:
        if ml2b_code_invalid(v):
            continue
        value = float(v)
        if metric_name in HIGHER_IS_BETTER_METRICS:
            rp = value / baseline_score if baseline_score != 0 else 0
        else:
            rp = baseline_score / value if value != 0 else 0
        rp_list.append(rp)
    rp_list += [0] * (3 - len(rp_list))
    return float(np.array(rp_list).mean())


def json_number(x):
    """Finite floats as numbers, infinities as the strings "inf" / "-inf"."""
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def ml2b_rp(runs, baseline, direction, seeds=3):
    """STATISTICS.md 3.0: failed runs 0, direction from the manifest, mean over seeds."""
    rs = []
    for v in runs:
        if ml2b_code_invalid(v) or not np.isfinite(float(v)):
            continue
        value = float(v)
        num, den = (value, baseline) if direction == "maximize" else (baseline, value)
        rs.append(num / den if den != 0 else (math.inf if num > 0 else 0.0))
    return float(sum(rs) / max(seeds, len(rs)))


def compute_rho(r_vals, tau):
    return np.mean(r_vals <= tau) if len(r_vals) > 0 else 0.0


def compute_AUP_std(r_vals):
    taus = np.linspace(0, 1, 1001)
    rhos = [compute_rho(r_vals, tau) for tau in taus]
    return np.trapezoid(rhos, taus)


def compute_AUP_ln(r_vals):
    def integrand(tau):
        if tau <= 1e-100:
            return 0.0
        return compute_rho(r_vals, tau) * (-np.log(tau))
    result, _ = integrate.quad(integrand, 0, 1, limit=500, epsabs=1e-6, epsrel=1e-6)
    return result


def compute_AUP_invln(r_vals, eps=1e-8):
    def integrand(tau):
        return compute_rho(r_vals, tau) * (-1.0 / np.log(tau))

    def weight(tau):
        return -1.0 / np.log(tau)
    a, b = eps, 1 - eps
    n_points = 1000
    taus = np.linspace(a, b, n_points)
    numerator = np.trapezoid([integrand(tau) for tau in taus], taus)
    denominator = np.trapezoid([weight(tau) for tau in taus], taus)
    return numerator / denominator if denominator != 0 else 0.0


def ml2b_aups(r):
    """ml2b convention (STATISTICS.md 3.0): attainment profile rho(tau) = share of r >= tau."""
    x = np.clip(r, 0, 1)
    aup = float(np.mean(x))
    with np.errstate(divide="ignore", invalid="ignore"):
        aup_ln = float(np.mean(np.where(x > 0, x - x * np.log(np.where(x > 0, x, 1)), 0.0)))
    taus = np.linspace(1e-8, 1 - 1e-8, 1000)
    rho = np.array([np.mean(r >= t) for t in taus])
    w = -1.0 / np.log(taus)
    aup_invln = float(np.trapezoid(rho * w, taus) / np.trapezoid(w, taus))
    return {"aup": aup, "aup_ln": aup_ln, "aup_invln": aup_invln, "win_rate": float(100 * np.mean(r >= 1))}


def ml2b_code_aups(r):
    return {"aup": float(compute_AUP_std(r)), "aup_ln": float(compute_AUP_ln(r)),
            "aup_invln": float(compute_AUP_invln(r)), "win_rate": float(np.mean(r <= 1) * 100)}


def aup_cases():
    sets = {
        "paper_example_a": [0.5, 0.9, 1.1], "paper_example_b": [0, 0, 1.2],
        "paper_example_c": [0.99, 0.999, 1.5], "paper_example_d": [0.2, 0.3, 0.4],
        "all_fail": [0, 0, 0, 0], "all_win": [1.0, 1.5, 2.0], "exactly_one": [1.0, 1.0],
        "random": list(np.round(RNG.uniform(0, 1.6, 35), 6)),
        "random_fine": list(RNG.uniform(0, 1.3, 31)),
        "grid_points": [0.001, 0.25, 0.5, 0.75, 0.999],
        "single": [0.7],
    }
    out = []
    for name, r in sets.items():
        arr = np.array(r, dtype=float)
        out.append({"name": name, "r": py(arr), "ml2b": ml2b_aups(arr), "ml2b_code": ml2b_code_aups(arr)})
    return out


def rp_cases():
    rows = []
    runs_list = [[0.8, 0.85, 0.9], [0.8, "nan", 0.9], [0.8], [], ["Error: boom", None, 0.7],
                 [0.0, 0.5, 1.0], [1.2, 1.1, 1.0, 0.9]]
    for runs in runs_list:
        for metric_name, direction in (("roc_auc", "maximize"), ("rmse", "minimize"), ("mcc", "maximize"),
                                       ("r2_score", "minimize")):
            for baseline in (0.75, 0.0):
                rows.append({"runs": [None if v is None else (v if isinstance(v, str) else float(v)) for v in runs],
                             "baseline": baseline, "metric_name": metric_name, "direction": direction,
                             "ml2b_code": ml2b_code_rp(runs, baseline, metric_name),
                             "ml2b": json_number(ml2b_rp(runs, baseline, direction))})
    return rows


def ratios_file_case():
    models = ["gpt-4.1-mini", "gemini-2.5-flash"]
    languages = ["English", "French", "Kazakh"]
    comps = [f"comp-{i}" for i in range(7)]
    rows = []
    for m in models:
        for lang in languages:
            for c in comps:
                r = 0.0 if RNG.rand() < 0.15 else float(np.round(RNG.uniform(0.2, 1.4), 6))
                rows.append((m, lang, c, r))
    df = pd.DataFrame(rows, columns=["model", "language", "competition", "r"])
    expected = {}
    for conv, fn in (("ml2b", ml2b_aups), ("ml2b_code", ml2b_code_aups)):
        cells = {}
        for (m, lang), g in df.groupby(["model", "language"], sort=True):
            cells[f"{m}|{lang}"] = fn(g["r"].to_numpy())
        averages = {}
        for m in models:
            per = [cells[f"{m}|{lang}"] for lang in languages]
            averages[m] = {k: float(np.mean([p[k] for p in per])) for k in per[0]}
        expected[conv] = {"cells": cells, "averages": averages}
    return {"csv": frame_csv(df), "expected": expected}


def main():
    regression_cases()
    label_cases()
    kappa_cases()
    list_cases()
    binary_prob_cases()
    multiclass_prob_cases()
    file_cases()
    fixture = {
        "generated_by": "tests/reference/grade_stats.py",
        "versions": {"python": sys.version.split()[0], "numpy": np.__version__, "scipy": scipy.__version__,
                     "scikit-learn": sklearn.__version__, "pandas": pd.__version__},
        "metrics": CASES, "files": FILES, "rp": rp_cases(), "aup": aup_cases(), "ratios_file": ratios_file_case(),
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(fixture, f, indent=None, separators=(",", ":"), allow_nan=False)
        f.write("\n")
    counts = {}
    for c in CASES + FILES:
        counts[c["outcome"]] = counts.get(c["outcome"], 0) + 1
    print(f"wrote {os.path.relpath(OUT)}: {len(CASES)} metric cases, {len(FILES)} file cases {counts}")


if __name__ == "__main__":
    main()
