"""Reference solution for closed-form question 120."""

import pandas as pd

counts = pd.read_csv("seattle_weather.csv")["weather"].value_counts()
print(f"@most_common_weather[{counts.index[0]}]")
print(f"@most_common_count[{counts.iloc[0]}]")
