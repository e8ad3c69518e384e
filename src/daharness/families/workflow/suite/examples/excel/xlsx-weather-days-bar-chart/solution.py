import pandas as pd
from openpyxl import load_workbook
from openpyxl.chart import BarChart, Reference

daily = pd.read_excel("Weather.xlsx", sheet_name="Daily")
counts = daily["weather"].value_counts()
book = load_workbook("Weather.xlsx")
sheet = book.create_sheet("Days")
sheet.append(["Weather", "Days"])
for weather, days in counts.items():
    sheet.append([weather, int(days)])
chart = BarChart()
chart.title = "Days by weather"
chart.add_data(Reference(sheet, min_col=2, min_row=2, max_row=6))
chart.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=6))
sheet.add_chart(chart, "D2")
book.save("Weather.xlsx")
