"""Lending Club reference solution (MONO_PREDICT): strongly regularized logistic regression on
one-hot categories and log-scaled, standardized numeric columns, returning P(Class == "good")."""
import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

TARGET = "Class"
POSITIVE = "good"


def train_and_predict(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    X = data.drop(columns=["id", TARGET])
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numeric = [c for c in X.columns if c not in categorical]
    model = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="infrequent_if_exist", min_frequency=10), categorical),
            (make_pipeline(FunctionTransformer(np.log1p), StandardScaler()), numeric),  # all counts/amounts are >= 0
        ),
        LogisticRegression(C=0.03, max_iter=2000),
    )
    model.fit(X, (data[TARGET] == POSITIVE).astype(int))
    return model.predict_proba(X_val[X.columns])[:, 1]
