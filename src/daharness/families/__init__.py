"""The benchmark families, one folder each, and the one list that registers them: importing a family
registers its suite formats, scorers, agents, figures and hooks. A new family is one folder and one
line here (or a plugin's entry point); families never import each other."""

from daharness.families import closed_form, interactive, workflow, workspace  # noqa: F401  (registration)
