"""Reference solution for closed-form question 167."""

import pandas as pd
from sklearn.cluster import KMeans
from sklearn.preprocessing import StandardScaler

df = pd.read_csv("macrodata.csv")
X = StandardScaler().fit_transform(df[["infl", "unemp"]])
df["cluster"] = KMeans(n_clusters=3, n_init=10, random_state=42).fit_predict(X)
sizes = df["cluster"].value_counts().sort_values(ascending=False)
largest = df[df["cluster"] == sizes.index[0]]
print(f"@cluster_sizes[{', '.join(map(str, sizes))}]")
print(f"@largest_cluster_mean_infl[{largest['infl'].mean():.2f}]")
print(f"@largest_cluster_mean_unemp[{largest['unemp'].mean():.2f}]")
