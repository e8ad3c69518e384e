"""Reference solution for closed-form question 50."""

import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.model_selection import train_test_split

df = pd.read_csv("diabetes.csv")
y = df["progression"]
baseline = df.drop(columns="progression")
engineered = baseline.assign(bmi_bp=baseline["bmi"] * baseline["bp"])


def evaluate(X):
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42)
    pred = LinearRegression().fit(X_train, y_train).predict(X_test)
    return r2_score(y_test, pred), mean_squared_error(y_test, pred) ** 0.5


r2_base, _ = evaluate(baseline)
r2_new, rmse_new = evaluate(engineered)
print(f"@r2_with_interaction[{r2_new:.3f}]")
print(f"@rmse_with_interaction[{rmse_new:.2f}]")
print(f"@improved[{'yes' if r2_new > r2_base else 'no'}]")
