import nbformat

notebook = nbformat.read("Desktop/grunfeld.ipynb", as_version=4)
for cell in notebook.cells:
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None
nbformat.write(notebook, "Desktop/grunfeld.ipynb")
