#!/usr/bin/env python3
"""Reference scores for ml2b's native grading of MLE-bench competitions.

Writes tests/fixtures/mle_bench_grades.json: for each competition whose MLE-bench grader ml2b
computes with a native metric (src/metrics/grading/mle_bench.rs), small answers and
submission CSV files in MLE-bench's layouts (answers as the competition's prepare.py writes
them, features included; the submission shaped like its sample_submission.csv) and the score
that the competition's grade.py computes on them: the same scikit-learn / scipy calls on the
same pre-processing (rows sorted by id, labels cast as grade.py casts them). The computations
are written out here, not imported: nothing needs an MLE-bench checkout. The Rust test
(src/metrics/grading/mle_bench_tests.rs) grades the same files with `score_files_with` and the
named targets and compares to 1e-9.

    /var/tmp/ml2b-venv/bin/python tests/reference/mle_bench_grades.py     # from the crate root
    (any environment with tests/reference/requirements-grade.txt)

The scores are not rounded: MLE-bench's Grader rounds grade.py's value to 5 decimals
afterwards (grade_helpers.py), which ml2b leaves to the grade stage.
"""

import csv as csvlib
import io
import json
import math
import os
import string
import warnings

import numpy as np
import pandas as pd
import scipy
import sklearn
from scipy import stats
from sklearn import metrics as skm
from sklearn.preprocessing import MultiLabelBinarizer

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "mle_bench_grades.json")
RNG = np.random.RandomState(20261202)

CASES = []


def csv(df):
    return df.to_csv(index=False, lineterminator="\n")


