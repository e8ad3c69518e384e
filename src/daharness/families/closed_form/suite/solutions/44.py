"""Reference solution for closed-form question 44."""

import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.model_selection import train_test_split

df = pd.read_csv("diabetes.csv")
X, y = df.drop(columns="progression"), df["progression"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42)
pred = LinearRegression().fit(X_train, y_train).predict(X_test)
print(f"@r2_score[{r2_score(y_test, pred):.4f}]")
print(f"@rmse[{mean_squared_error(y_test, pred) ** 0.5:.2f}]")
