"""Diamond prices reference solution (MONO_PREDICT): gradient boosting on log(price)."""
import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

TARGET = "price"
CATEGORICAL = ["cut", "color", "clarity"]
SEED = 0


def train_and_predict(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    X = data.drop(columns=["id", TARGET])
    X_test = X_val[X.columns].copy()
    for col in CATEGORICAL:
        levels = sorted(X[col].dropna().unique())
        X[col] = pd.Categorical(X[col], categories=levels)
        known = X_test[col].where(X_test[col].isin(levels))  # unseen levels become missing
        X_test[col] = pd.Categorical(known, categories=levels)
    model = HistGradientBoostingRegressor(
        learning_rate=0.05, max_iter=500, max_leaf_nodes=31, min_samples_leaf=20,
        early_stopping=False, categorical_features="from_dtype", random_state=SEED,
    )
    model.fit(X, np.log(data[TARGET]))
    return np.exp(model.predict(X_test))
