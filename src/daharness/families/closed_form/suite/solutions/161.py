"""Reference solution for closed-form question 161."""

import pandas as pd
from scipy import stats

df = pd.read_csv("macrodata.csv")
r, p = stats.pearsonr(df["infl"], df["unemp"])
if p >= 0.05:
    relationship = "none"
elif abs(r) >= 0.5:
    relationship = "linear"
else:
    relationship = "nonlinear"
print(f"@relationship_type[{relationship}]")
