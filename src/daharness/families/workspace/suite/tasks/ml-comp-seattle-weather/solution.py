"""Reference solution: random forest on the day's measurements, calendar features and the measurements
of the neighbouring days (train and test days interleave, so both are used for the neighbours)."""

import pandas as pd
from sklearn.ensemble import RandomForestClassifier

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
sample = pd.read_csv("sample_submission.csv")

days = pd.concat([train, test], ignore_index=True).sort_values("date").reset_index(drop=True)
date = pd.to_datetime(days["date"])
days["year"] = date.dt.year  # the station's labelling practice changed over the years (fog vs sun)
days["month"] = date.dt.month
days["doy"] = date.dt.day_of_year
days["temp_range"] = days["temp_max"] - days["temp_min"]
days["wet"] = (days["precipitation"] > 0).astype(int)
measurements = ["precipitation", "temp_max", "temp_min", "wind"]
for column in measurements:
    for step in (1, 2):
        days[f"{column}_prev{step}"] = days[column].shift(step)
        days[f"{column}_next{step}"] = days[column].shift(-step)
features = [c for c in days.columns if c not in ("id", "date", "weather")]
days[features] = days[features].fillna(-1)

known = days[days["id"].isin(train["id"])]
unknown = days[days["id"].isin(test["id"])]
model = RandomForestClassifier(n_estimators=500, random_state=0, n_jobs=1)
model.fit(known[features], known["weather"])
prediction = pd.DataFrame({"id": unknown["id"], "weather": model.predict(unknown[features])})
sample[["id"]].merge(prediction, on="id", how="left").to_csv("submission.csv", index=False)
