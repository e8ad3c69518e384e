"""Reference solution: estimate mpg from vehicle specifications with a random forest."""

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestRegressor

vehicles = pd.read_csv("vehicles.csv")
train = pd.read_csv("fuel_economy_train.csv")
test = pd.read_csv("test_ids.csv")

v = vehicles.copy()
v["horsepower"] = pd.to_numeric(v["horsepower"], errors="coerce")
# impute missing power from cars with the same number of cylinders and similar displacement
v["hp_per_displacement"] = v["horsepower"] / v["displacement_cu_in"]
ratio = v.groupby("cylinders")["hp_per_displacement"].transform("median")
v["horsepower"] = v["horsepower"].fillna(ratio * v["displacement_cu_in"])
v["year"] = v["model_year"].str[:4].astype(int)
v["diesel"] = v["name"].str.contains("diesel").astype(int)
v["wagon"] = v["name"].str.contains(r"\(sw\)|wagon").astype(int)
v["power_to_weight"] = v["horsepower"] / v["weight_lbs"]
v = pd.get_dummies(v, columns=["origin"], dtype=float)
features = [
    "cylinders",
    "displacement_cu_in",
    "horsepower",
    "weight_lbs",
    "accel_0_60_s",
    "year",
    "diesel",
    "wagon",
    "power_to_weight",
    "origin_Europe",
    "origin_Japan",
    "origin_USA",
]

train = train.merge(v, on="car_id", how="left")
test = test.merge(v, on="car_id", how="left")
model = RandomForestRegressor(n_estimators=500, min_samples_leaf=2, random_state=0)
model.fit(train[features], np.log(train["mpg"]))
prediction = np.exp(model.predict(test[features]))
pd.DataFrame({"car_id": test["car_id"], "mpg": prediction.round(3)}).to_csv("prediction.csv", index=False)
