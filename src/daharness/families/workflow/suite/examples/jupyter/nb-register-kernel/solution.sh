python -m ipykernel install --user --name analysis --display-name "Python (analysis)"
