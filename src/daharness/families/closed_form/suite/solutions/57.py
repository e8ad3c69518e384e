"""Reference solution for closed-form question 57."""

import pandas as pd

df = pd.read_csv("fair_affairs.csv")
deduplicated = df.drop_duplicates(keep="first")
print(f"@duplicate_rows[{len(df) - len(deduplicated)}]")
print(f"@remaining_rows[{len(deduplicated)}]")
print(f"@mean_affairs_deduplicated[{deduplicated['affairs'].mean():.2f}]")
