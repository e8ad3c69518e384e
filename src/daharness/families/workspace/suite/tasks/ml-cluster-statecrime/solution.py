"""Reference solution: K-Means on z-scored indicators of the 50 states, k in 2..6 chosen by silhouette
among the segmentations whose segments all have at least 5 states."""

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.metrics import silhouette_score
from sklearn.preprocessing import StandardScaler

data = pd.read_csv("state_crime_2009.csv")
data = data[data["state"] != "District of Columbia"]
columns = ["violent", "murder", "hs_grad", "poverty", "single", "white", "urban"]
features = StandardScaler().fit_transform(data[columns])

best = None
for k in range(2, 7):
    labels = KMeans(n_clusters=k, n_init=20, random_state=0).fit_predict(features)
    if np.bincount(labels).min() < 5:
        continue
    score = silhouette_score(features, labels)
    if best is None or score > best[0]:
        best = (score, labels)

out = pd.DataFrame(features, columns=[f"Processed_Feature_{i}" for i in range(len(columns))])
out["Cluster"] = best[1]
out.to_csv("cluster.csv", index=False)
