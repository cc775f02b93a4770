"""MNIST 5k reference solution (MONO_PREDICT): pixels scaled to [0, 1], PCA to 50 components,
RBF support vector machine."""
import numpy as np
import pandas as pd
from sklearn.decomposition import PCA
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

TARGET = "label"
SEED = 0


def _pixels(X: pd.DataFrame) -> np.ndarray:
    return X[[f"pixel{i}" for i in range(784)]].to_numpy(dtype=np.float64) / 255.0


def train_and_predict(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    model = make_pipeline(PCA(n_components=50, random_state=SEED), SVC(C=10.0, gamma="scale"))
    model.fit(_pixels(data), data[TARGET])
    return model.predict(_pixels(X_val))
