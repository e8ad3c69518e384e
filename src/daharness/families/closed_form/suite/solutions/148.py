"""Reference solution for closed-form question 148."""

import numpy as np
import pandas as pd
from scipy import stats

df = pd.read_csv("stocks.csv")
df["date"] = pd.to_datetime(df["date"], format="%Y-%m-%d")
df = df.sort_values(["symbol", "date"])
df["log_return"] = np.log(df["price"] / df.groupby("symbol")["price"].shift(1))
non_normal, skews = [], {}
for symbol, r in df.dropna(subset=["log_return"]).groupby("symbol")["log_return"]:
    if stats.jarque_bera(r).pvalue < 0.05:
        non_normal.append(symbol)
    skews[symbol] = stats.skew(r, bias=True)
print(f"@non_normal_symbols[{', '.join(non_normal)}]")
print(f"@most_negative_skew_symbol[{min(skews, key=skews.get)}]")
print(f"@most_negative_skew[{min(skews.values()):.4f}]")
