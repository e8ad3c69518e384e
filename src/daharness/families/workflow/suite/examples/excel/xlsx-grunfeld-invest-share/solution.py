from openpyxl import load_workbook

book = load_workbook("Grunfeld.xlsx")
sheet = book["Firms"]
column = sheet.max_column + 1
sheet.cell(row=1, column=column, value="Invest share")
for row in range(2, sheet.max_row + 1):
    cell = sheet.cell(row=row, column=column, value=round(sheet.cell(row, 1).value / sheet.cell(row, 2).value, 4))
    cell.number_format = "0.00%"
book.save("Grunfeld.xlsx")
