"""Reference solution for closed-form question 123."""

import pandas as pd
from scipy import stats

wind = pd.read_csv("seattle_weather.csv")["wind"]
statistic, p = stats.normaltest(wind)
print(f"@wind_skewness[{stats.skew(wind, bias=True):.2f}]")
print(f"@wind_kurtosis[{stats.kurtosis(wind, fisher=True, bias=True):.2f}]")
print(f"@normaltest_statistic[{statistic:.2f}]")
print(f"@is_normal[{'yes' if p >= 0.05 else 'no'}]")
