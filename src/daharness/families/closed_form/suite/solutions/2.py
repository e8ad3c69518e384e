"""Reference solution for closed-form question 2."""

import pandas as pd

df = pd.read_csv("iris.csv")
stats = df.groupby("species")["sepal width (cm)"].agg(mean="mean", std=lambda s: s.std(ddof=0))
for species, row in stats.iterrows():
    print(f"@mean_sepal_width_{species}[{row['mean']:.3f}]")
    print(f"@std_sepal_width_{species}[{row['std']:.3f}]")
