"""Reference solution: merge and clean the two ANES 1996 files into anes96_clean.csv (see codebook.md)."""

import numpy as np
import pandas as pd

PID = [
    "Strong Democrat",
    "Weak Democrat",
    "Independent-Democrat",
    "Independent-Independent",
    "Independent-Republican",
    "Weak Republican",
    "Strong Republican",
]
EDUC = [
    "1-8 grades",
    "Some high school",
    "High school graduate",
    "Some college",
    "College degree",
    "Master's degree",
    "PhD",
]
VALID = {
    "TVnews": (0, 7),
    "selfLR": (1, 7),
    "ClinLR": (1, 7),
    "DoleLR": (1, 7),
    "PID": (0, 6),
    "age": (18, 99),
    "educ": (1, 7),
    "income": (1, 24),
    "vote": (0, 1),
}
COLUMNS = ["resp_id", "popul", "TVnews", "selfLR", "ClinLR", "DoleLR", "PID", "age", "educ", "income", "vote"]


def norm(text: object) -> str:
    return str(text).strip().lower()


p1 = pd.read_csv("anes96_part1.csv")
p2 = pd.read_csv("anes96_part2.csv", dtype=str)

two = pd.DataFrame(
    {
        "resp_id": p2["respondent"].astype(int),
        "popul": pd.to_numeric(p2["place_population"]) / 1000,
        "TVnews": pd.to_numeric(p2["tv_news_days"], errors="coerce"),
        "selfLR": pd.to_numeric(p2["lr_self"], errors="coerce"),
        "ClinLR": pd.to_numeric(p2["lr_clinton"], errors="coerce"),
        "DoleLR": pd.to_numeric(p2["lr_dole"], errors="coerce"),
        "PID": p2["party_id"].map(norm).map({norm(label): code for code, label in enumerate(PID)}),
        "age": pd.to_numeric(p2["age"].str.replace("years", "", regex=False).str.strip(), errors="coerce"),
        "educ": p2["education"]
        .map(norm)
        .map({norm(label): code for code, label in enumerate(EDUC, start=1)}),
        "income": pd.to_numeric(p2["income_code"], errors="coerce"),
        "vote": p2["vote_intent"].map(norm).map({"clinton": 0, "dole": 1}),
    }
)
two = two[~two["resp_id"].isin(p1["resp_id"])]  # part 1 wins for respondents keyed in twice

df = pd.concat([p1[COLUMNS], two[COLUMNS]], ignore_index=True)
for column, (low, high) in VALID.items():
    df[column] = df[column].where(df[column].between(low, high))
df["logpopul"] = np.log(df["popul"] + 0.1).round(4)
df = df.sort_values("resp_id")
for column in COLUMNS:
    df[column] = df[column].astype("Int64") if column != "popul" else df[column]
df.to_csv("anes96_clean.csv", index=False)
