"""Reference solution for closed-form question 100."""

import pandas as pd

df = pd.read_csv("cars.csv")
counts = df["Origin"].value_counts()
print(f"@counts_by_origin[{', '.join(str(counts[o]) for o in ['USA', 'Europe', 'Japan'])}]")
