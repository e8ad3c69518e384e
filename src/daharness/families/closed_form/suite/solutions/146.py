"""Reference solution for closed-form question 146."""

import pandas as pd

df = pd.read_csv("stocks.csv")
df["date"] = pd.to_datetime(df["date"], format="%Y-%m-%d")
df = df.sort_values(["symbol", "date"])
df["return"] = df["price"] / df.groupby("symbol")["price"].shift(1) - 1
counts = []
for _symbol, r in df.dropna(subset=["return"]).groupby("symbol")["return"]:
    q1, q3 = r.quantile(0.25), r.quantile(0.75)
    counts.append(int(((r < q1 - 1.5 * (q3 - q1)) | (r > q3 + 1.5 * (q3 - q1))).sum()))
print(f"@outlier_counts[{', '.join(map(str, counts))}]")
print(f"@total_outliers[{sum(counts)}]")
