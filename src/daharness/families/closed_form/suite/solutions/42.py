"""Reference solution for closed-form question 42."""

import pandas as pd

df = pd.read_csv("diabetes.csv")
features = df.drop(columns="progression")
pearson = features.corrwith(df["progression"], method="pearson")
spearman = features.corrwith(df["progression"], method="spearman")
print(f"@top_pearson_feature[{pearson.idxmax()}]")
print(f"@top_pearson_r[{pearson.max():.3f}]")
print(f"@top_spearman_feature[{spearman.idxmax()}]")
print(f"@top_spearman_rho[{spearman.max():.3f}]")
