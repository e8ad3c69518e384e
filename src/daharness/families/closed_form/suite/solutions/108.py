"""Reference solution for closed-form question 108."""

import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

df = pd.read_csv("cars.csv").drop_duplicates()
df = df.dropna(subset=["Miles_per_Gallon", "Horsepower"])
df["model_year"] = pd.to_datetime(df["Year"], format="%Y-%m-%d").dt.year
df["origin_japan"] = (df["Origin"] == "Japan").astype(int)
df["origin_usa"] = (df["Origin"] == "USA").astype(int)
features = [
    "Cylinders",
    "Displacement",
    "Horsepower",
    "Weight_in_lbs",
    "Acceleration",
    "model_year",
    "origin_japan",
    "origin_usa",
]
X_train, X_test, y_train, y_test = train_test_split(
    df[features], df["Miles_per_Gallon"], test_size=0.2, random_state=42
)
scaler = StandardScaler().fit(X_train)
model = LinearRegression().fit(scaler.transform(X_train), y_train)
pred = model.predict(scaler.transform(X_test))
print(f"@n_rows[{len(df)}]")
print(f"@r2_score[{r2_score(y_test, pred):.4f}]")
print(f"@rmse[{np.sqrt(mean_squared_error(y_test, pred)):.4f}]")
