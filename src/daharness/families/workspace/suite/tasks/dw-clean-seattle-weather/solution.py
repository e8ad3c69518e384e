"""Reference solution: clean daily_weather_raw.csv as README.md describes and write weather_clean.csv."""

import pandas as pd

raw = pd.read_csv("daily_weather_raw.csv", dtype={"date": str})


def parse(text: str) -> pd.Timestamp:
    text = text.strip()
    for fmt in ("%Y-%m-%d", "%m/%d/%Y", "%Y%m%d"):
        try:
            return pd.to_datetime(text, format=fmt)
        except ValueError:
            continue
    raise ValueError(text)


df = raw.copy()
df["date"] = df["date"].map(parse)
# 1. one row per day: the record with the highest record_id is the corrected entry
df = df.sort_values("record_id").drop_duplicates(subset="date", keep="last")
# 2. temperatures in degrees Celsius
fahrenheit = df["temp_unit"].str.strip().str.upper() == "F"
for column in ["temp_max", "temp_min"]:
    df.loc[fahrenheit, column] = (df.loc[fahrenheit, column] - 32) / 1.8
# 3. swapped extremes
swapped = df["temp_max"] < df["temp_min"]
df.loc[swapped, ["temp_max", "temp_min"]] = df.loc[swapped, ["temp_min", "temp_max"]].to_numpy()
df["temp_max"] = df["temp_max"].round(1)
df["temp_min"] = df["temp_min"].round(1)
# 4. precipitation sentinel
df.loc[df["precipitation"] == -99, "precipitation"] = float("nan")
# 5. missing wind: median wind of the same calendar month of the same year
month = df["date"].dt.to_period("M")
df["wind"] = df["wind"].fillna(df.groupby(month)["wind"].transform("median"))
# 6. weather labels
labels = {"sunny": "sun", "rainy": "rain", "foggy": "fog", "snowy": "snow"}
weather = df["weather"].str.strip().str.lower()
df["weather"] = weather.replace(labels)

df = df.sort_values("date")
df["date"] = df["date"].dt.strftime("%Y-%m-%d")
df[["date", "precipitation", "temp_max", "temp_min", "wind", "weather"]].to_csv(
    "weather_clean.csv", index=False
)
