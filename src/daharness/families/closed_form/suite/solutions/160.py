"""Reference solution for closed-form question 160."""

import pandas as pd

df = pd.read_csv("macrodata.csv")
peak = df.loc[df["unemp"].idxmax()]
print(f"@peak_year[{int(peak['year'])}]")
print(f"@peak_quarter[{int(peak['quarter'])}]")
print(f"@peak_unemp[{peak['unemp']:.1f}]")
