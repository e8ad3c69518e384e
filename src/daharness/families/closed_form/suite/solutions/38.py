"""Reference solution for closed-form question 38."""

import pandas as pd

df = pd.read_csv("diabetes.csv")
means = df.groupby("sex")["progression"].mean()
print(f"@mean_progression_sex1[{means[1.0]:.2f}]")
print(f"@mean_progression_sex2[{means[2.0]:.2f}]")
