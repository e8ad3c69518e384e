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

run("Desktop/iris.ipynb", replace={
    "# TODO: means = the mean of every measurement per species, rounded to 2 decimals\n": "means = iris.groupby('species').mean().round(2)",
    "# TODO: print the mean petal length of versicolor\n": "print(means.loc['versicolor', 'petal_length_cm'])",
})
