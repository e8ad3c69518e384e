"""Reference solution for closed-form question 53."""

import pandas as pd

df = pd.read_csv("fair_affairs.csv")
print(f"@affair_proportion[{(df['affairs'] > 0).mean():.4f}]")
