"""Reference solution for closed-form question 103."""

import pandas as pd

df = pd.read_csv("cars.csv")
df = df.dropna(subset=["Miles_per_Gallon"])
n_imputed = int(df["Horsepower"].isna().sum())
group_median = df.groupby("Cylinders")["Horsepower"].transform("median")
df["Horsepower"] = df["Horsepower"].fillna(group_median)
print(f"@rows_remaining[{len(df)}]")
print(f"@n_imputed[{n_imputed}]")
print(f"@mean_horsepower[{df['Horsepower'].mean():.2f}]")
print(f"@std_horsepower[{df['Horsepower'].std(ddof=1):.2f}]")
