"""Reference solution for closed-form question 165."""

import pandas as pd
from scipy import stats
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

df = pd.read_csv("macrodata.csv")
df["gdp_growth"] = (df["realgdp"] / df["realgdp"].shift(1) - 1) * 100
df["unemp_change"] = df["unemp"] - df["unemp"].shift(1)
df = df.dropna(subset=["gdp_growth", "unemp_change"])
r, _ = stats.pearsonr(df["gdp_growth"], df["unemp_change"])
train, test = df[df["year"] <= 1999], df[df["year"] >= 2000]
model = LinearRegression().fit(train[["gdp_growth"]], train["unemp_change"])
pred = model.predict(test[["gdp_growth"]])
print(f"@correlation_coefficient[{r:.4f}]")
print(f"@slope[{model.coef_[0]:.4f}]")
print(f"@intercept[{model.intercept_:.4f}]")
print(f"@test_r2[{r2_score(test['unemp_change'], pred):.4f}]")
