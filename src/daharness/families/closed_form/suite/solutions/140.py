"""Reference solution for closed-form question 140."""

import pandas as pd

means = pd.read_csv("stocks.csv").groupby("symbol")["price"].mean()
print(f"@highest_mean_symbol[{means.idxmax()}]")
print(f"@highest_mean_price[{means.max():.2f}]")
