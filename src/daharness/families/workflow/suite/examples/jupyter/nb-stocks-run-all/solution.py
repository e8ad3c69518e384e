import subprocess

import nbformat


def run(path, replace=None, append=()):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        for old, new in (replace or {}).items():
            cell.source = cell.source.replace(old, new)
    for source in append:
        notebook.cells.append(nbformat.v4.new_code_cell(source))
    nbformat.write(notebook, path)
    command = ["jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace", path]
    subprocess.run(command, check=True, capture_output=True, text=True)

run("Desktop/stocks.ipynb", replace={"['Price']": "['price']"})
