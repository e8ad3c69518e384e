"""Reference solution: aggregate monthly employment to quarters and join it with quarterly GDP."""

import pandas as pd

jobs = pd.read_csv("us_employment_monthly.csv", parse_dates=["month"])
jobs["year"] = jobs["month"].dt.year
jobs["quarter"] = jobs["month"].dt.quarter
quarterly = jobs.groupby(["year", "quarter"])[["nonfarm", "manufacturing"]].mean().reset_index()
quarterly = quarterly.sort_values(["year", "quarter"])
quarterly["jobs_growth_pct"] = (100 * (quarterly["nonfarm"] / quarterly["nonfarm"].shift(1) - 1)).round(2)

macro = pd.read_csv("macro_quarterly.csv").sort_values(["year", "quarter"])
macro["gdp_growth_pct"] = (100 * (macro["realgdp"] / macro["realgdp"].shift(1) - 1)).round(2)

out = quarterly.merge(
    macro[["year", "quarter", "realgdp", "unemp", "gdp_growth_pct"]], on=["year", "quarter"]
)
out["nonfarm"] = out["nonfarm"].round(1)
out["manufacturing"] = out["manufacturing"].round(1)
columns = [
    "year",
    "quarter",
    "nonfarm",
    "manufacturing",
    "realgdp",
    "unemp",
    "gdp_growth_pct",
    "jobs_growth_pct",
]
out.sort_values(["year", "quarter"])[columns].to_csv("quarterly_jobs_gdp.csv", index=False)
