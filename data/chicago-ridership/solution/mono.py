"""Chicago ridership reference solution (MONO_PREDICT): gradient boosting on
calendar features (weekday, month, year, US federal holidays), lagged station counts and weather."""
import numpy as np
import pandas as pd
from pandas.tseries.holiday import USFederalHolidayCalendar
from sklearn.ensemble import HistGradientBoostingRegressor

TARGET = "ridership"
SEED = 0


def _features(X: pd.DataFrame) -> pd.DataFrame:
    X = X.drop(columns=["id", TARGET], errors="ignore").copy()
    date = pd.to_datetime(X.pop("date"))
    holidays = USFederalHolidayCalendar().holidays(start="2000-01-01", end="2017-12-31")
    X["dow"] = date.dt.day_of_week
    X["month"] = date.dt.month
    X["year"] = date.dt.year
    X["dayofyear"] = date.dt.day_of_year
    X["holiday"] = date.isin(holidays).astype(int)
    return X


def train_and_predict(data: pd.DataFrame, X_val: pd.DataFrame) -> np.ndarray:
    model = HistGradientBoostingRegressor(
        learning_rate=0.05, max_iter=600, max_leaf_nodes=31,
        min_samples_leaf=20, early_stopping=False, random_state=SEED,
    )
    model.fit(_features(data), data[TARGET])
    return model.predict(_features(X_val))
