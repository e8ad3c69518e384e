"""Reference solution for closed-form question 105."""

import pandas as pd
from scipy import stats

df = pd.read_csv("cars.csv").dropna(subset=["Miles_per_Gallon", "Horsepower"])
df["power_to_weight"] = df["Horsepower"] / df["Weight_in_lbs"] * 1000
r, p = stats.pearsonr(df["power_to_weight"], df["Miles_per_Gallon"])
if p >= 0.05:
    relationship = "none"
elif abs(r) >= 0.5:
    relationship = "linear"
else:
    relationship = "nonlinear"
print(f"@mean_power_to_weight[{df['power_to_weight'].mean():.2f}]")
print(f"@correlation_coefficient[{r:.2f}]")
print(f"@p_value[{p:.4f}]")
print(f"@relationship_type[{relationship}]")
