"""Reference solution for closed-form question 142."""

import pandas as pd

df = pd.read_csv("stocks.csv")
df["date"] = pd.to_datetime(df["date"], format="%Y-%m-%d")
df = df.sort_values(["symbol", "date"])
df["return"] = df["price"] / df.groupby("symbol")["price"].shift(1) - 1
mean_return = df.groupby("symbol")["return"].mean().sort_values(ascending=False)
print(f"@top_symbols[{', '.join(mean_return.index[:2])}]")
print(f"@top_mean_return_pct[{mean_return.iloc[0] * 100:.2f}]")
print(f"@worst_symbol[{mean_return.index[-1]}]")
