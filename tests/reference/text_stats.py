#!/usr/bin/env python3
"""Writes tests/fixtures/text_stats.json: inputs and the values the reference
implementations compute for them (sacreBLEU 2.6.0, irrCAC 0.4.4, scipy 1.17.1).

    pip install --no-deps -r tests/reference/requirements-text.txt
    python3 tests/reference/text_stats.py

The Rust tests read the fixture and compare every number to 1e-9. Nothing in
the fixture is typed by hand: inputs are written below (or drawn from a seeded
generator) and every expected value is what the reference package returns.
NaN is written as null (JSON has no NaN).
"""

import json
import logging
import warnings
import math
import random
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import sacrebleu
import scipy
import irrCAC
from irrCAC.raw import CAC as RawCAC
from irrCAC.table import CAC as TableCAC
from irrCAC.weights import Weights
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh
from sacrebleu.utils import sum_of_lists
from scipy import stats

logging.getLogger("sacrebleu").setLevel(logging.ERROR)
warnings.filterwarnings("ignore")

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "text_stats.json"
DIGITS = 20  # irrCAC rounds its outputs to `digits`; 20 keeps full precision.

# --------------------------------------------------------------------------
# Text: (reference, hypothesis) pairs in the 14 ML2B languages.
PAIRS = {
    "en": [
        ("The model was trained for 3 epochs on 1,000.5 hours of data.",
         "The model was trained for three epochs on 1,000.5 hours of data!"),
        ("Don't e-mail the x-ray results (2-3 pages) to Dr. Smith.",
         "Do not e-mail x-ray results, 2-3 pages, to Dr Smith."),
    ],
    "fr": [
        ("L'élève a dit : « C'est très bien ! » à 9h30.",
         "L'élève a dit « c'est très bien » vers 9h30."),
        ("Prédire le prix d'une maison — en euros (€).",
         "Prédisez le prix de la maison en euros."),
    ],
    "es": [
        ("¿Cuántos años tiene el niño? ¡Tiene 7,5 años!",
         "¿Qué edad tiene el niño? Tiene 7,5 años."),
        ("La métrica es el error cuadrático medio (RMSE).",
         "La métrica es la raíz del error cuadrático medio."),
    ],
    "it": [
        ("Perché l'algoritmo è più veloce? Non lo so.",
         "Perché l'algoritmo è così veloce? Non so."),
        ("Il punteggio è 0,85 sull'insieme di prova.",
         "Il punteggio è di 0,85 sul set di test."),
    ],
    "zh": [
        ("机器学习的目标是预测房价，评估指标为均方根误差。",
         "机器学习的目的是预测房屋价格，指标是均方根误差。"),
        ("训练集包含10,000条记录（约2.5GB）。",
         "训练数据有10000条记录，大约2.5GB。"),
    ],
    "ja": [
        ("機械学習のパイプラインを生成する。",
         "機械学習パイプラインを作成します。"),
        ("評価指標は「AUC」で、提出期限は3月31日です。",
         "評価はAUCで行い、締め切りは3月31日です。"),
    ],
    "ru": [
        ("Модель обучалась 3 эпохи — результат: 0,91.",
         "Модель училась три эпохи, результат 0,91."),
        ("Предскажите цену дома по его характеристикам.",
         "Спрогнозируйте стоимость дома по признакам."),
    ],
    "pl": [
        ("Zażółć gęślą jaźń — to zdanie ma wszystkie znaki.",
         "Zażółć gęślą jaźń: zdanie ze wszystkimi znakami."),
        ("Celem jest przewidzenie, czy klient odejdzie.",
         "Celem jest przewidywanie, czy klient zrezygnuje."),
    ],
    "tr": [
        ("İstanbul'da ILIK bir gün; ıslak ışık, iğne İĞNE.",
         "İstanbul'da ılık bir gün, ISLAK IŞIK ve iğne."),
        ("Modelin doğruluğu %92,5 olarak ölçüldü.",
         "Modelin doğruluk oranı %92,5 ölçüldü."),
    ],
    "ar": [
        ("الهدف هو التنبؤ بسعر المنزل، والمقياس هو RMSE.",
         "الهدف التنبؤ بسعر البيت، والمقياس RMSE."),
        ("هل النموذج دقيق؟ نعم، بنسبة ٩٥٪.",
         "هل النموذج دقيق؟ نعم بنسبة 95%."),
    ],
    "uk": [
        ("Ґаблі, їжак і є — українські літери; «лапки» теж.",
         "Ґава, їжак та є — українські літери, \"лапки\" теж."),
        ("Передбачте ймовірність дефолту позичальника.",
         "Спрогнозуйте ймовірність дефолту позичальника."),
    ],
    "ro": [
        ("Știința datelor și învățarea automată țin pasul.",
         "Ştiinţa datelor şi învăţarea automată ţin pasul."),
        ("Scorul final este 0,73 (pe setul de test).",
         "Scorul final este de 0,73 pe setul de testare."),
    ],
    "kk": [
        ("Қазақ тілінде ә, ғ, қ, ң, ө, ұ, ү, һ, і әріптері бар.",
         "Қазақ тілінде ә, ғ, қ, ң, ө, ұ, ү, і әріптері бар."),
        ("Модельдің дәлдігі 0,88 болды.",
         "Модель дәлдігі 0,88 болды."),
    ],
    "be": [
        ("Беларуская мова мае літары ў, і, ё — і апостраф: п’еса.",
         "Беларуская мова мае літары ў і ё, і апостраф п'еса."),
        ("Прадкажыце, ці пакіне кліент банк.",
         "Спрагназуйце, ці сыдзе кліент з банка."),
    ],
}

