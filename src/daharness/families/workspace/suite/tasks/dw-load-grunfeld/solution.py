"""Reference solution: load the two Grunfeld deliveries into grunfeld.db following schema.yml."""

import sqlite3

import pandas as pd

first = pd.read_csv("data/grunfeld_1935_1944.csv")
second = pd.read_csv("data/grunfeld_1945_1954.csv").rename(
    columns={"Firm": "firm", "Year": "year", "I": "invest", "F": "value", "C": "capital"}
)
names = {name.upper(): name for name in first["firm"].unique()}
second["firm"] = second["firm"].map(names)
panel = pd.concat([first, second], ignore_index=True)
panel["year"] = panel["year"].astype(int)

totals = panel.groupby("firm")["invest"].sum().sort_values(ascending=False)
firm = pd.DataFrame({"firm_id": range(1, len(totals) + 1), "firm_name": totals.index})
ids = dict(zip(firm["firm_name"], firm["firm_id"]))

investment = pd.DataFrame(
    {
        "firm_id": panel["firm"].map(ids),
        "year": panel["year"],
        "gross_investment": panel["invest"],
        "market_value": panel["value"],
        "capital_stock": panel["capital"],
    }
).sort_values(["firm_id", "year"])

rows = []
for firm_id, group in investment.groupby("firm_id"):
    peak = group.sort_values(["gross_investment", "year"], ascending=[False, True]).iloc[0]
    rows.append(
        {
            "firm_id": int(firm_id),
            "first_year": int(group["year"].min()),
            "last_year": int(group["year"].max()),
            "mean_investment": float(group["gross_investment"].mean()),
            "peak_year": int(peak["year"]),
        }
    )
summary = pd.DataFrame(rows)

with sqlite3.connect("grunfeld.db") as con:
    con.executescript(
        """
        DROP TABLE IF EXISTS firm; DROP TABLE IF EXISTS investment; DROP TABLE IF EXISTS firm_summary;
        CREATE TABLE firm (firm_id INTEGER NOT NULL, firm_name TEXT NOT NULL);
        CREATE TABLE investment (firm_id INTEGER REFERENCES firm(firm_id), year INTEGER,
                                 gross_investment REAL, market_value REAL, capital_stock REAL);
        CREATE TABLE firm_summary (firm_id INTEGER REFERENCES firm(firm_id), first_year INTEGER,
                                   last_year INTEGER, mean_investment REAL, peak_year INTEGER);
        """
    )
    con.executemany("INSERT INTO firm VALUES (?, ?)", firm.itertuples(index=False))
    con.executemany(
        "INSERT INTO investment VALUES (?, ?, ?, ?, ?)",
        [
            (int(a), int(b), float(c), float(d), float(e))
            for a, b, c, d, e in investment.itertuples(index=False)
        ],
    )
    con.executemany("INSERT INTO firm_summary VALUES (?, ?, ?, ?, ?)", [tuple(r.values()) for r in rows])
con.close()
