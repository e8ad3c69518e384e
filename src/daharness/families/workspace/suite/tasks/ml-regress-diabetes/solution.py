"""Reference solution: ridge regression on standardised baseline measurements."""

import pandas as pd
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
features = [c for c in test.columns if c != "id"]

model = make_pipeline(StandardScaler(), Ridge(alpha=1.0))
model.fit(train[features], train["progression"])
pd.DataFrame({"id": test["id"], "progression": model.predict(test[features]).round(3)}).to_csv(
    "prediction.csv", index=False
)
