"""Reference solution for closed-form question 101."""

import pandas as pd
from scipy import stats

hp = pd.read_csv("cars.csv")["Horsepower"].dropna()
print(f"@hp_skewness[{stats.skew(hp, bias=True):.4f}]")
print(f"@hp_kurtosis[{stats.kurtosis(hp, fisher=True, bias=True):.4f}]")
