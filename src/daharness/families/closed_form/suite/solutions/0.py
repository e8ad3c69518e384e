"""Reference solution for closed-form question 0."""

import pandas as pd

df = pd.read_csv("iris.csv")
col = df["sepal length (cm)"]
print(f"@mean_sepal_length[{col.mean():.2f}]")
print(f"@std_sepal_length[{col.std(ddof=1):.2f}]")
