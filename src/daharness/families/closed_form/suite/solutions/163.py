"""Reference solution for closed-form question 163."""

import pandas as pd

df = pd.read_csv("macrodata.csv")
df["gdp_growth"] = (df["realgdp"] / df["realgdp"].shift(1) - 1) * 100
growth = df["gdp_growth"].dropna()
print(f"@mean_growth[{growth.mean():.4f}]")
print(f"@std_growth[{growth.std(ddof=1):.4f}]")
print(f"@negative_quarters[{int((growth < 0).sum())}]")
