"""Reference solution for closed-form question 61."""

import numpy as np
import pandas as pd
from scipy import stats

df = pd.read_csv("fair_affairs.csv")
positive = df.loc[df["affairs"] > 0, "affairs"]
q1, q3 = positive.quantile(0.25), positive.quantile(0.75)
iqr = q3 - q1
is_outlier = (positive < q1 - 1.5 * iqr) | (positive > q3 + 1.5 * iqr)
logged = np.log(positive[~is_outlier])
print(f"@positive_count[{len(positive)}]")
print(f"@skew_positive[{stats.skew(positive):.2f}]")
print(f"@outlier_count[{int(is_outlier.sum())}]")
print(f"@skew_log_cleaned[{stats.skew(logged):.2f}]")
print(f"@normality_log_cleaned[{'normal' if stats.shapiro(logged).pvalue >= 0.05 else 'not normal'}]")
