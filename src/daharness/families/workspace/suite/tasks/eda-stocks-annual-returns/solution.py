import pandas as pd

stocks = pd.read_csv("stocks.csv")
stocks["date"] = pd.to_datetime(stocks["date"], format="%b %d %Y")
stocks["year"] = stocks["date"].dt.year

# the price of the last month of each year, per symbol
year_end = stocks.sort_values("date").groupby(["symbol", "year"])["price"].last().unstack("symbol")
year_end = year_end.reindex(range(year_end.index.min(), year_end.index.max() + 1))

returns = (year_end / year_end.shift(1) - 1) * 100
returns = returns.loc[2001:2009]  # 2000 has no previous year, 2010 is incomplete
returns = returns[["AAPL", "AMZN", "GOOG", "IBM", "MSFT"]].round(2)

result = returns.copy()
result["best_symbol"] = returns.idxmax(axis=1)
result.index.name = "year"
result.columns.name = None
result.reset_index().to_csv("annual_returns.csv", index=False)
