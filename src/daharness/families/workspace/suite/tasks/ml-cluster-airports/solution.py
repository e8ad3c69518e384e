"""Reference solution: 6 K-Means regions of the contiguous-US airports by latitude and longitude."""

import pandas as pd
from sklearn.cluster import KMeans

OUTSIDE = {"AK", "HI", "PR", "VI", "GU", "AS", "CQ"}

airports = pd.read_csv("airports.csv")
mainland = airports[
    (airports["country"] == "USA") & airports["state"].notna() & ~airports["state"].isin(OUTSIDE)
]
features = mainland[["latitude", "longitude"]].to_numpy()
labels = KMeans(n_clusters=6, n_init=10, random_state=0).fit_predict(features)
pd.DataFrame(
    {"Processed_Feature_0": features[:, 0], "Processed_Feature_1": features[:, 1], "Cluster": labels}
).to_csv("cluster.csv", index=False)
