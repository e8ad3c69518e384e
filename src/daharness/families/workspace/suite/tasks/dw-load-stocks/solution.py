"""Reference solution: load the four price feeds and companies.json into prices.db (see schema.yml)."""

import json
import sqlite3

import numpy as np
import pandas as pd

frames = []
mi = pd.read_csv("prices/msft_ibm.csv")
frames.append(
    pd.DataFrame(
        {"symbol": mi["symbol"], "date": pd.to_datetime(mi["date"], format="%b %d %Y"), "close": mi["price"]}
    )
)
amzn = pd.read_csv("prices/AMZN.csv")
frames.append(
    pd.DataFrame(
        {"symbol": "AMZN", "date": pd.to_datetime(amzn["Date"], format="%m/%d/%Y"), "close": amzn["Close"]}
    )
)
aapl = pd.read_csv("prices/AAPL.csv")
frames.append(
    pd.DataFrame(
        {"symbol": "AAPL", "date": pd.to_datetime(aapl["Date"], format="%Y-%m-%d"), "close": aapl["Close"]}
    )
)
with open("prices/GOOG.json", encoding="utf-8") as fh:
    goog = pd.DataFrame(json.load(fh)["prices"])
frames.append(
    pd.DataFrame(
        {
            "symbol": "GOOG",
            "date": pd.to_datetime(goog["month"], format="%Y-%m"),
            "close": goog["close"].str.replace(r"[$,]", "", regex=True).astype(float),
        }
    )
)

prices = pd.concat(frames, ignore_index=True).drop_duplicates().sort_values(["symbol", "date"])
assert not prices.duplicated(["symbol", "date"]).any()
prices["month"] = prices["date"].dt.strftime("%Y-%m")
prices["year"] = prices["date"].dt.year
prices["change_pct"] = (100 * (prices["close"] / prices.groupby("symbol")["close"].shift(1) - 1)).round(2)

annual = (
    prices.groupby(["symbol", "year"])
    .agg(
        n_months=("close", "size"),
        avg_close=("close", "mean"),
        min_close=("close", "min"),
        max_close=("close", "max"),
        last_close=("close", "last"),
    )
    .reset_index()
)
previous = annual[["symbol", "year", "last_close"]].assign(year=annual["year"] + 1)
annual = annual.merge(previous, on=["symbol", "year"], how="left", suffixes=("", "_prev"))
annual["year_return_pct"] = (100 * (annual["last_close"] / annual["last_close_prev"] - 1)).round(2)

with open("companies.json", encoding="utf-8") as fh:
    companies = pd.DataFrame(json.load(fh))


def rows(frame: pd.DataFrame) -> list[tuple]:
    return [
        tuple(
            None if isinstance(v, float) and np.isnan(v) else (v.item() if hasattr(v, "item") else v)
            for v in record
        )
        for record in frame.itertuples(index=False)
    ]


with sqlite3.connect("prices.db") as con:
    con.executescript(
        """
        DROP TABLE IF EXISTS company; DROP TABLE IF EXISTS monthly_close; DROP TABLE IF EXISTS annual_stats;
        CREATE TABLE company (symbol TEXT PRIMARY KEY, company_name TEXT, exchange TEXT);
        CREATE TABLE monthly_close (symbol TEXT, month TEXT, close REAL, change_pct REAL);
        CREATE TABLE annual_stats (symbol TEXT, year INTEGER, n_months INTEGER, avg_close REAL,
                                   min_close REAL, max_close REAL, year_return_pct REAL);
        """
    )
    con.executemany("INSERT INTO company VALUES (?, ?, ?)", rows(companies[["ticker", "name", "listing"]]))
    con.executemany(
        "INSERT INTO monthly_close VALUES (?, ?, ?, ?)",
        rows(prices[["symbol", "month", "close", "change_pct"]]),
    )
    con.executemany(
        "INSERT INTO annual_stats VALUES (?, ?, ?, ?, ?, ?, ?)",
        rows(
            annual[["symbol", "year", "n_months", "avg_close", "min_close", "max_close", "year_return_pct"]]
        ),
    )
con.close()
