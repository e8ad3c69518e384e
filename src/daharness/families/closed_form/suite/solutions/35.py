"""Reference solution for closed-form question 35."""

import pandas as pd
from scipy import stats

df = pd.read_csv("breast_cancer.csv")
col = "symmetry error"
malignant = df.loc[df["diagnosis"] == "malignant", col]
benign = df.loc[df["diagnosis"] == "benign", col]
normal = stats.shapiro(df[col]).pvalue >= 0.05
mw_p = stats.mannwhitneyu(malignant, benign, alternative="two-sided").pvalue
t_p = stats.ttest_ind(malignant, benign, equal_var=False).pvalue
print(f"@normality[{'normal' if normal else 'not normal'}]")
print(f"@mannwhitney_p_value[{mw_p:.4f}]")
print(f"@welch_p_value[{t_p:.4f}]")
print(f"@significant_difference[{'yes' if mw_p < 0.05 else 'no'}]")
