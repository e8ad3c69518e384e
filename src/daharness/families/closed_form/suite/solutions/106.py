"""Reference solution for closed-form question 106."""

import pandas as pd

df = pd.read_csv("cars.csv")
acc = df["Acceleration"]
q1, q3 = acc.quantile(0.25), acc.quantile(0.75)
lower, upper = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
outliers = df[(acc < lower) | (acc > upper)]
print(f"@lower_bound[{lower:.4f}]")
print(f"@upper_bound[{upper:.4f}]")
print(f"@n_outliers[{len(outliers)}]")
print(f"@max_acceleration_car[{outliers.loc[outliers['Acceleration'].idxmax(), 'Name']}]")
