import json

import numpy as np
import pandas as pd
from scipy import stats

survey = pd.read_csv("anes96.csv", sep="\t", quotechar="'")

labels = ["high school or less", "some college", "college degree or more"]
survey["education"] = pd.cut(survey["educ"], bins=[0, 3, 4, 7], labels=labels)

table = pd.crosstab(survey["education"], survey["vote"]).reindex(index=labels, columns=[0, 1], fill_value=0)
table.columns = ["clinton", "dole"]
table["dole_pct"] = (table["dole"] / (table["clinton"] + table["dole"]) * 100).round(1)
table.index.name = "education"
table.reset_index().to_csv("education_vote.csv", index=False)

counts = table[["clinton", "dole"]].to_numpy()
test = stats.chi2_contingency(counts, correction=False)
cramers_v = np.sqrt(test.statistic / (counts.sum() * (min(counts.shape) - 1)))
result = {
    "chi2": round(float(test.statistic), 4),
    "dof": int(test.dof),
    "p_value": round(float(test.pvalue), 4),
    "cramers_v": round(float(cramers_v), 4),
}
with open("chi_square.json", "w") as handle:
    json.dump(result, handle, indent=2)
