"""Credit scoring reference solution (MODULAR_PREDICT): small, regularized gradient boosting
classifier (native missing values and categories), returning P(Status == "good")."""
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier

TARGET = "Status"
POSITIVE = "good"
SEED = 0


def _encode(X: pd.DataFrame, categories: dict) -> pd.DataFrame:
    X = X.copy()
    for col, levels in categories.items():
        known = X[col].where(X[col].isin(levels))  # unseen levels become missing
        X[col] = pd.Categorical(known, categories=levels)
    return X


def train(data: pd.DataFrame) -> Any:
    X = data.drop(columns=["id", TARGET])
    categories = {c: sorted(X[c].dropna().unique()) for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])}
    model = HistGradientBoostingClassifier(
        learning_rate=0.03, max_iter=300, max_leaf_nodes=8, min_samples_leaf=40,
        l2_regularization=1.0, early_stopping=False, categorical_features="from_dtype", random_state=SEED,
    )
    model.fit(_encode(X, categories), (data[TARGET] == POSITIVE).astype(int))
    return {"model": model, "categories": categories, "columns": list(X.columns)}


def prepare_val(train_output: Any, X_val: pd.DataFrame) -> Any:
    return _encode(X_val[train_output["columns"]], train_output["categories"])


def predict(train_output: Any, prepare_val_output: Any) -> np.ndarray:
    return train_output["model"].predict_proba(prepare_val_output)[:, 1]


def run(data, X_val):
    train_output = train(data)
    return predict(train_output, prepare_val(train_output, X_val))
