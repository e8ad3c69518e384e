"""Reference solution for closed-form question 24."""

import pandas as pd

df = pd.read_csv("breast_cancer.csv")
mean_area = df.groupby("diagnosis")["mean area"].mean()
print(f"@malignant_proportion[{(df['diagnosis'] == 'malignant').mean():.4f}]")
print(f"@mean_area_malignant[{mean_area['malignant']:.2f}]")
print(f"@mean_area_benign[{mean_area['benign']:.2f}]")
