"""Reference solution for closed-form question 127."""

import pandas as pd

df = pd.read_csv("seattle_weather.csv")
df["date"] = pd.to_datetime(df["date"], format="%Y-%m-%d")
df = df.sort_values("date")
df["year"] = df["date"].dt.year
df["dry"] = df["precipitation"] == 0
# a new streak starts whenever the dry flag or the year changes
df["streak_id"] = ((df["dry"] != df["dry"].shift()) | (df["year"] != df["year"].shift())).cumsum()
streaks = df[df["dry"]].groupby(["year", "streak_id"]).size()
for year, group in df.groupby("year"):
    print(f"@total_precipitation_{year}[{group['precipitation'].sum():.1f}]")
    print(f"@longest_dry_streak_{year}[{streaks.loc[year].max()}]")
