"""Lending Club reference solution (MODULAR_PREDICT): strongly regularized logistic regression on
one-hot categories and log-scaled, standardized numeric columns, returning P(Class == "good")."""
from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

TARGET = "Class"
POSITIVE = "good"


def train(data: pd.DataFrame) -> Any:
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
    return {"model": model, "columns": list(X.columns)}


def prepare_val(train_output: Any, X_val: pd.DataFrame) -> Any:
    return X_val[train_output["columns"]]


def predict(train_output: Any, prepare_val_output: Any) -> np.ndarray:
    return train_output["model"].predict_proba(prepare_val_output)[:, 1]


def run(data, X_val):
    train_output = train(data)
    return predict(train_output, prepare_val(train_output, X_val))
