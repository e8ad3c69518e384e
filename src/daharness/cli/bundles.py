"""Option bundles: a dataclass of a command's options (each field annotated as a typer option), taken by
the command as one parameter. The command's help and parsing see the fields, one option each; its body
sees one value with the bundle's methods, so that a command of fifty options stays a short function."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import fields
from typing import Any


class Bundle:
    """Base of an option bundle (a dataclass whose fields all have defaults)."""


def bundled(function: Callable[..., Any]) -> Callable[..., Any]:
    """The command with each parameter annotated by a `Bundle` subclass spread into the bundle's fields
    (keyword-only, where the bundle stands), and gathered again into one value when it runs."""
    signature = inspect.signature(function, eval_str=True)
    bundles: dict[str, type[Any]] = {}
    parameters: list[inspect.Parameter] = []
    for parameter in signature.parameters.values():
        bundle = parameter.annotation
        if not (isinstance(bundle, type) and issubclass(bundle, Bundle)):
            parameters.append(parameter)
            continue
        bundles[parameter.name] = bundle
        hints = typing.get_type_hints(bundle, include_extras=True)
        parameters += [
            inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=hints[f.name]
            )
            for f in fields(bundle)
        ]

    @functools.wraps(function)
    def command(**given: Any) -> Any:
        for name, bundle in bundles.items():
            given[name] = bundle(**{f.name: given.pop(f.name) for f in fields(bundle)})
        return function(**given)

    command.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return command
