import pandas as pd

panel = pd.read_csv("grunfeld.csv")
postwar = panel[panel["year"].between(1946, 1954)]

grouped = postwar.groupby("firm")
table = grouped.agg(
    total_invest=("invest", "sum"),
    avg_capital=("capital", "mean"),
    total_value=("value", "sum"),
)
table["invest_value_pct"] = table["total_invest"] / table["total_value"] * 100
table["peak_year"] = postwar.loc[grouped["invest"].idxmax(), ["firm", "year"]].set_index("firm")["year"]

top = table.sort_values("total_invest", ascending=False).head(5).reset_index()
top.insert(0, "rank", range(1, len(top) + 1))
top = top[["rank", "firm", "total_invest", "avg_capital", "invest_value_pct", "peak_year"]]
for column in ["total_invest", "avg_capital", "invest_value_pct"]:
    top[column] = top[column].round(2)
top["peak_year"] = top["peak_year"].astype(int)
top.to_csv("top_investors.csv", index=False)
