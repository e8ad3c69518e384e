"""Reference solution for closed-form question 124."""

import pandas as pd

precip = pd.read_csv("seattle_weather.csv")["precipitation"]
z = (precip - precip.mean()) / precip.std(ddof=0)
print(f"@n_outliers[{int((z.abs() > 3).sum())}]")
