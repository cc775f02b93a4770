"""Meat spectroscopy reference solution (MODULAR_PREDICT): ridge regression on the standardized
absorbance spectrum, with the penalty chosen per target by efficient leave-one-out CV."""
from typing import Any

import numpy as np
import pandas as pd
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

TARGETS = ["water", "fat", "protein"]
ALPHAS = tuple(np.logspace(-6, 2, 30))


def train(data: pd.DataFrame) -> Any:
    columns = [c for c in data.columns if c.startswith("x_")]
    model = make_pipeline(StandardScaler(), RidgeCV(alphas=ALPHAS, alpha_per_target=True))
    model.fit(data[columns].to_numpy(), data[TARGETS].to_numpy())
    return {"model": model, "columns": columns}


def prepare_val(train_output: Any, X_val: pd.DataFrame) -> Any:
    return X_val[train_output["columns"]].to_numpy()


def predict(train_output: Any, prepare_val_output: Any) -> np.ndarray:
    return train_output["model"].predict(prepare_val_output)  # (n, 3): water, fat, protein


def run(data, X_val):
    train_output = train(data)
    return predict(train_output, prepare_val(train_output, X_val))
