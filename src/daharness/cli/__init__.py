"""The `daharness` command line, one module per command: it parses options and delegates; the work is
done elsewhere. `app` holds the application and `main`; `options` what the commands share; `families`
the options the registered families and agents declare (`install_all` adds them to every command, for a
reference of the whole command line); `typed_options` the flags made from typed options models;
`bundles` and `run_options` the options of `run`, grouped."""

# each module registers its command; `daharness --help` lists them in this order
# isort: off
from daharness.cli import run, score, rescore, report, compare, view, export  # noqa: F401
from daharness.cli import validate, schema, doctor, agents, suites, generate  # noqa: F401

# isort: on
from daharness.cli.app import app, main, root_command

__all__ = ["app", "main", "root_command"]
