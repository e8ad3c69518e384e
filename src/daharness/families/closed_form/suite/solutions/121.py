"""Reference solution for closed-form question 121."""

import pandas as pd

df = pd.read_csv("seattle_weather.csv")
df["month"] = pd.to_datetime(df["date"], format="%Y-%m-%d").dt.month
monthly = df.groupby("month")["precipitation"].mean()
month_names = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
print(f"@wettest_month[{month_names[monthly.idxmax() - 1]}]")
print(f"@wettest_month_mean_precipitation[{monthly.max():.2f}]")
