"""Reference solution for closed-form question 7."""

import pandas as pd

df = pd.read_csv("iris.csv")
col = df["sepal width (cm)"]
q1, q3 = col.quantile(0.25), col.quantile(0.75)
iqr = q3 - q1
is_outlier = (col < q1 - 1.5 * iqr) | (col > q3 + 1.5 * iqr)
print(f"@outlier_count[{int(is_outlier.sum())}]")
print(f"@mean_without_outliers[{col[~is_outlier].mean():.2f}]")
