"""Package attributes imported on first use: a package's face names what its modules provide without
importing them all when the package is imported (the command line's start-up time)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_attributes(package: str, providers: dict[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name of `providers[module]` comes from
    `package.module`, imported when the name is first asked for, then kept in the package."""
    module_of = {name: module for module, names in providers.items() for name in names}

    def attribute(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return attribute
