import pandas as pd
from openpyxl import load_workbook

cars = pd.read_excel("Cars.xlsx", sheet_name="Cars")
summary = cars.groupby("Origin").agg(Cars=("Name", "size"), mpg=("Miles_per_Gallon", "mean")).reset_index()
book = load_workbook("Cars.xlsx")
sheet = book.create_sheet("Summary")
sheet.append(["Origin", "Cars", "Average MPG"])
for row in summary.itertuples(index=False):
    sheet.append([row.Origin, int(row.Cars), round(float(row.mpg), 1)])
book.save("Cars.xlsx")
