"""Reference solution for closed-form question 127."""

import pandas as pd

df = pd.read_csv("seattle_weather.csv")
df["year"] = pd.to_datetime(df["date"], format="%Y-%m-%d").dt.year
yearly = df.groupby("year").agg(
    total_precipitation=("precipitation", "sum"), wet_days=("precipitation", lambda p: int((p > 0).sum()))
)
for year, row in yearly.iterrows():
    print(f"@total_precipitation_{year}[{row['total_precipitation']:.1f}]")
    print(f"@wet_days_{year}[{int(row['wet_days'])}]")
