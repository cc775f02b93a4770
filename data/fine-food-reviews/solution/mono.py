"""Fine food reviews reference solution (MONO_PREDICT): word 1-2-gram TF-IDF of the review
text and a class-balanced logistic regression (balanced weights suit the macro F1)."""
import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

TARGET = "score"
TEXT = "review"


def _clean(texts: pd.Series) -> pd.Series:
    return texts.fillna("").str.replace(r"<[^>]+>", " ", regex=True)  # drop HTML tags such as <br />


def train_and_predict(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    model = make_pipeline(
        TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True),
        LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000),
    )
    model.fit(_clean(data[TEXT]), data[TARGET])
    return model.predict(_clean(X_val[TEXT]))
