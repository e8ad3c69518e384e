"""Reference solution for closed-form question 109."""

import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

df = pd.read_csv("cars.csv").dropna(subset=["Miles_per_Gallon"])
df["Horsepower"] = df["Horsepower"].fillna(df["Horsepower"].median())
features = ["Miles_per_Gallon", "Cylinders", "Displacement", "Horsepower", "Weight_in_lbs", "Acceleration"]
X_train, X_test, y_train, y_test = train_test_split(
    df[features], df["Origin"], test_size=0.25, random_state=42, stratify=df["Origin"]
)
scaler = StandardScaler().fit(X_train)
model = LogisticRegression(solver="lbfgs", max_iter=5000).fit(scaler.transform(X_train), y_train)
pred = model.predict(scaler.transform(X_test))
print(f"@n_test[{len(y_test)}]")
print(f"@accuracy[{accuracy_score(y_test, pred):.4f}]")
print(f"@macro_f1[{f1_score(y_test, pred, average='macro'):.4f}]")
