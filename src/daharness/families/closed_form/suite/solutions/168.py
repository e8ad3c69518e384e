"""Reference solution for closed-form question 168."""

import pandas as pd
from scipy import stats

infl = pd.read_csv("macrodata.csv")["infl"]
z = (infl - infl.mean()) / infl.std(ddof=0)
cleaned = infl[z.abs() <= 3]
print(f"@n_outliers[{int((z.abs() > 3).sum())}]")
print(f"@skew_before[{stats.skew(infl, bias=True):.4f}]")
print(f"@skew_after[{stats.skew(cleaned, bias=True):.4f}]")
print(f"@shapiro_w_after[{stats.shapiro(cleaned).statistic:.3f}]")
