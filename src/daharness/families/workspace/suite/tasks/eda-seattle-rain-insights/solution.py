import calendar
import json

import pandas as pd

weather = pd.read_csv("seattle-weather.csv")
weather["date"] = pd.to_datetime(weather["date"], format="%Y/%m/%d")
weather["wet"] = weather["precipitation"] > 0

wet_days_by_month = weather.groupby(weather["date"].dt.month)["wet"].sum()
wettest = weather.loc[weather["precipitation"].idxmax()]
by_year = weather.groupby(weather["date"].dt.year)["precipitation"].sum()
sunny = weather[weather["weather"] == "sun"]

answer = {
    "wettest_month": calendar.month_name[int(wet_days_by_month.idxmax())],
    "wettest_day": wettest["date"].strftime("%Y-%m-%d"),
    "wettest_day_precipitation_mm": round(float(wettest["precipitation"]), 1),
    "wettest_day_label": str(wettest["weather"]),
    "wettest_year": int(by_year.idxmax()),
    "wettest_year_total_mm": round(float(by_year.max()), 1),
    "sunny_days_with_precipitation_pct": round(float(sunny["wet"].mean() * 100), 1),
}
with open("answer.json", "w") as handle:
    json.dump(answer, handle, indent=2)
