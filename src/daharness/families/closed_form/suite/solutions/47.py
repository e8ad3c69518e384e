"""Reference solution for closed-form question 47."""

import numpy as np
import pandas as pd
from scipy import stats

df = pd.read_csv("diabetes.csv")
df["bmi_category"] = pd.cut(
    df["bmi"], bins=[-np.inf, 25, 30, np.inf], right=False, labels=["normal", "overweight", "obese"]
)
groups = df.groupby("bmi_category", observed=True)["progression"]
counts, means = groups.size(), groups.mean()
f_stat, _ = stats.f_oneway(*[g for _, g in groups])
print(f"@category_counts[{', '.join(str(counts[c]) for c in ['normal', 'overweight', 'obese'])}]")
for c in ["normal", "overweight", "obese"]:
    print(f"@mean_progression_{c}[{means[c]:.2f}]")
print(f"@anova_f[{f_stat:.2f}]")
