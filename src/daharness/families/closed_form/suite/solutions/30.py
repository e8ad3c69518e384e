"""Reference solution for closed-form question 30."""

import pandas as pd

df = pd.read_csv("breast_cancer.csv")
col = df["worst area"]
q1, q3 = col.quantile(0.25), col.quantile(0.75)
lower, upper = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
capped = col.clip(lower=lower, upper=upper)
print(f"@outlier_count[{int(((col < lower) | (col > upper)).sum())}]")
print(f"@upper_fence[{upper:.2f}]")
print(f"@capped_mean[{capped.mean():.2f}]")
print(f"@capped_std[{capped.std(ddof=1):.2f}]")
