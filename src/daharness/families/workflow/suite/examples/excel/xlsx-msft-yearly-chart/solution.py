import pandas as pd
from openpyxl import load_workbook
from openpyxl.chart import LineChart, Reference

prices = pd.read_excel("Stocks.xlsx", sheet_name="Prices")
prices["year"] = pd.to_datetime(prices["date"], format="%b %d %Y").dt.year
yearly = prices[prices["symbol"] == "MSFT"].groupby("year")["price"].mean().round(2)
book = load_workbook("Stocks.xlsx")
sheet = book.create_sheet("MSFT")
sheet.append(["Year", "Average price"])
for year, price in yearly.items():
    sheet.append([int(year), float(price)])
chart = LineChart()
chart.title = "MSFT average price"
chart.legend = None
chart.add_data(Reference(sheet, min_col=2, min_row=2, max_row=12))
chart.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=12))
sheet.add_chart(chart, "D2")
book.save("Stocks.xlsx")
