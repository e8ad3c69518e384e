"""Reference solution for closed-form question 11."""

import pandas as pd

df = pd.read_csv("wine.csv")
counts = df["cultivar"].value_counts().sort_index()
mean_alcohol = df.groupby("cultivar")["alcohol"].mean()
print(f"@class_counts[{', '.join(map(str, counts.tolist()))}]")
print(f"@top_alcohol_cultivar[{mean_alcohol.idxmax()}]")
print(f"@top_mean_alcohol[{mean_alcohol.max():.2f}]")
