"""Reference solution for closed-form question 144."""

from itertools import combinations

import pandas as pd

df = pd.read_csv("stocks.csv")
df["date"] = pd.to_datetime(df["date"], format="%Y-%m-%d")
prices = df.pivot(index="date", columns="symbol", values="price").sort_index()
returns = (prices / prices.shift(1) - 1).dropna()
corr = returns.corr(method="pearson")
pairs = pd.Series({f"{a}-{b}": corr.loc[a, b] for a, b in combinations(sorted(corr.columns), 2)})
print(f"@n_months[{len(returns)}]")
print(f"@most_correlated_pair[{pairs.idxmax()}]")
print(f"@max_correlation[{pairs.max():.4f}]")
print(f"@least_correlated_pair[{pairs.idxmin()}]")
print(f"@min_correlation[{pairs.min():.4f}]")
