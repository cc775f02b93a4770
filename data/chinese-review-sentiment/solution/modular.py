"""Chinese review sentiment reference solution (MODULAR_PREDICT): character 1-2-gram TF-IDF
(no word segmentation needed) and logistic regression."""
from typing import Any

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

TARGET = "label"
TEXT = "review"


def train(data: pd.DataFrame) -> Any:
    model = make_pipeline(
        TfidfVectorizer(analyzer="char", ngram_range=(1, 2), sublinear_tf=True),
        LogisticRegression(C=10.0, max_iter=2000),
    )
    model.fit(data[TEXT].fillna(""), data[TARGET])
    return model


def prepare_val(train_output: Any, X_val: pd.DataFrame) -> Any:
    return X_val[TEXT].fillna("")


def predict(train_output: Any, prepare_val_output: Any) -> np.ndarray:
    return train_output.predict(prepare_val_output)


def run(data, X_val):
    train_output = train(data)
    return predict(train_output, prepare_val(train_output, X_val))
