"""Hotel rates reference solution (MONO_PREDICT): gradient boosting (squared loss, weighted by
the evaluation weight) on the booking features plus calendar features of the arrival date."""
import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

TARGET = "avg_price_per_room"
WEIGHT = "weight"
SEED = 0


def _features(X: pd.DataFrame, categories: dict) -> pd.DataFrame:
    X = X.drop(columns=["id", TARGET, WEIGHT], errors="ignore").copy()
    date = pd.to_datetime(X.pop("arrival_date"))
    X["month"] = date.dt.month
    X["dayofyear"] = date.dt.day_of_year
    X["dow"] = date.dt.day_of_week
    for col, levels in categories.items():
        known = X[col].where(X[col].isin(levels))  # unseen levels become missing
        X[col] = pd.Categorical(known, categories=levels)
    return X


def train_and_predict(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    raw = data.drop(columns=["id", TARGET, WEIGHT, "arrival_date"])
    categories = {c: sorted(raw[c].dropna().unique()) for c in raw.columns if not pd.api.types.is_numeric_dtype(raw[c])}
    model = HistGradientBoostingRegressor(
        learning_rate=0.1, max_iter=400, max_leaf_nodes=63,
        min_samples_leaf=20, early_stopping=False, categorical_features="from_dtype", random_state=SEED,
    )
    model.fit(_features(data, categories), data[TARGET], sample_weight=data[WEIGHT])
    return model.predict(_features(X_val, categories))
