"""Reference solution for closed-form question 27."""

import numpy as np
import pandas as pd
from scipy import stats

df = pd.read_csv("breast_cancer.csv")
raw = df["area error"]
logged = np.log(raw)
print(f"@skew_raw[{stats.skew(raw):.2f}]")
print(f"@kurtosis_raw[{stats.kurtosis(raw):.2f}]")
print(f"@skew_log[{stats.skew(logged):.2f}]")
print(f"@kurtosis_log[{stats.kurtosis(logged):.2f}]")
