"""Concrete strength reference solution (MODULAR_PREDICT): gradient boosting with mixture ratios."""
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

TARGET = "compressive_strength"
SEED = 0


def _features(X: pd.DataFrame) -> pd.DataFrame:
    X = X.drop(columns=["id", TARGET], errors="ignore").copy()
    binder = X["cement"] + X["blast_furnace_slag"] + X["fly_ash"]
    X["water_cement"] = X["water"] / X["cement"]
    X["water_binder"] = X["water"] / binder
    X["log_age"] = np.log(X["age"])
    return X


def train(data: pd.DataFrame) -> Any:
    model = HistGradientBoostingRegressor(
        learning_rate=0.05, max_iter=800, max_leaf_nodes=15, min_samples_leaf=5,
        l2_regularization=1.0, early_stopping=False, random_state=SEED,
    )
    model.fit(_features(data), data[TARGET])
    return model


def prepare_val(train_output: Any, X_val: pd.DataFrame) -> Any:
    return _features(X_val)


def predict(train_output: Any, prepare_val_output: Any) -> np.ndarray:
    return train_output.predict(prepare_val_output)


def run(data, X_val):
    train_output = train(data)
    return predict(train_output, prepare_val(train_output, X_val))
