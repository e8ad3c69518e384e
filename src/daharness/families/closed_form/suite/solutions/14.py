"""Reference solution for closed-form question 14."""

import pandas as pd

df = pd.read_csv("wine.csv")
corr = df.drop(columns="cultivar").corr(method="pearson")["flavanoids"].drop("flavanoids")
top3 = corr.abs().sort_values(ascending=False).head(3).index
print(f"@top_features[{', '.join(top3)}]")
