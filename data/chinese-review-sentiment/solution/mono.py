"""Chinese review sentiment reference solution (MONO_PREDICT): character 1-2-gram TF-IDF
(no word segmentation needed) and logistic regression."""
import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

TARGET = "label"
TEXT = "review"


def train_and_predict(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    model = make_pipeline(
        TfidfVectorizer(analyzer="char", ngram_range=(1, 2), sublinear_tf=True),
        LogisticRegression(C=10.0, max_iter=2000),
    )
    model.fit(data[TEXT].fillna(""), data[TARGET])
    return model.predict(X_val[TEXT].fillna(""))
