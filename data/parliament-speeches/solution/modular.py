"""Parliament speeches reference solution (MODULAR_PREDICT): one model per parliament (each has
its own parties): character 2-5-gram TF-IDF of the speech and logistic regression; the three most
probable parties of the speech's parliament, best first."""
from typing import Any

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

TARGET = "party"
TEXT = "text"
GROUP = "parliament"
K = 3


def train(data: pd.DataFrame) -> Any:
    models = {}
    for parliament, rows in data.groupby(GROUP):
        model = make_pipeline(
            TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), min_df=2, sublinear_tf=True),
            LogisticRegression(C=10.0, max_iter=3000),
        )
        models[parliament] = model.fit(rows[TEXT].fillna(""), rows[TARGET])
    return models


def prepare_val(train_output: Any, X_val: pd.DataFrame) -> Any:
    return X_val[[GROUP, TEXT]].fillna({TEXT: ""}).reset_index(drop=True)


def predict(train_output: Any, prepare_val_output: Any) -> np.ndarray:
    ranked = np.empty((len(prepare_val_output), K), dtype=object)
    for parliament, rows in prepare_val_output.groupby(GROUP):
        model = train_output[parliament]
        proba = model.predict_proba(rows[TEXT])
        ranked[rows.index.to_numpy()] = model.classes_[np.argsort(-proba, axis=1, kind="stable")[:, :K]]
    return ranked


def run(data, X_val):
    train_output = train(data)
    return predict(train_output, prepare_val(train_output, X_val))
