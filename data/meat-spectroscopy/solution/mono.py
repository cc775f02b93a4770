"""Meat spectroscopy reference solution (MONO_PREDICT): ridge regression on the standardized
absorbance spectrum, with the penalty chosen per target by efficient leave-one-out CV."""
import numpy as np
import pandas as pd
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

TARGETS = ["water", "fat", "protein"]
ALPHAS = tuple(np.logspace(-6, 2, 30))


def train_and_predict(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    columns = [c for c in data.columns if c.startswith("x_")]
    model = make_pipeline(StandardScaler(), RidgeCV(alphas=ALPHAS, alpha_per_target=True))
    model.fit(data[columns].to_numpy(), data[TARGETS].to_numpy())
    return model.predict(X_val[columns].to_numpy())  # (n, 3): water, fat, protein
