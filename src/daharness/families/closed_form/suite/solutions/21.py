"""Reference solution for closed-form question 21."""

import pandas as pd
from scipy import stats

df = pd.read_csv("wine.csv")
df["flavanoid_ratio"] = df["flavanoids"] / df["total_phenols"]
rho, _ = stats.spearmanr(df["flavanoid_ratio"], df["proline"])
print(f"@mean_flavanoid_ratio[{df['flavanoid_ratio'].mean():.2f}]")
print(f"@spearman_rho[{rho:.2f}]")
print(f"@lowest_ratio_cultivar[{df.groupby('cultivar')['flavanoid_ratio'].mean().idxmin()}]")