EDGE_TEXTS = [
    "don't e-mail x-ray 2-3 1,000.50 €5.",
    "a.. b,, 3.5. x...y",
    "&quot;quoted&quot; &amp; &lt;tag&gt; &amp;amp; AT&T",
    "<skipped> text <skipped>",
    "hyphen-\nated line\nbreak",
    "Price: $5,000.00 (approx.) vs. 3.14, 2,5 and .5 ,7",
    "The year was 2024.",
    "1.5-2.5 km, 10-20-30 items, -5 and a-b",
    "U.S.A. vs. U.K., e.g. i.e.",
    "C++ & C#; {a|b} ~x^2 [y]_z `q` @home /path\\back 100% *bold* +1 =2 <3> ?!",
    "tab\tsep\x1cinfo\x1dsep\x1e\x1fend",
    "  leading and trailing spaces   \t ",
    "",
    "   ",
    "ΣΊΣΥΦΟΣ ΟΔΟΣ ΣΑΣ",
    "ﬁ ligature Straße ǅ",
    "ＡＢＣ１２３，。！（全角）",
    "“Hello” — she said… «bonjour» ‹x› „Cytat” ¿qué? ¡sí!",
    "50% off! 3×4=12 ±1 ° ™ © → ✓ ★",
    "😀 emoji 👍🏽 mix",
    "x\u00a0y\u2009z\u3000w\u2028v\u0085u",
    "tokenized text ends with a period .",
    "numbers 1,000,000 and 3.141.592 and 1.2.3-4",
    "Hanzi Ext-B 𠀀𠀁 and 鿼 vs 中文",
    "ひらがな カタカナ ｶﾀｶﾅ",
    "I İ ı i Iı İi",
]

TOKENIZERS = ["13a", "intl", "zh", "char", "none"]
SMOOTHINGS = ["exp", "floor", "add-k", "none"]


def all_texts():
    texts = list(EDGE_TEXTS)
    for pairs in PAIRS.values():
        for ref, hyp in pairs:
            texts += [ref, hyp]
    return texts