def case(competition, grader, metric, id_col, targets, answers, submission, fn, note=""):
    """Records one case; `fn(submission, answers)` is the grade.py computation."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(fn(submission.copy(), answers.copy()))
    assert math.isfinite(value), (competition, value)
    CASES.append({
        "competition": competition, "grader": grader, "metric": metric, "id_col": id_col,
        "targets": targets, "answers_csv": csv(answers), "predictions_csv": csv(submission),
        "expected": value, "note": note,
    })


def hexes(n, width=12):
    return ["".join(RNG.choice(list("0123456789abcdef"), width)) for _ in range(n)]


def unique_ints(lo, hi, n):
    """`n` distinct integers in [lo, hi), in random order."""
    seen = {}
    while len(seen) < n:
        seen.setdefault(int(RNG.randint(lo, hi)), None)
    return np.array(list(seen), dtype=np.int64)


def shuffled(df):
    return df.sample(frac=1.0, random_state=RNG).reset_index(drop=True)


def sorted_pair(sub, ans, id_col):
    sub = sub.sort_values(id_col).reset_index(drop=True)
    ans = ans.sort_values(id_col).reset_index(drop=True)
    assert (sub[id_col].values == ans[id_col].values).all()
    return sub, ans


def noisy_labels(y, choices, keep=0.6):
    return np.where(RNG.rand(len(y)) < keep, y, RNG.choice(choices, len(y)))


# ---------------------------------------------------------------- accuracy and friends

def accuracy_on(id_col, target):
    def grade(sub, ans):
        sub, ans = sorted_pair(sub, ans, id_col)
        return skm.accuracy_score(ans[target].to_numpy(), sub[target].to_numpy())
    return grade


def accuracy_cases():
    n = 80
    ids = [f"{g:04d}_{m:02d}" for g, m in zip(RNG.randint(0, 9999, n), RNG.randint(1, 9, n))]
    ids = list(dict.fromkeys(ids))
    y = RNG.rand(len(ids)) < 0.5
    ans = pd.DataFrame({"PassengerId": ids, "Transported": y})
    sub = shuffled(pd.DataFrame({"PassengerId": ids, "Transported": noisy_labels(y, [True, False])}))
    case("spaceship-titanic", "accuracy", "accuracy", "PassengerId", ["Transported"], ans, sub,
         accuracy_on("PassengerId", "Transported"), "boolean labels")

    n = 120
    ids = [f"{i}.jpg" for i in unique_ints(0, 10**9, n)]
    y = RNG.randint(0, 5, n)
    ans = pd.DataFrame({"image_id": ids, "label": y})
    sub = shuffled(pd.DataFrame({"image_id": ids, "label": noisy_labels(y, range(5))}))
    case("cassava-leaf-disease-classification", "accuracy", "accuracy", "image_id", ["label"],
         ans, sub, accuracy_on("image_id", "label"))

    words = np.array(["yes", "no", "up", "down", "silence", "unknown"])
    ids = [f"clip_{h}.wav" for h in hexes(90, 9)]
    y = words[RNG.randint(0, len(words), 90)]
    ans = pd.DataFrame({"fname": ids, "label": y})
    sub = shuffled(pd.DataFrame({"fname": ids, "label": noisy_labels(y, words)}))
    case("tensorflow-speech-recognition-challenge", "accuracy", "accuracy", "fname", ["label"],
         ans, sub, accuracy_on("fname", "label"), "text labels")

    ids = unique_ints(4_000_000, 5_000_000, 150)
    y = RNG.randint(1, 8, 150)
    ans = pd.DataFrame({"Id": ids, "Cover_Type": y})
    sub = shuffled(pd.DataFrame({"Id": ids.astype(float), "Cover_Type": noisy_labels(y, range(1, 8))}))
    case("tabular-playground-series-dec-2021", "multi-class-classification-accuracy", "accuracy",
         "Id", ["Cover_Type"], ans, sub, accuracy_on("Id", "Cover_Type"),
         "the submission's ids are floats (4000123.0): ids compare by value")


def top1_cases():
    n = 100
    ids = np.arange(n)
    y = RNG.randint(0, 1010, n)
    top5 = []
    for t in y:
        guesses = list(RNG.randint(0, 1010, 5))
        if RNG.rand() < 0.4:
            guesses[0] = t
        elif RNG.rand() < 0.5:
            guesses[RNG.randint(1, 5)] = t
        top5.append(" ".join(str(g) for g in guesses))
    ans = pd.DataFrame({"id": ids, "predicted": y})
    sub = shuffled(pd.DataFrame({"id": ids, "predicted": top5}))

    def grade(sub, ans):
        sub, ans = sorted_pair(sub, ans, "id")
        y_true = [int(v) for v in ans["predicted"]]
        y_pred = [v if isinstance(v, int) else int(v.split()[0]) for v in sub["predicted"]]
        return 1 - skm.accuracy_score(y_true, y_pred)
    case("inaturalist-2019-fgvc6", "top-1-classification-error", "top1_error", "id", ["predicted"],
         ans, sub, grade, "five ranked guesses per row, the first one counts")


# ---------------------------------------------------------------- ROC AUC

def auc_columns_on(id_col, targets):
    def grade(sub, ans):
        sub, ans = sorted_pair(sub, ans, id_col)
        return np.average([skm.roc_auc_score(ans[c].to_numpy(), sub[c].to_numpy()) for c in targets])
    return grade


def scores_for(y, signal=0.3):
    return np.clip(signal * y + RNG.uniform(0, 1 - signal, len(y)), 0, 1)


def auc_cases():
    n = 120
    ids = [f"{h}.jpg" for h in hexes(n, 32)]
    y = (RNG.rand(n) < 0.7).astype(int)
    ans = pd.DataFrame({"id": ids, "has_cactus": y})
    sub = shuffled(pd.DataFrame({"id": ids, "has_cactus": np.round(scores_for(y), 2)}))
    sub.insert(0, "Unnamed: 0", np.arange(n))
    case("aerial-cactus-identification", "auc-roc", "roc_auc", "id", ["has_cactus"], ans,
         sub, auc_columns_on("id", ["has_cactus"]),
         "rounded scores (ties); an `Unnamed: 0` column that both graders ignore")

    ids = [f"t3_{h}" for h in hexes(80, 6)]
    y = (RNG.rand(80) < 0.25).astype(int)
    ans = pd.DataFrame({"request_id": ids, "requester_received_pizza": y})
    sub = shuffled(pd.DataFrame({"request_id": ids, "requester_received_pizza": scores_for(y, 0.1)}))
    case("random-acts-of-pizza", "auc-roc", "roc_auc", "request_id",
         ["requester_received_pizza"], ans, sub,
         auc_columns_on("request_id", ["requester_received_pizza"]))

    all_classes = ["ETT - Abnormal", "ETT - Borderline", "ETT - Normal", "NGT - Abnormal",
                   "NGT - Borderline", "NGT - Incompletely Imaged", "NGT - Normal", "CVC - Abnormal",
                   "CVC - Borderline", "CVC - Normal", "Swan Ganz Catheter Present"]
    scored = all_classes[:9]
    n = 100
    ids = [f"1.2.826.0.1.3680043.8.498.{i}" for i in unique_ints(0, 10**11, n)]
    ans = pd.DataFrame({"StudyInstanceUID": ids})
    for c in all_classes:
        ans[c] = (RNG.rand(n) < 0.3).astype(int)
    ans["PatientID"] = hexes(n, 9)
    sub = pd.DataFrame({"StudyInstanceUID": ids})
    for c in scored:
        sub[c] = scores_for(ans[c].to_numpy(), 0.2)
    case("ranzcr-clip-catheter-line-classification", "auc-roc", "roc_auc_columns",
         "StudyInstanceUID", scored, ans, shuffled(sub), auc_columns_on("StudyInstanceUID", scored),
         "9 scored classes of the answers' 11, and PatientID")

    n = 150
    ids = np.arange(900000, 900000 + n)
    ans = pd.DataFrame({"id": ids})
    for j in range(4):
        ans[f"f_{j:02d}"] = RNG.normal(0, 1, n)
    ans["f_27"] = ["".join(RNG.choice(list(string.ascii_uppercase), 10)) for _ in range(n)]
    ans["f_29"] = RNG.randint(0, 2, n)
    ans["target"] = (ans["f_00"] + RNG.normal(0, 1, n) > 0).astype(int)
    sub = shuffled(pd.DataFrame({"id": ids, "target": scores_for(ans["target"].to_numpy())}))
    case("tabular-playground-series-may-2022", "auc-roc", "roc_auc", "id", ["target"], ans,
         sub, auc_columns_on("id", ["target"]), "answers hold the features f_00 … f_29 before the target")

    n = 140
    ids = np.arange(14000, 14000 + n)
    ans = pd.DataFrame({"id": ids})
    for name in ["BertzCT", "Chi1", "EState_VSA1", "fr_COO"]:
        ans[name] = RNG.uniform(0, 100, n)
    for j in range(1, 7):
        ans[f"EC{j}"] = (RNG.rand(n) < 0.5).astype(int)
    sub = shuffled(pd.DataFrame({"id": ids, "EC1": scores_for(ans["EC1"].to_numpy()),
                                 "EC2": scores_for(ans["EC2"].to_numpy(), 0.05)}))

    def s3e18(sub, ans):
        sub, ans = sorted_pair(sub, ans, "id")
        return skm.roc_auc_score(ans[["EC1", "EC2"]].to_numpy(), sub[["EC1", "EC2"]].to_numpy(),
                                 average="macro")
    case("playground-series-s3e18", "auroc-multi-label", "roc_auc_columns", "id", ["EC1", "EC2"],
         ans, sub, s3e18, "multi-label roc_auc_score(average='macro') of EC1, EC2")

    classes = ["healthy", "multiple_diseases", "rust", "scab"]
    n = 100
    ids = [f"Test_{i}" for i in range(n)]
    hot = RNG.randint(0, 4, n)
    ans = pd.DataFrame({"image_id": ids})
    for k, c in enumerate(classes):
        ans[c] = (hot == k).astype(int)
    p = RNG.dirichlet(np.ones(4), n) * 0.6 + 0.4 * np.eye(4)[hot]
    sub = pd.DataFrame({"image_id": ids})
    for k, c in enumerate(classes):
        sub[c] = p[:, k]
    case("plant-pathology-2020-fgvc7", "mean-column-wise-roc-auc", "roc_auc_columns", "image_id",
         classes, ans, shuffled(sub), auc_columns_on("image_id", classes))


# ---------------------------------------------------------------- log loss

def binary_log_loss_on(id_col, target):
    def grade(sub, ans):
        sub, ans = sorted_pair(sub, ans, id_col)
        return skm.log_loss(ans[target], sub[target])
    return grade


def one_hot_log_loss_on(id_col, classes):
    def grade(sub, ans):
        sub, ans = sorted_pair(sub, ans, id_col)
        return skm.log_loss(ans[classes].to_numpy(), sub[classes].to_numpy())
    return grade


def one_hot(ids, id_col, classes, hot):
    df = pd.DataFrame({id_col: ids})
    for k, c in enumerate(classes):
        df[c] = (hot == k).astype(int)
    return df


def probabilities(hot, n_classes, sharp=0.5):
    p = RNG.dirichlet(np.ones(n_classes), len(hot)) * (1 - sharp) + sharp * np.eye(n_classes)[hot]
    return p / p.sum(axis=1, keepdims=True)


def log_loss_cases():
    n = 100
    ids = np.arange(1, n + 1)
    y = RNG.randint(0, 2, n)
    p = scores_for(y, 0.5)
    p[:3] = [0.0, 1.0, 1.0]  # clipped to [eps, 1 - eps]
    ans = pd.DataFrame({"id": ids, "label": y})
    sub = shuffled(pd.DataFrame({"id": ids, "label": p}))
    case("dogs-vs-cats-redux-kernels-edition", "log-loss", "log_loss", "id", ["label"], ans, sub,
         binary_log_loss_on("id", "label"), "probabilities of 0 and 1 are clipped")

    ids = hexes(70, 8)
    y = RNG.randint(0, 2, 70)
    ans = pd.DataFrame({"id": ids, "is_iceberg": y})
    sub = shuffled(pd.DataFrame({"id": ids, "is_iceberg": scores_for(y, 0.4)}))
    case("statoil-iceberg-classifier-challenge", "log-loss", "log_loss", "id", ["is_iceberg"], ans,
         sub, binary_log_loss_on("id", "is_iceberg"))

    classes = ["EAP", "HPL", "MWS"]
    ids = [f"id{i:05d}" for i in unique_ints(0, 99999, 90)]
    hot = RNG.randint(0, 3, 90)
    ans = one_hot(ids, "id", classes, hot)
    p = probabilities(hot, 3)
    sub = pd.DataFrame({"id": ids, **{c: p[:, k] for k, c in enumerate(classes)}})
    case("spooky-author-identification", "multi-class-log-loss", "log_loss", "id", classes, ans,
         shuffled(sub), one_hot_log_loss_on("id", classes), "one-hot answers")

    classes = ["Acer_Capillipes", "Acer_Circinatum", "Alnus_Rubra", "Betula_Austrosinensis",
               "Quercus_Agrifolia", "Quercus_Alnifolia", "Salix_Fragilis", "Tilia_Oliveri",
               "Ulmus_Bergmanniana", "Zelkova_Serrata"]
    n = 40
    ids = unique_ints(1, 1600, n)
    hot = RNG.choice([0, 1, 2, 4, 5, 7, 8], n)  # classes 3, 6 and 9 are in no answer row
    ans = one_hot(ids, "id", classes, hot)
    p = probabilities(hot, len(classes), 0.3)
    sub = pd.DataFrame({"id": ids, **{c: p[:, k] for k, c in enumerate(classes)}})
    case("leaf-classification", "multi-class-log-loss", "log_loss", "id", classes, ans,
         shuffled(sub), one_hot_log_loss_on("id", classes),
         "one-hot answers in which three classes never occur")

    classes = ["winner_model_a", "winner_model_b", "winner_tie"]
    n = 60
    ids = unique_ints(10**6, 10**7, n)
    hot = RNG.randint(0, 3, n)
    ans = pd.DataFrame({
        "id": ids,
        "model_a": RNG.choice(["gpt-4-1106-preview", "claude-2.1", "llama-2-70b-chat"], n),
        "model_b": RNG.choice(["gpt-3.5-turbo-0613", "mixtral-8x7b-instruct-v0.1"], n),
        "prompt": [f'["Why, said the \\"model\\", is {i}?"]' for i in range(n)],
        "response_a": [f'["Because,\nline two {i}"]' for i in range(n)],
        "response_b": ['["null"]'] * n,
    })
    for k, c in enumerate(classes):
        ans[c] = (hot == k).astype(int)
    p = probabilities(hot, 3, 0.2)
    sub = pd.DataFrame({"id": ids, **{c: p[:, k] for k, c in enumerate(classes)}})
    case("lmsys-chatbot-arena", "multi-class-log-loss", "log_loss", "id", classes, ans,
         shuffled(sub), one_hot_log_loss_on("id", classes),
         "one-hot winner columns after quoted text columns with commas and newlines")

    classes = ["affenpinscher", "afghan_hound", "basenji", "beagle", "boxer", "chow",
               "dingo", "whippet"]
    ids = hexes(64, 32)
    hot = RNG.randint(0, len(classes), 64)
    ans = one_hot(ids, "id", classes, hot)
    p = probabilities(hot, len(classes), 0.4)
    sub = pd.DataFrame({"id": ids, **{c: p[:, k] for k, c in enumerate(classes)}})
    case("dog-breed-identification", "multi-class-log-loss", "log_loss", "id", classes, ans,
         shuffled(sub), one_hot_log_loss_on("id", classes))


# ---------------------------------------------------------------- F1, kappa, MCC

def int_f1_on(id_col, target, average):
    def grade(sub, ans):
        sub, ans = sorted_pair(sub, ans, id_col)
        y_true = [int(v) for v in ans[target]]
        y_pred = [int(v) for v in sub[target]]
        return skm.f1_score(y_true, y_pred, average=average)
    return grade


def known_micro_f1_on(id_col, target):
    def grade(sub, ans):
        sub, ans = sorted_pair(sub, ans, id_col)
        truth = ans[target].fillna("").astype(str).str.split()
        pred = sub[target].fillna("").astype(str).str.split()
        vocab = sorted({label for row in truth for label in row})
        mlb = MultiLabelBinarizer(classes=vocab, sparse_output=True)
        return skm.f1_score(mlb.fit_transform(truth), mlb.transform(pred), average="micro")
    return grade


def f1_cases():
    n = 200
    ids = np.arange(n)
    y = RNG.randint(0, 40, n)
    ans = pd.DataFrame({"Id": ids, "Predicted": y})
    sub = shuffled(pd.DataFrame({"Id": ids, "Predicted": noisy_labels(y, range(45), 0.5)}))
    case("herbarium-2020-fgvc7", "macro-f1-score", "f1_macro", "Id", ["Predicted"], ans, sub,
         int_f1_on("Id", "Predicted", "macro"), "labels 40-44 are only predicted")

    ids = hexes(120, 36)
    y = RNG.choice([0, 1, 3, 8, 10, 11, 13, 16, 17, 22], 120)
    ans = pd.DataFrame({"Id": ids, "Category": y})
    sub = shuffled(pd.DataFrame({"Id": ids, "Category": noisy_labels(y, [0, 1, 3, 8, 10, 11])}))
    case("iwildcam-2019-fgvc6", "macro-f1-score", "f1_macro", "Id", ["Category"], ans, sub,
         int_f1_on("Id", "Category", "macro"))

    species = np.array(["Black-grass", "Charlock", "Cleavers", "Common Chickweed", "Common wheat",
                        "Fat Hen", "Loose Silky-bent", "Maize", "Scentless Mayweed",
                        "Shepherds Purse", "Small-flowered Cranesbill", "Sugar beet"])
    ids = [f"{h}.png" for h in hexes(110, 9)]
    y = species[RNG.randint(0, len(species), 110)]
    ans = pd.DataFrame({"file": ids, "species": y})
    sub = shuffled(pd.DataFrame({"file": ids, "species": noisy_labels(y, species)}))

    def seedlings(sub, ans):
        sub, ans = sorted_pair(sub, ans, "file")
        return skm.f1_score(ans["species"].tolist(), sub["species"].tolist(), average="micro")
    case("plant-seedlings-classification", "micro-f1-score", "f1_micro", "file", ["species"], ans,
         sub, seedlings, "single text labels with spaces")

    def label_rows(vocab, n, most):
        return [" ".join(RNG.choice(vocab, RNG.randint(1, most + 1), replace=False)) for _ in range(n)]

    vocab = [str(v) for v in unique_ints(0, 3474, 30)]
    ids = hexes(90, 16)
    truth = label_rows(vocab, 90, 4)
    pred = label_rows(vocab + ["9999", "9998"], 90, 5)  # two labels no answer holds
    ans = pd.DataFrame({"id": ids, "attribute_ids": truth})
    sub = shuffled(pd.DataFrame({"id": ids, "attribute_ids": pred}))
    case("imet-2020-fgvc7", "micro-f1-score", "f1_micro_known", "id", ["attribute_ids"], ans, sub,
         known_micro_f1_on("id", "attribute_ids"), "predicted labels no answer holds are ignored")

    tags = ["c#", ".net", "java", "python", "c++", "sql-server", "asp.net-mvc", "r", "linux"]
    ids = unique_ints(6034196, 8047533, 80)
    truth = label_rows(tags, 80, 3)
    truth[5] = ""  # an answer without tags
    pred = label_rows(tags + ["javascript"], 80, 3)
    pred[7] = ""
    ans = pd.DataFrame({"Id": ids, "Tags": truth})
    sub = shuffled(pd.DataFrame({"Id": ids, "Tags": pred}))
    case("facebook-recruiting-iii-keyword-extraction", "micro-f1-score", "f1_micro_known", "Id",
         ["Tags"], ans, sub, known_micro_f1_on("Id", "Tags"), "an empty answer and an empty prediction")

    labels = ["healthy", "scab", "frog_eye_leaf_spot", "rust", "complex", "powdery_mildew"]
    ids = [f"{h}.jpg" for h in hexes(70, 16)]
    ans = pd.DataFrame({"image": ids, "labels": label_rows(labels, 70, 2)})
    sub = shuffled(pd.DataFrame({"image": ids, "labels": label_rows(labels + ["mosaic"], 70, 3)}))
    case("plant-pathology-2021-fgvc8", "micro-f1-score", "f1_micro_known", "image", ["labels"], ans,
         sub, known_micro_f1_on("image", "labels"))


def kappa_mcc_cases():
    def qwk_on(id_col, target):
        def grade(sub, ans):
            sub, ans = sorted_pair(sub, ans, id_col)
            return skm.cohen_kappa_score(sub[target].values, ans[target].values, weights="quadratic")
        return grade

    ids = hexes(100, 12)
    y = RNG.choice([0, 1, 2, 4], 100)  # grade 3 in neither file: kappa weights use label indices
    ans = pd.DataFrame({"id_code": ids, "diagnosis": y})
    sub = shuffled(pd.DataFrame({"id_code": ids, "diagnosis": noisy_labels(y, [0, 1, 2, 4])}))
    case("aptos2019-blindness-detection", "quadratic-weighted-kappa", "qwk_sklearn", "id_code",
         ["diagnosis"], ans, sub, qwk_on("id_code", "diagnosis"), "grade 3 missing from both files")

    ids = hexes(90, 7)
    y = RNG.randint(1, 7, 90)
    ans = pd.DataFrame({"essay_id": ids, "full_text": [f"Essay {i}, with \"quotes\",\nand lines." for i in range(90)],
                        "score": y})
    sub = shuffled(pd.DataFrame({"essay_id": ids, "score": np.clip(y + RNG.randint(-1, 2, 90), 1, 6)}))
    case("learning-agency-lab-automated-essay-scoring-2", "quadratic-weighted-kappa", "qwk_sklearn",
         "essay_id", ["score"], ans, sub, qwk_on("essay_id", "score"), "answers hold the essay text")

    n = 150
    game = RNG.choice(["58168_003392", "58172_003247"], n)
    step = RNG.randint(0, 200, n)
    p1 = RNG.randint(30000, 50000, n)
    p2 = RNG.randint(30000, 50000, n)
    ids = [f"{g}_{s}_{a}_{b}" for g, s, a, b in zip(game, step, p1, p2)]
    ids = list(dict.fromkeys(ids))
    n = len(ids)
    y = (RNG.rand(n) < 0.2).astype(int)
    ans = pd.DataFrame({"contact_id": ids, "game_play": game[:n], "datetime": "2020-09-11T03:01:48.100Z",
                        "step": step[:n], "nfl_player_id_1": p1[:n], "nfl_player_id_2": p2[:n],
                        "contact": y})
    sub = shuffled(pd.DataFrame({"contact_id": ids, "contact": noisy_labels(y, [0, 1], 0.8)}))

    def nfl(sub, ans):
        sub = sub.sort_values("contact_id")
        ans = ans.sort_values("contact_id")
        return skm.matthews_corrcoef(ans["contact"], sub["contact"])
    case("nfl-player-contact-detection", "matthews-correlation-coefficient", "mcc", "contact_id",
         ["contact"], ans, sub, nfl)


# ---------------------------------------------------------------- MAP@k

def apk(actual, predicted, k):
    predicted = predicted[:k]
    score, hits = 0.0, 0.0
    for i, p in enumerate(predicted):
        if p in actual and p not in predicted[:i]:
            hits += 1.0
            score += hits / (i + 1.0)
    return score / min(len(actual), k) if actual else 0.0


def map_on(id_col, target, k):
    def grade(sub, ans):
        sub = sub.sort_values(id_col).reset_index(drop=True)
        ans = ans.sort_values(id_col).reset_index(drop=True)
        actual = ans[target].astype(str).str.split(" ").apply(set).tolist()
        predicted = sub[target].astype(str).str.split(" ").tolist()
        return np.mean([apk(a, p, k) for a, p in zip(actual, predicted)])
    return grade


def map_cases():
    hotels = unique_ints(10000, 99999, 25)
    ids = [f"{h}.jpg" for h in hexes(80, 16)]
    y = RNG.choice(hotels, 80)
    guesses = []
    for t in y:
        row = list(RNG.choice(hotels, 5))
        if RNG.rand() < 0.6:
            row[RNG.randint(0, 5)] = t
        guesses.append(" ".join(str(g) for g in row))
    ans = pd.DataFrame({"image": ids, "chain": RNG.randint(0, 90, 80), "hotel_id": y})
    sub = shuffled(pd.DataFrame({"image": ids, "hotel_id": guesses}))
    case("hotel-id-2021-fgvc8", "map-at-5", "map@5", "image", ["hotel_id"], ans, sub,
         map_on("image", "hotel_id", 5), "answers hold the chain; guesses may repeat")

    whales = ["new_whale"] + [f"w_{h}" for h in hexes(20, 7)]
    ids = [f"{h}.jpg" for h in hexes(70, 8)]
    y = RNG.choice(whales, 70)
    guesses = []
    for t in y:
        row = list(RNG.choice(whales, 6))  # six guesses: the cut at 5 matters
        if RNG.rand() < 0.6:
            row[RNG.randint(0, 6)] = t
        guesses.append(" ".join(row))
    ans = pd.DataFrame({"Image": ids, "Id": y})
    sub = shuffled(pd.DataFrame({"Image": ids, "Id": guesses}))
    case("whale-categorization-playground", "MAP@5", "map@5", "Image", ["Id"], ans, sub,
         map_on("Image", "Id", 5), "six guesses, cut at five")


# ---------------------------------------------------------------- regression and correlation

def rmse_on(id_col, target):
    def grade(sub, ans):
        sub, ans = sorted_pair(sub, ans, id_col)
        return skm.root_mean_squared_error(ans[target], sub[target])
    return grade


def regression_cases():
    n = 120
    keys = [f"2015-01-{d:02d} {h:02d}:{m:02d}:{s:02d}.{i:07d}" for d, h, m, s, i in
            zip(RNG.randint(1, 28, n), RNG.randint(0, 24, n), RNG.randint(0, 60, n),
                RNG.randint(0, 60, n), range(n))]
    fare = np.round(RNG.lognormal(2.2, 0.6, n), 2)
    ans = pd.DataFrame({"key": keys, "fare_amount": fare,
                        "pickup_datetime": [k[:19] + " UTC" for k in keys],
                        "pickup_longitude": RNG.uniform(-74.1, -73.7, n),
                        "pickup_latitude": RNG.uniform(40.6, 40.9, n),
                        "passenger_count": RNG.randint(1, 6, n)})
    sub = shuffled(pd.DataFrame({"key": keys, "fare_amount": fare + RNG.normal(0, 3, n)}))
    case("new-york-city-taxi-fare-prediction", "root-mean-squared-error", "rmse", "key",
         ["fare_amount"], ans, sub, rmse_on("key", "fare_amount"), "answers hold the ride features")

    ids = hexes(100, 32)
    y = RNG.randint(1, 101, 100)
    ans = pd.DataFrame({"Id": ids, "Subject Focus": RNG.randint(0, 2, 100), "Eyes": RNG.randint(0, 2, 100),
                        "Pawpularity": y})
    sub = shuffled(pd.DataFrame({"Id": ids, "Pawpularity": np.clip(y + RNG.normal(0, 15, 100), 1, 100)}))
    case("petfinder-pawpularity-score", "root-mean-squared-error", "rmse", "Id", ["Pawpularity"],
         ans, sub, rmse_on("Id", "Pawpularity"))

    ids = [f"{img}_{r}_{c}" for img in (1, 4) for r in range(1, 8) for c in range(1, 9)]
    v = np.round(RNG.uniform(0, 1, len(ids)), 6)
    ans = pd.DataFrame({"id": ids, "value": v})
    sub = shuffled(pd.DataFrame({"id": ids, "value": np.clip(v + RNG.normal(0, 0.1, len(ids)), 0, 1)}))
    case("denoising-dirty-documents", "root_mean_squared_error", "rmse", "id", ["value"], ans, sub,
         rmse_on("id", "value"), "pixel ids image_row_col")

    n = 90
    ans = pd.DataFrame({
        "id": np.arange(1, n + 1), "spacegroup": RNG.choice([12, 33, 167, 194, 206, 227], n),
        "number_of_total_atoms": RNG.choice([10.0, 20.0, 40.0, 80.0], n),
        "percent_atom_al": RNG.uniform(0, 1, n), "percent_atom_ga": RNG.uniform(0, 1, n),
        "lattice_vector_1_ang": RNG.uniform(3, 25, n),
        "formation_energy_ev_natom": RNG.uniform(0, 0.6, n),
        "bandgap_energy_ev": RNG.uniform(0.5, 5, n),
    })
    sub = pd.DataFrame({
        "id": ans["id"],
        "formation_energy_ev_natom": np.abs(ans["formation_energy_ev_natom"] + RNG.normal(0, 0.05, n)),
        "bandgap_energy_ev": np.abs(ans["bandgap_energy_ev"] + RNG.normal(0, 0.3, n)),
    })

    def nomad(sub, ans):  # grade.py pairs the rows by position: the submission keeps their order
        return (skm.root_mean_squared_log_error(ans["formation_energy_ev_natom"], sub["formation_energy_ev_natom"])
                + skm.root_mean_squared_log_error(ans["bandgap_energy_ev"], sub["bandgap_energy_ev"])) / 2
    case("nomad2018-predict-transparent-conductors", "mean-column-wise-rmsle", "rmsle_multi", "id",
         ["formation_energy_ev_natom", "bandgap_energy_ev"], ans, sub, nomad,
         "answers hold the features around the two targets")

    ids = hexes(120, 16)
    y = RNG.choice([0.0, 0.25, 0.5, 0.75, 1.0], 120)
    ans = pd.DataFrame({"id": ids, "anchor": RNG.choice(["abatement", "acid absorption"], 120),
                        "target": RNG.choice(["eliminating process", "forest region"], 120),
                        "context": RNG.choice(["A47", "F24", "C01"], 120), "score": y})
    sub = shuffled(pd.DataFrame({"id": ids, "score": np.clip(y + RNG.normal(0, 0.2, 120), 0, 1)}))

    def patent(sub, ans):
        sub, ans = sorted_pair(sub, ans, "id")
        return stats.pearsonr(ans["score"].to_numpy(), sub["score"].to_numpy())[0]
    case("us-patent-phrase-to-phrase-matching", "pearson-correlation-coefficient", "pearson", "id",
         ["score"], ans, sub, patent, "answers hold anchor, target and context")

    columns = ["question_asker_intent_understanding", "question_body_critical",
               "question_conversational", "question_type_spelling", "answer_helpful",
               "answer_well_written"]
    n = 80
    ids = unique_ints(1, 10000, n)
    ans = pd.DataFrame({"qa_id": ids})
    sub = pd.DataFrame({"qa_id": ids})
    for c in columns:
        levels = np.array([0.0, 1 / 3, 0.5, 2 / 3, 1.0])
        ans[c] = levels[RNG.randint(0, 5, n)]
        ans.loc[RNG.randint(0, n), c] = 1.0  # never constant
        ans.loc[RNG.randint(0, n), c] = 0.0
        sub[c] = np.round(np.clip(ans[c] + RNG.normal(0, 0.3, n), 0, 1), 1)  # ties
    def quest(sub, ans):
        sub = sub.sort_values("qa_id")
        ans = ans.sort_values("qa_id")
        return np.mean([stats.spearmanr(sub[c], ans[c]).correlation for c in columns])
    case("google-quest-challenge", "column-wise-spearman", "spearman_columns", "qa_id", columns, ans,
         shuffled(sub), quest, "six of the 30 columns; tied ranks on both sides")

    ids = [f"{p}_{s}" for p in unique_ints(10000, 65000, 60) for s in "LR"]
    y = (RNG.rand(len(ids)) < 0.1).astype(int)
    y[0] = 1
    p = np.round(RNG.uniform(-0.2, 1.2, len(ids)) * 0.5 + 0.4 * y, 4)  # some outside [0, 1]: clipped
    ans = pd.DataFrame({"prediction_id": ids, "cancer": y})
    sub = shuffled(pd.DataFrame({"prediction_id": ids, "cancer": p}))

    def pfbeta(sub, ans):
        sub, ans = sorted_pair(sub, ans, "prediction_id")
        labels, predictions = ans["cancer"].to_numpy(), sub["cancer"].to_numpy()
        positives, ctp, cfp = 0, 0.0, 0.0
        for label, prediction in zip(labels, predictions):
            prediction = min(max(prediction, 0), 1)
            if label:
                positives += 1
                ctp += prediction
            else:
                cfp += prediction
        precision, recall = ctp / (ctp + cfp), ctp / positives
        if precision > 0 and recall > 0:
            return 2 * precision * recall / (precision + recall)
        return 0.0
    case("rsna-breast-cancer-detection", "probabilistic-f1-score", "pf1", "prediction_id", ["cancer"],
         ans, sub, pfbeta, "predictions outside [0, 1] are clipped")


# ---------------------------------------------------------------- layouts the importer resolves

def as_read(df, **kwargs):
    """`df` as MLE-bench's grader sees it: written as prepare.py writes it, read back with
    mlebench.utils.read_csv (pandas, float_precision="round_trip")."""
    text = df.to_csv(index=False, lineterminator="\n", **kwargs)
    return pd.read_csv(io.StringIO(text), float_precision="round_trip")


def auroc_keyed_on(id_col, target):
    """utils.prepare_for_auroc_metric: rows sorted by `id_col`, ids checked, then AUC."""
    def grade(sub, ans):
        sub, ans = as_read(sub), as_read(ans)
        sub, ans = sorted_pair(sub, ans, id_col)
        return skm.roc_auc_score(ans[target].to_numpy(), sub[target].to_numpy())
    return grade


def text_normalization_on(id_col, target):
    """text-normalization-challenge-*/grade.py: rows sorted by id, both sides cast to str."""
    def grade(sub, ans):
        sub = as_read(sub, quoting=csvlib.QUOTE_NONNUMERIC)
        ans = as_read(ans, quoting=csvlib.QUOTE_NONNUMERIC)
        sub, ans = sorted_pair(sub, ans, id_col)
        return skm.accuracy_score(ans[target].astype(str).to_numpy(), sub[target].astype(str).to_numpy())
    return grade


def layout_cases():
    # detecting-insults: the answers are test_with_solutions.csv (Insult, Date, Comment,
    # Usage); the submission holds the columns grade.py reads (Insult, Comment; the sample's
    # Date is an echo of test.csv, which ml2b's harness does not write); grade.py keys on
    # Comment, text in literal double quotes with commas, escapes and line breaks.
    words = ["you", "idiot", "great", "point", "moron", "thanks", "really", "sure", "troll", "agree"]
    n = 90
    comments = []
    for i in range(n):
        text = " ".join(RNG.choice(words, RNG.randint(2, 9)))
        extra = ["", ", isn't it", '\\xa0\\n', ' "quoted"', "\nsecond line", ", 100%"][i % 6]
        comments.append(f'"{text}{extra} #{i}"')
    y = (RNG.rand(n) < 0.3).astype(int)
    dates = [f"201206{RNG.randint(10, 30)}{RNG.randint(100000, 235959)}Z" if RNG.rand() < 0.8 else ""
             for _ in range(n)]
    ans = pd.DataFrame({"Insult": y, "Date": dates, "Comment": comments,
                        "Usage": np.where(RNG.rand(n) < 0.5, "PublicTest", "PrivateTest")})
    sub = shuffled(pd.DataFrame({"Insult": np.round(scores_for(y, 0.25), 3), "Comment": comments}))
    case("detecting-insults-in-social-commentary", "auc-roc", "roc_auc", "Comment", ["Insult"], ans,
         sub, auroc_keyed_on("Comment", "Insult"),
         "keyed on Comment (quoted text with commas, escapes, line breaks); Date blank in some rows")

    ids = hexes(110, 40)
    y = (RNG.rand(110) < 0.4).astype(int)
    ans = pd.DataFrame({"id": ids, "label": y})
    sub = shuffled(pd.DataFrame({"id": ids, "label": np.round(scores_for(y, 0.2), 2)}))
    case("histopathologic-cancer-detection", "auc-roc", "roc_auc", "id", ["label"], ans, sub,
         auroc_keyed_on("id", "label"), "answers.csv of id, label; rounded scores (ties)")

    for competition, vocab in [
        ("text-normalization-challenge-english-language",
         ["the", "sil", ".", ",", "one", "two hundred", "twenty twenty", "b c", "Brillantaisia", "1", "a"]),
        ("text-normalization-challenge-russian-language",
         ["и", "sil", ".", "два", "тысяча девятьсот", "первого", "км", "1", "сто двадцать", "Москва"]),
    ]:
        ids = [f"{s}_{t}" for s in range(25) for t in range(RNG.randint(2, 9))]
        after = RNG.choice(vocab, len(ids))
        ans = pd.DataFrame({"id": ids, "after": after})
        sub = shuffled(pd.DataFrame({"id": ids, "after": noisy_labels(after, vocab, 0.7)}))
        case(competition, "accuracy", "accuracy", "id", ["after"], ans, sub,
             text_normalization_on("id", "after"),
             "ids sentence_token; labels cast to str; files written with QUOTE_NONNUMERIC")


def main():
    accuracy_cases()
    top1_cases()
    auc_cases()
    log_loss_cases()
    f1_cases()
    kappa_mcc_cases()
    map_cases()
    regression_cases()
    layout_cases()
    doc = {
        "generated_by": "tests/reference/mle_bench_grades.py",
        "versions": {"python": ".".join(map(str, __import__("sys").version_info[:3])),
                     "numpy": np.__version__, "scipy": scipy.__version__,
                     "scikit-learn": sklearn.__version__, "pandas": pd.__version__},
        "cases": CASES,
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {os.path.relpath(OUT)}: {len(CASES)} cases, "
          f"{len({c['grader'] for c in CASES})} grader names")


if __name__ == "__main__":
    main()
