"""MNIST 5k reference solution (MODULAR_PREDICT): pixels scaled to [0, 1], PCA to 50 components,
RBF support vector machine."""
from typing import Any

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

TARGET = "label"
SEED = 0


def _pixels(X: pd.DataFrame) -> np.ndarray:
    return X[[f"pixel{i}" for i in range(784)]].to_numpy(dtype=np.float64) / 255.0


def train(data: pd.DataFrame) -> Any:
    model = make_pipeline(PCA(n_components=50, random_state=SEED), SVC(C=10.0, gamma="scale"))
    model.fit(_pixels(data), data[TARGET])
    return model


def prepare_val(train_output: Any, X_val: pd.DataFrame) -> Any:
    return _pixels(X_val)


def predict(train_output: Any, prepare_val_output: Any) -> np.ndarray:
    return train_output.predict(prepare_val_output)


def run(data, X_val):
    train_output = train(data)
    return predict(train_output, prepare_val(train_output, X_val))
