"""Fine food reviews reference solution (MODULAR_PREDICT): word 1-2-gram TF-IDF of the review
text and a class-balanced logistic regression (balanced weights suit the macro F1)."""
from typing import Any

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

TARGET = "score"
TEXT = "review"


def _clean(texts: pd.Series) -> pd.Series:
    return texts.fillna("").str.replace(r"<[^>]+>", " ", regex=True)  # drop HTML tags such as <br />


def train(data: pd.DataFrame) -> Any:
    model = make_pipeline(
        TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True),
        LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000),
    )
    model.fit(_clean(data[TEXT]), data[TARGET])
    return model


def prepare_val(train_output: Any, X_val: pd.DataFrame) -> Any:
    return _clean(X_val[TEXT])


def predict(train_output: Any, prepare_val_output: Any) -> np.ndarray:
    return train_output.predict(prepare_val_output)


def run(data, X_val):
    train_output = train(data)
    return predict(train_output, prepare_val(train_output, X_val))