def nan_to_none(x):
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, (np.floating,)):
        return nan_to_none(float(x))
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, dict):
        return {k: nan_to_none(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [nan_to_none(v) for v in x]
    return x


# --------------------------------------------------------------------------
# Tokenizers
def tokenize_cases():
    cases = []
    for tok in TOKENIZERS:
        for lowercase in (False, True):
            bleu = BLEU(tokenize=tok, lowercase=lowercase)
            for text in all_texts():
                out = bleu._preprocess_segment(text)
                cases.append(dict(tokenizer=tok, lowercase=lowercase, input=text, output=out))
    return cases


def zh_ranges():
    ranges = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        if TokenizerZh._is_chinese_char(chr(cp)):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    return ranges


# --------------------------------------------------------------------------
# BLEU
def bleu_opts(tok="13a", lowercase=False, smooth="exp", value=None, eff=False, order=4):
    return dict(tokenizer=tok, lowercase=lowercase, smooth=smooth, smooth_value=value,
                effective_order=eff, max_ngram_order=order)


def make_bleu(o):
    return BLEU(tokenize=o["tokenizer"], lowercase=o["lowercase"], smooth_method=o["smooth"],
                smooth_value=o["smooth_value"], effective_order=o["effective_order"],
                max_ngram_order=o["max_ngram_order"])


def bleu_expected(bleu, hyps, refs):
    raw = bleu._extract_corpus_statistics(hyps, refs)
    total = list(sum_of_lists([list(s) for s in raw]))
    n = bleu.max_ngram_order
    score = bleu.corpus_score(hyps, refs)
    return dict(score=score.score, counts=[int(c) for c in total[2:2 + n]],
                totals=[int(t) for t in total[2 + n:]], precisions=list(score.precisions),
                bp=score.bp, sys_len=int(total[0]), ref_len=int(total[1]),
                signature=str(bleu.get_signature()))


def multilingual_corpus():
    hyps, refs = [], []
    for pairs in PAIRS.values():
        for ref, hyp in pairs:
            hyps.append(hyp)
            refs.append(ref)
    return hyps, [refs]


def random_corpus(rng, n, nrefs, vocab):
    def sentence():
        return " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 14)))
    hyps = [sentence() for _ in range(n)]
    refs = [[sentence() for _ in range(n)] for _ in range(nrefs)]
    return hyps, refs


def corpora():
    rng = random.Random(20240613)
    vocab = ["the", "cat", "sat", "on", "mat", "a", "dog", ",", ".", "3.5", "x-ray", "don't",
             "Le", "chat", "猫", "座", "ИИ", "İ", "ı"]
    hyps, refs = multilingual_corpus()
    out = {"multilingual": (hyps, refs)}
    for lang, pairs in PAIRS.items():
        out[f"lang_{lang}"] = ([h for _, h in pairs], [[r for r, _ in pairs]])
    second = [h[::-1] if i % 3 == 0 else r for i, (h, r) in enumerate(zip(hyps, refs[0]))]
    out["multilingual_2refs"] = (hyps, [refs[0], second])
    out["multilingual_3refs"] = (hyps, [refs[0], second, hyps[::-1]])
    out["edge_texts"] = (EDGE_TEXTS, [EDGE_TEXTS[::-1]])
    out["edge_texts_self"] = (EDGE_TEXTS, [EDGE_TEXTS, EDGE_TEXTS[1:] + EDGE_TEXTS[:1]])
    out["all_empty_hyps"] = (["", "", ""], [["a b c", "d e", "f"]])
    out["some_empty_hyps"] = (["", "a b c d", ""], [["a b c", "a b c d e", "x"]])
    out["empty_refs"] = (["a b c", "d"], [["", ""]])
    out["short_identical"] = (["a b c"], [["a b c"]])
    out["no_match"] = (["p q r s t"], [["a b c d e"]])
    out["unigram_only_match"] = (["a x b y c"], [["a b c d e"]])
    out["hyp_longer"] = (["a b c d e f g h"], [["a b c d"]])
    out["tie_ref_len"] = (["a b c d e"], [["a b c"], ["a b c d e f g"]])
    for k in range(4):
        out[f"random_{k}"] = random_corpus(rng, 40, 1 + k % 3, vocab)
    return out


def bleu_corpus_cases():
    cases = []
    data = corpora()
    grid = [bleu_opts(tok=t, smooth=s, eff=e, lowercase=lc)
            for t in TOKENIZERS for s in SMOOTHINGS for e in (False, True) for lc in (False, True)]
    for name in ["multilingual", "edge_texts"]:
        for o in grid:
            cases.append((name, o))
    extra = [bleu_opts(), bleu_opts(eff=True), bleu_opts(smooth="floor", value=0.25),
             bleu_opts(smooth="add-k", value=0.5), bleu_opts(smooth="add-k", value=2),
             bleu_opts(smooth="none"), bleu_opts(order=2), bleu_opts(order=6, eff=True),
             bleu_opts(tok="intl", lowercase=True), bleu_opts(tok="zh")]
    for name in data:
        if name in ("multilingual", "edge_texts"):
            continue
        for o in extra:
            cases.append((name, o))
    out = []
    for name, o in cases:
        hyps, refs = data[name]
        exp = bleu_expected(make_bleu(o), hyps, refs)
        out.append(dict(corpus=name, options=o, expected=exp))
    return out


def bleu_sentence_cases():
    out = []
    texts = all_texts()
    for tok in TOKENIZERS:
        for eff in (True, False):
            o = bleu_opts(tok=tok, eff=eff)
            bleu = make_bleu(o)
            for lang, pairs in PAIRS.items():
                for ref, hyp in pairs:
                    s = bleu.sentence_score(hyp, [ref])
                    out.append(dict(hyp=hyp, refs=[ref], options=o, score=s.score, bp=s.bp,
                                    precisions=list(s.precisions)))
            for i, hyp in enumerate(EDGE_TEXTS):
                refs = [texts[(i * 7) % len(texts)], texts[(i * 11 + 3) % len(texts)]]
                s = bleu.sentence_score(hyp, refs)
                out.append(dict(hyp=hyp, refs=refs, options=o, score=s.score, bp=s.bp,
                                precisions=list(s.precisions)))
    # The compat function (effective order on) on the first pairs.
    for lang, pairs in PAIRS.items():
        ref, hyp = pairs[0]
        s = sacrebleu.sentence_bleu(hyp, [ref])
        out.append(dict(hyp=hyp, refs=[ref], options=bleu_opts(eff=True), score=s.score, bp=s.bp,
                        precisions=list(s.precisions)))
    return out


# --------------------------------------------------------------------------
# chrF
def chrf_opts(char_order=6, word_order=0, beta=2, lowercase=False, whitespace=False, eps=False):
    return dict(char_order=char_order, word_order=word_order, beta=beta, lowercase=lowercase,
                whitespace=whitespace, eps_smoothing=eps)


def make_chrf(o):
    return CHRF(char_order=o["char_order"], word_order=o["word_order"], beta=o["beta"],
                lowercase=o["lowercase"], whitespace=o["whitespace"],
                eps_smoothing=o["eps_smoothing"])


CHRF_GRID = [chrf_opts(), chrf_opts(word_order=2), chrf_opts(lowercase=True),
             chrf_opts(whitespace=True), chrf_opts(eps=True), chrf_opts(word_order=2, eps=True),
             chrf_opts(beta=1), chrf_opts(beta=3, word_order=1), chrf_opts(char_order=4),
             chrf_opts(word_order=2, lowercase=True, whitespace=True)]


def chrf_corpus_cases():
    out = []
    for name, (hyps, refs) in corpora().items():
        for o in CHRF_GRID:
            chrf = make_chrf(o)
            s = chrf.corpus_score(hyps, refs)
            out.append(dict(corpus=name, options=o, score=s.score,
                            signature=str(chrf.get_signature())))
    return out


def chrf_sentence_cases():
    out = []
    texts = all_texts()
    for o in CHRF_GRID[:6]:
        chrf = make_chrf(o)
        for lang, pairs in PAIRS.items():
            for ref, hyp in pairs:
                out.append(dict(hyp=hyp, refs=[ref], options=o,
                                score=chrf.sentence_score(hyp, [ref]).score))
        for i, hyp in enumerate(EDGE_TEXTS):
            refs = [texts[(i * 5) % len(texts)], hyp[::-1], texts[(i * 13 + 1) % len(texts)]]
            out.append(dict(hyp=hyp, refs=refs, options=o,
                            score=chrf.sentence_score(hyp, refs).score))
    return out


# --------------------------------------------------------------------------
# Agreement (irrCAC)
WEIGHTS = ["identity", "linear", "quadratic", "ordinal", "radical", "ratio", "circular",
           "bipolar"]


def is_number(cell):
    try:
        float(cell)
        return True
    except ValueError:
        return False


def ratings_frame(rows, numeric):
    def cell(c):
        c = c.strip()
        if c == "":
            return np.nan
        return float(c) if numeric else c
    data = [[cell(c) for c in row] for row in rows]
    cols = [f"r{j}" for j in range(len(rows[0]))]
    return pd.DataFrame(data, columns=cols, dtype=float if numeric else object)


def coefficient(res):
    est = res["est"]
    lo, hi = est["confidence_interval"]
    return dict(coefficient=float(est["coefficient_value"]), pa=float(est["pa"]),
                pe=float(est["pe"]), se=float(est["se"]), ci=[float(lo), float(hi)])


def cohen(df, categories, weights_mat):
    complete = df.dropna(how="any")
    q = len(categories)
    table = np.zeros((q, q))
    for a, b in complete.itertuples(index=False):
        table[categories.index(a), categories.index(b)] += 1
    tab = pd.DataFrame(table, index=categories, columns=categories)
    return coefficient(TableCAC(tab, weights=weights_mat, digits=DIGITS).cohen())


def guarded(compute):
    """irrCAC raises ZeroDivisionError in some corners (Fleiss and Krippendorff
    with one category: chance agreement 1 in plain Python floats)."""
    try:
        return compute()
    except ZeroDivisionError:
        return dict(error="ZeroDivisionError")


def agreement_expected(rows, categories, weights):
    cells = [c.strip() for row in rows for c in row if c.strip() != ""]
    numeric = all(is_number(c) for c in cells + (categories or []))
    df = ratings_frame(rows, numeric)
    cats = None
    if categories is not None:
        cats = sorted(float(c) for c in categories) if numeric else list(categories)
    with np.errstate(all="ignore"):
        cac = RawCAC(df, weights=weights, categories=cats, digits=DIGITS)
        out = dict(gwet=guarded(lambda: coefficient(cac.gwet())),
                   fleiss=guarded(lambda: coefficient(cac.fleiss())),
                   krippendorff=guarded(lambda: coefficient(cac.krippendorff())),
                   brennan_prediger=guarded(lambda: coefficient(cac.bp())))
        if df.shape[1] == 2:
            out["cohen"] = guarded(
                lambda: cohen(df.dropna(how="all"), list(cac.categories), cac.weights_mat))
    out["categories"] = [str(c) for c in cac.categories]
    return out


def raw_4raters():
    rows = [["1", "1", "", "1"], ["2", "2", "3", "2"], ["3", "3", "3", "3"], ["3", "3", "3", "3"],
            ["2", "2", "2", "2"], ["1", "2", "3", "4"], ["4", "4", "4", "4"], ["1", "1", "2", "1"],
            ["2", "2", "2", "2"], ["", "5", "5", "5"], ["", "", "1", "1"], ["", "", "3", ""]]
    return rows


def random_ratings(rng, subjects, raters, scale, missing, agree=0.6):
    rows = []
    for _ in range(subjects):
        truth = rng.choice(scale)
        row = []
        for _ in range(raters):
            if rng.random() < missing:
                row.append("")
            elif rng.random() < agree:
                row.append(truth)
            else:
                row.append(rng.choice(scale))
        rows.append(row)
    return rows


def agreement_datasets():
    rng = random.Random(77)
    scale5 = ["1", "2", "3", "4", "5"]
    sets = [
        ("irrcac_4raters", raw_4raters(), None),
        ("irrcac_4raters_scale1to6", raw_4raters(), [str(k) for k in range(1, 7)]),
        ("two_raters", [["1", "1"], ["2", "2"], ["3", "3"], ["1", "2"], ["2", "2"],
                        ["3", "2"], ["1", "1"], ["2", "3"], ["3", "3"], ["1", "1"]], None),
        ("two_raters_scale1to5", [["1", "1"], ["2", "2"], ["3", "3"], ["1", "2"], ["2", "2"],
                                  ["3", "2"], ["1", "1"], ["2", "3"], ["3", "3"], ["1", "1"]],
         scale5),
        ("two_raters_missing", [["1", "1"], ["2", ""], ["3", "3"], ["", "2"], ["2", "2"],
                                ["3", "2"], ["", ""], ["2", "3"], ["3", "3"], ["1", "1"],
                                ["4", "4"], ["1", "2"]], None),
        ("all_missing_rows", [["", "", ""], ["1", "1", "2"], ["2", "2", "2"], ["", "", ""],
                              ["3", "1", "3"], ["1", "", "1"], ["2", "3", ""]], None),
        ("unused_middle_category", [["1", "1", "1"], ["5", "5", "4"], ["1", "5", "1"],
                                    ["4", "4", "4"], ["5", "5", "5"], ["1", "1", "4"]],
         scale5),
        ("fractional_scale", [["0.5", "1", "0.5"], ["2.5", "2.5", "1"], ["1", "1", "1"],
                              ["2.5", "0.5", "2.5"], ["1", "2.5", "2.5"]], None),
        ("labels", [["yes", "yes", "no"], ["no", "no", "no"], ["maybe", "yes", "maybe"],
                    ["yes", "yes", "yes"], ["no", "maybe", "no"], ["yes", "", "yes"]], None),
        ("labels_given_order", [["yes", "yes", "no"], ["no", "no", "no"], ["maybe", "yes", "maybe"],
                                ["yes", "yes", "yes"], ["no", "maybe", "no"]],
         ["no", "maybe", "yes"]),
        ("perfect_agreement", [["1", "1"], ["2", "2"], ["3", "3"], ["2", "2"]], None),
        # What two annotators enter on the annotation page in tests/it/annotate.rs: the
        # five fields of one translation (title … data_card) × ana, bo, on the 1–5 scale.
        ("annotation_page", [["5", "5"], ["4", "4"], ["5", "4"], ["3", "3"], ["4", "2"]],
         scale5),
    ]
    for k, (subjects, raters, missing) in enumerate([(10, 2, 0.0), (30, 2, 0.1), (25, 3, 0.0),
                                                     (40, 5, 0.2), (50, 10, 0.3), (15, 4, 0.25)]):
        sets.append((f"random_{k}", random_ratings(rng, subjects, raters, scale5, missing), None))
    sets.append(("random_scale7", random_ratings(rng, 30, 3, scale5, 0.1),
                 [str(k) for k in range(1, 8)]))
    return sets


def one_category_datasets():
    return [("one_category", [["1", "1", "1"], ["1", "1", ""], ["1", "1", "1"], ["", "1", "1"]],
             None),
            ("one_category_two_raters", [["2", "2"], ["2", "2"], ["2", ""], ["2", "2"]], None)]


def agreement_cases():
    out = []
    for name, rows, cats in agreement_datasets():
        numeric = all(is_number(c) for row in rows for c in row if c.strip())
        for w in WEIGHTS:
            if w == "ratio" and numeric and any(float(c) == 0 for row in rows for c in row if c):
                continue
            exp = agreement_expected(rows, cats, w)
            out.append(dict(name=name, ratings=rows, categories=cats, weights=w, expected=exp))
    for name, rows, cats in one_category_datasets():
        exp = agreement_expected(rows, cats, "identity")
        out.append(dict(name=name, ratings=rows, categories=cats, weights="identity", expected=exp))
    return out


# --------------------------------------------------------------------------
# Spearman and Student t
def spearman_cases():
    rng = random.Random(99)
    data = [
        ([1, 2, 2, 3, 4, 4, 4, 5], [2, 1, 3, 3, 5, 4, 6, 6]),
        ([1, 2, 3], [3, 1, 2]),
        ([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]),
        ([1, 2, 3, 4, 5], [1, 2, 3, 4, 5]),
        ([1, 2, 3, 4, 5], [5, 4, 3, 2, 1]),
        ([1.5, 2.5], [3.0, 1.0]),
        ([1, 2], [1, 2]),
        ([1, 1, 1, 1], [1, 2, 3, 4]),
        ([7.0], [3.0]),
        ([0.1, 0.2, 0.2, 0.2, 0.9, 1e9, -3], [1, 1, 2, 2, 3, 3, 3]),
    ]
    for n in (5, 10, 20, 50, 200, 1000):
        x = [rng.randint(0, 5) for _ in range(n)]
        y = [xi + rng.randint(-3, 3) for xi in x]
        data.append((x, y))
        data.append(([rng.gauss(0, 1) for _ in range(n)], [rng.gauss(0, 1) for _ in range(n)]))
    out = []
    for x, y in data:
        res = stats.spearmanr(x, y)
        out.append(dict(x=[float(v) for v in x], y=[float(v) for v in y],
                        rho=float(res.statistic), p=float(res.pvalue)))
    return out


def student_t_cases():
    out = []
    for df in [1, 2, 3, 4, 5, 7, 9, 10, 11, 15, 20, 29, 30, 49, 50, 99, 100, 500, 1000, 10000]:
        q = stats.t.ppf(0.975, df)
        lo, hi = stats.t.interval(0.95, df=df)
        out.append(dict(df=df, ppf975=float(q), interval=[float(lo), float(hi)],
                        sf=[[t, float(stats.t.sf(t, df))] for t in (0.0, 0.3, 1.0, 2.5, 7.0, 40.0)]))
    return out


def main():
    fixture = dict(
        versions=dict(python=sys.version.split()[0], sacrebleu=sacrebleu.__version__,
                      irrCAC="0.4.4", scipy=scipy.__version__, numpy=np.__version__,
                      pandas=pd.__version__),
        corpora={k: dict(hyps=h, refs=r) for k, (h, r) in corpora().items()},
        tokenize=tokenize_cases(),
        zh_ranges=zh_ranges(),
        bleu_corpus=bleu_corpus_cases(),
        bleu_sentence=bleu_sentence_cases(),
        chrf_corpus=chrf_corpus_cases(),
        chrf_sentence=chrf_sentence_cases(),
        agreement=agreement_cases(),
        spearman=spearman_cases(),
        student_t=student_t_cases(),
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(nan_to_none(fixture), ensure_ascii=False, allow_nan=False, indent=None)
    OUT.write_text(text + "\n", encoding="utf-8")
    counts = {k: len(v) for k, v in fixture.items() if isinstance(v, list)}
    print(f"wrote {OUT} {counts}")


if __name__ == "__main__":
    main()
