from pathlib import Path

import nbformat

code = Path("Desktop/analysis.py").read_text().removesuffix("\n")
nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), "Desktop/analysis.ipynb")
