"""Reference solution for closed-form question 19."""

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler

df = pd.read_csv("wine.csv")
X = StandardScaler().fit_transform(df.drop(columns="cultivar"))
ratios = PCA().fit(X).explained_variance_ratio_
n_components = int(np.argmax(np.cumsum(ratios) >= 0.80) + 1)
print(f"@pc1_variance_ratio[{ratios[0]:.4f}]")
print(f"@pc2_variance_ratio[{ratios[1]:.4f}]")
print(f"@n_components_80[{n_components}]")
