"""Reference solution for closed-form question 8."""

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler

df = pd.read_csv("iris.csv")
X = StandardScaler().fit_transform(df.drop(columns="species"))
labels = KMeans(n_clusters=3, n_init=10, random_state=42).fit_predict(X)
sizes = sorted(np.bincount(labels).tolist(), reverse=True)
print(f"@adjusted_rand_index[{adjusted_rand_score(df['species'], labels):.4f}]")
print(f"@cluster_sizes[{', '.join(map(str, sizes))}]")
