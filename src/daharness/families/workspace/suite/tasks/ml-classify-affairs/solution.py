"""Reference solution: probability of an affair from a logistic regression with one-hot occupations."""

import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

train = pd.read_csv("affairs_train.csv")
test = pd.read_csv("affairs_test.csv")
categorical = ["occupation", "occupation_husb"]
numeric = ["rate_marriage", "age", "yrs_married", "children", "religious", "educ"]

model = make_pipeline(
    ColumnTransformer(
        [("num", StandardScaler(), numeric), ("cat", OneHotEncoder(handle_unknown="ignore"), categorical)]
    ),
    LogisticRegression(max_iter=5000, random_state=0),
)
model.fit(train[numeric + categorical], train["had_affair"])
probability = model.predict_proba(test[numeric + categorical])[:, 1]
pd.DataFrame({"id": test["id"], "had_affair": probability.round(6)}).to_csv("prediction.csv", index=False)
