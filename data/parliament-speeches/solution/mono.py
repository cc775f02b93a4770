"""Parliament speeches reference solution (MONO_PREDICT): one model per parliament (each has
its own parties): character 2-5-gram TF-IDF of the speech and logistic regression; the three most
probable parties of the speech's parliament, best first."""
import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

TARGET = "party"
TEXT = "text"
GROUP = "parliament"
K = 3


def train_and_predict(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    X_val = X_val[[GROUP, TEXT]].fillna({TEXT: ""}).reset_index(drop=True)
    ranked = np.empty((len(X_val), K), dtype=object)
    for parliament, rows in data.groupby(GROUP):
        model = make_pipeline(
            TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), min_df=2, sublinear_tf=True),
            LogisticRegression(C=10.0, max_iter=3000),
        )
        model.fit(rows[TEXT].fillna(""), rows[TARGET])
        test_rows = X_val[X_val[GROUP] == parliament]
        if len(test_rows):
            proba = model.predict_proba(test_rows[TEXT])
            ranked[test_rows.index.to_numpy()] = model.classes_[np.argsort(-proba, axis=1, kind="stable")[:, :K]]
    return ranked
