import pandas as pd

wine = pd.read_csv('wine.csv')
print(wine.groupby('cultivar')['alcohol'].mean().round(2))
