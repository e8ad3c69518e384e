import json

import pandas as pd

survey = pd.read_csv("fair.csv")
long_married = survey[survey["yrs_married"] > 10].copy()
long_married["any_affair"] = long_married["affairs"] > 0

by_religion = long_married.groupby("religious")["any_affair"].mean() * 100
by_rating = long_married.groupby("rate_marriage")["any_affair"].mean() * 100

answer = {
    "n_women": int(len(long_married)),
    "least_affairs_religious_level": int(by_religion.idxmin()),
    "least_affairs_share_pct": round(float(by_religion.min()), 1),
    "most_affairs_marriage_rating": int(by_rating.idxmax()),
    "most_affairs_share_pct": round(float(by_rating.max()), 1),
}
with open("answer.json", "w") as handle:
    json.dump(answer, handle, indent=2)
