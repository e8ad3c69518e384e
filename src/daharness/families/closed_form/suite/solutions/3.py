"""Reference solution for closed-form question 3."""

import pandas as pd
from scipy import stats

df = pd.read_csv("iris.csv")


def relationship(r, p):
    if p >= 0.05:
        return "none"
    return "linear" if abs(r) >= 0.5 else "nonlinear"


r, p = stats.pearsonr(df["sepal length (cm)"], df["sepal width (cm)"])
print(f"@r_all[{r:.2f}]")
print(f"@p_value_all[{p:.4f}]")
print(f"@relationship_all[{relationship(r, p)}]")
for species in ["setosa", "virginica"]:
    group = df[df["species"] == species]
    r, p = stats.pearsonr(group["sepal length (cm)"], group["sepal width (cm)"])
    print(f"@r_{species}[{r:.2f}]")
    print(f"@relationship_{species}[{relationship(r, p)}]")
