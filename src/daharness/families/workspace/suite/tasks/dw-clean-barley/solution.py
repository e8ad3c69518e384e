"""Reference solution: clean barley_trials.csv as README.md describes and write barley_clean.csv."""

import re

import pandas as pd

SITES = ["University Farm", "Waseca", "Morris", "Crookston", "Grand Rapids", "Duluth"]
VARIETIES = [
    "Manchuria",
    "Glabron",
    "Svansota",
    "Velvet",
    "Trebi",
    "No. 457",
    "No. 462",
    "No. 475",
    "Peatland",
    "Wisconsin No. 38",
]


def key(text: str) -> str:
    """Lower case, letters and digits only: 'Grand  Rapids ' -> 'grandrapids', 'NO.462' -> 'no462'."""
    return re.sub(r"[^a-z0-9]", "", str(text).lower())


site_of = {key(s): s for s in SITES}
site_of[key("Univ. Farm")] = "University Farm"
variety_of = {key(v): v for v in VARIETIES}

raw = pd.read_csv("barley_trials.csv", dtype=str, keep_default_na=False)
df = pd.DataFrame({"trial_id": raw["trial_id"].astype(int)})
df["site"] = raw["site"].map(lambda s: site_of[key(s)])
df["variety"] = raw["variety"].map(lambda v: variety_of[key(v)])
year = raw["year"].str.strip().astype(int)
df["year"] = year.where(year > 1900, year + 1900)
number = raw["yield"].str.replace("bu/ac", "", regex=False).str.strip()
df["yield"] = pd.to_numeric(number.replace({"n/a": "", "": None}), errors="coerce")

df = df.dropna(subset=["yield"])
df = df.sort_values("trial_id").drop_duplicates(subset=["site", "variety", "year"], keep="first")
df = df.sort_values(["site", "variety", "year"])[["site", "variety", "year", "yield"]]
df.to_csv("barley_clean.csv", index=False)
