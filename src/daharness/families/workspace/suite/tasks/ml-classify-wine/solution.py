"""Reference solution: predict the cultivar of the test wines with a scaled logistic regression."""

import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

train = pd.read_csv("wine_train.csv")
test = pd.read_csv("wine_test.csv")
features = [c for c in test.columns if c != "id"]

model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000, random_state=0))
model.fit(train[features], train["cultivar"])
pd.DataFrame({"id": test["id"], "cultivar": model.predict(test[features])}).to_csv(
    "prediction.csv", index=False
)
