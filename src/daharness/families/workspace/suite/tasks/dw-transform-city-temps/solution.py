"""Reference solution: daily and monthly temperature comparison of Seattle and San Francisco (Jan-Apr 2010)."""

import pandas as pd

seattle = pd.read_csv("seattle_hourly_2010.csv")
seattle["date"] = pd.to_datetime(seattle["date"], format="%Y-%m-%d %H:%M:%S")
sf = pd.read_csv("sf_hourly_2010.csv")
sf["date"] = pd.to_datetime(sf["date"], format="%m/%d/%Y %I:%M %p")
hourly = pd.concat([seattle.assign(city="Seattle"), sf.assign(city="San Francisco")], ignore_index=True)
hourly["temp_c"] = (hourly["temp"] - 32) / 1.8
hourly["day"] = hourly["date"].dt.strftime("%Y-%m-%d")

daily = (
    hourly.groupby(["day", "city"])["temp_c"]
    .agg(n_readings="size", min_c="min", max_c="max", mean_c="mean")
    .reset_index()
)
daily["range_c"] = daily["max_c"] - daily["min_c"]
daily = daily.rename(columns={"day": "date"}).sort_values(["date", "city"])

hourly["month"] = hourly["date"].dt.strftime("%Y-%m")
hourly["hour"] = hourly["date"].dt.hour
daily["month"] = daily["date"].str[:7]

rows = []
for (month, city), group in daily.groupby(["month", "city"]):
    profile = hourly[(hourly["month"] == month) & (hourly["city"] == city)].groupby("hour")["temp_c"].mean()
    rows.append(
        {
            "month": month,
            "city": city,
            "mean_c": group["mean_c"].mean(),
            "mean_range_c": group["range_c"].mean(),
            "warmest_hour": int(profile[profile == profile.max()].index.min()),
            "coolest_hour": int(profile[profile == profile.min()].index.min()),
        }
    )
monthly = pd.DataFrame(rows).sort_values(["month", "city"])

daily[["date", "city", "n_readings", "min_c", "max_c", "mean_c", "range_c"]].to_csv(
    "daily_temps.csv", index=False
)
monthly.to_csv("monthly_summary.csv", index=False)
