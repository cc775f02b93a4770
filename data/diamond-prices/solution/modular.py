"""Diamond prices reference solution (MODULAR_PREDICT): gradient boosting on log(price)."""
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

TARGET = "price"
CATEGORICAL = ["cut", "color", "clarity"]
SEED = 0


def _encode(X: pd.DataFrame, categories: dict) -> pd.DataFrame:
    X = X.copy()
    for col, levels in categories.items():
        known = X[col].where(X[col].isin(levels))  # unseen levels become missing
        X[col] = pd.Categorical(known, categories=levels)
    return X


def train(data: pd.DataFrame) -> Any:
    X = data.drop(columns=["id", TARGET])
    categories = {c: sorted(X[c].dropna().unique()) for c in CATEGORICAL}
    model = HistGradientBoostingRegressor(
        learning_rate=0.05, max_iter=500, max_leaf_nodes=31, min_samples_leaf=20,
        early_stopping=False, categorical_features="from_dtype", random_state=SEED,
    )
    model.fit(_encode(X, categories), np.log(data[TARGET]))
    return {"model": model, "categories": categories, "columns": list(X.columns)}


def prepare_val(train_output: Any, X_val: pd.DataFrame) -> Any:
    return _encode(X_val[train_output["columns"]], train_output["categories"])


def predict(train_output: Any, prepare_val_output: Any) -> np.ndarray:
    return np.exp(train_output["model"].predict(prepare_val_output))


def run(data, X_val):
    train_output = train(data)
    return predict(train_output, prepare_val(train_output, X_val))
