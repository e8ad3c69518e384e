import pandas as pd
from openpyxl import load_workbook

data = pd.read_excel("Iowa.xlsx", sheet_name="Generation")
pivot = data.pivot_table(index="year", columns="source", values="net_generation", aggfunc="sum").sort_index()
book = load_workbook("Iowa.xlsx")
sheet = book.create_sheet("Pivot")
sheet.append(["Year", *pivot.columns])
for year, row in pivot.iterrows():
    sheet.append([int(year), *[int(v) for v in row]])
book.save("Iowa.xlsx")
