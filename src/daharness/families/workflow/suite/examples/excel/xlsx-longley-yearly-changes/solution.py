import pandas as pd
from openpyxl import load_workbook

economy = pd.read_excel("Longley.xlsx", sheet_name="Economy")
book = load_workbook("Longley.xlsx")
sheet = book.create_sheet("Changes")
sheet.append(["Year", "GNP change", "Employment change"])
for before, now in zip(economy.itertuples(index=False), list(economy.itertuples(index=False))[1:]):
    sheet.append([int(now.YEAR), round((now.GNP - before.GNP) / before.GNP * 100, 2), int(now.TOTEMP - before.TOTEMP)])
book.save("Longley.xlsx")
