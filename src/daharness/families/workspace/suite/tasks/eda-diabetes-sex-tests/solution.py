import json

import pandas as pd
from scipy import stats

data = pd.read_csv("diabetes.tab.txt", sep="\t")
group1 = data.loc[data["SEX"] == 1, "BMI"]
group2 = data.loc[data["SEX"] == 2, "BMI"]

welch = stats.ttest_ind(group1, group2, equal_var=False)
mann_whitney = stats.mannwhitneyu(
    group1, group2, alternative="two-sided", method="asymptotic", use_continuity=True
)
levene = stats.levene(group1, group2, center="median")

result = {
    "n_sex1": int(len(group1)),
    "n_sex2": int(len(group2)),
    "mean_bmi_sex1": round(float(group1.mean()), 2),
    "mean_bmi_sex2": round(float(group2.mean()), 2),
    "welch_t": round(float(welch.statistic), 4),
    "welch_df": round(float(welch.df), 2),
    "welch_p": round(float(welch.pvalue), 4),
    "mannwhitney_u": round(float(mann_whitney.statistic), 4),
    "mannwhitney_p": round(float(mann_whitney.pvalue), 4),
    "levene_stat": round(float(levene.statistic), 4),
    "levene_p": round(float(levene.pvalue), 4),
}
with open("sex_tests.json", "w") as handle:
    json.dump(result, handle, indent=2)
