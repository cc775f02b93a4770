"""Credit scoring reference solution (MONO_PREDICT): small, regularized gradient boosting
classifier (native missing values and categories), returning P(Status == "good")."""
import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier

TARGET = "Status"
POSITIVE = "good"
SEED = 0


def train_and_predict(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    X = data.drop(columns=["id", TARGET])
    X_test = X_val[X.columns].copy()
    for col in [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]:
        levels = sorted(X[col].dropna().unique())
        X[col] = pd.Categorical(X[col], categories=levels)
        known = X_test[col].where(X_test[col].isin(levels))  # unseen levels become missing
        X_test[col] = pd.Categorical(known, categories=levels)
    model = HistGradientBoostingClassifier(
        learning_rate=0.03, max_iter=300, max_leaf_nodes=8, min_samples_leaf=40,
        l2_regularization=1.0, early_stopping=False, categorical_features="from_dtype", random_state=SEED,
    )
    model.fit(X, (data[TARGET] == POSITIVE).astype(int))
    return model.predict_proba(X_test)[:, 1]
