from openpyxl import load_workbook
from openpyxl.styles import Font

book = load_workbook("Wine.xlsx")
sheet = book["Wines"]
best = max(range(2, sheet.max_row + 1), key=lambda row: sheet.cell(row, 2).value)
sheet.cell(best, 2).font = Font(color="FFFF0000", bold=True)
book.save("Wine.xlsx")
