"""Ames Housing reference solution (MONO_PREDICT): gradient boosting on log(1 + price)."""
import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

TARGET = "Sale_Price"
DROP = ["id", TARGET]
SEED = 0


def train_and_predict(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    X = data.drop(columns=DROP)
    X_test = X_val[X.columns].copy()
    for col in [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]:
        levels = sorted(X[col].dropna().unique())
        X[col] = pd.Categorical(X[col], categories=levels)
        known = X_test[col].where(X_test[col].isin(levels))  # unseen levels become missing
        X_test[col] = pd.Categorical(known, categories=levels)
    model = HistGradientBoostingRegressor(
        learning_rate=0.05, max_iter=600, max_leaf_nodes=15, min_samples_leaf=10,
        l2_regularization=1.0, early_stopping=False, categorical_features="from_dtype", random_state=SEED,
    )
    model.fit(X, np.log1p(data[TARGET]))
    return np.expm1(model.predict(X_test))
