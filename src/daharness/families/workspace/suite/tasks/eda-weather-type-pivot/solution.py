import pandas as pd

weather = pd.read_csv("seattle-weather.csv")
weather["date"] = pd.to_datetime(weather["date"], format="%Y/%m/%d")
weather = weather[weather["date"].dt.year.between(2013, 2015)]
weather["month"] = weather["date"].dt.month

pivot = pd.crosstab(weather["month"], weather["weather"])
pivot = pivot.reindex(index=range(1, 13), columns=["drizzle", "fog", "rain", "snow", "sun"], fill_value=0)
pivot["total"] = pivot.sum(axis=1)
pivot = pivot.reset_index()
pivot.columns.name = None
pivot.to_csv("weather_month_pivot.csv", index=False)
