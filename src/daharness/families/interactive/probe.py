"""Runs INSIDE the sandbox, where daharness cannot be imported: records what a turn's code left behind.

The interactive family sends this file's source into a fresh sandbox kernel, where it becomes the module
``_daharness_probe``. Before the turn's code runs, ``start()`` closes the figures earlier turns left open
(which functions of a private library the code calls is recorded apart, by ``recorder.py``).
After it ran, ``capture(namespace, request)`` writes one JSON file describing each intent's result: the
value of a variable or expression encoded as tagged JSON (``encode``), or whether a plot file exists. The host reads that file as data, never as code: nothing the agent's code leaves
behind is unpickled or evaluated on the host.

Tagged JSON: ``None``, booleans, numbers and strings stand for themselves (NaN and infinities as JSON's
extensions); everything else is a one-key object: ``{"list": [...]}``, ``{"tuple": [...]}``,
``{"set": [...]}``, ``{"dict": [[key, value], ...]}``, ``{"array": [...], "shape": [...]}``,
``{"time": "ISO 8601"}``, ``{"dataframe": {columns, dtypes, index, data}}``,
``{"series": {name, dtype, index, values}}``, ``{"object": class name, "repr": text}``.
An index is ``{"names": [...], "dtypes": [...], "levels": [[values of level 0], ...]}``.
"""

from __future__ import annotations

import datetime
import json
import sys
from typing import Any

MAX_JSON_BYTES = 32 << 20  # a result bigger than this is not compared ("too large")
MAX_DEPTH = 40


def start() -> None:
    """Close the figures the earlier turns left open."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")


# ---- encoding values as tagged JSON ------------------------------------------------------------------


def _number(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    return float(value)


def encode(value: Any, depth: int = 0) -> Any:
    """A value as tagged JSON (see the module docstring)."""
    if depth > MAX_DEPTH:
        return {"object": "too deep", "repr": ""}
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, datetime.date | datetime.time):
        return {"time": value.isoformat()}
    if isinstance(value, list):
        return {"list": [encode(item, depth + 1) for item in value]}
    if isinstance(value, tuple):
        return {"tuple": [encode(item, depth + 1) for item in value]}
    if isinstance(value, set | frozenset):
        items = [encode(item, depth + 1) for item in value]
        return {"set": sorted(items, key=lambda item: json.dumps(item, sort_keys=True, default=str))}
    if isinstance(value, dict):
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    numpy = sys.modules.get("numpy")
    pandas = sys.modules.get("pandas")
    if numpy is not None:
        if isinstance(value, numpy.bool_):
            return bool(value)
        if isinstance(value, numpy.integer | numpy.floating):
            return _number(value.item())
        if isinstance(value, numpy.datetime64):
            return {"time": str(value)}
        if isinstance(value, numpy.ndarray):
            return {"array": [encode(item, depth + 1) for item in value.tolist()], "shape": list(value.shape)}
    if pandas is not None:
        if value is pandas.NaT or value is pandas.NA:
            return None
        if isinstance(value, pandas.DataFrame):
            return {"dataframe": _frame(value, depth)}
        if isinstance(value, pandas.Series):
            return {"series": _series(value, depth)}
        if isinstance(value, pandas.Index):
            return {"list": _values(value, depth)}
        if isinstance(value, pandas.Timestamp):
            return {"time": value.isoformat()}
        if isinstance(value, pandas.Interval | pandas.Period | pandas.Timedelta):
            return str(value)
    return {"object": f"{type(value).__module__}.{type(value).__qualname__}", "repr": repr(value)[:300]}


def _values(values: Any, depth: int) -> list[Any]:
    pandas = sys.modules["pandas"]
    if pandas.api.types.is_datetime64_any_dtype(values.dtype):
        return [None if pandas.isna(v) else {"time": v.isoformat()} for v in values]
    return [encode(v, depth + 1) for v in values.tolist()]


def _index(index: Any, depth: int) -> dict[str, Any]:
    levels = [index.get_level_values(i) for i in range(index.nlevels)]
    return {
        "names": [None if name is None else str(name) for name in index.names],
        "dtypes": [str(level.dtype) for level in levels],
        "levels": [_values(level, depth) for level in levels],
    }


def _label(label: Any) -> str:
    return " | ".join(str(part) for part in label) if isinstance(label, tuple) else str(label)


def _frame(frame: Any, depth: int) -> dict[str, Any]:
    return {
        "columns": [_label(label) for label in frame.columns],
        "dtypes": [str(frame.iloc[:, i].dtype) for i in range(frame.shape[1])],
        "index": _index(frame.index, depth),
        "data": [_values(frame.iloc[:, i], depth) for i in range(frame.shape[1])],
    }


def _series(series: Any, depth: int) -> dict[str, Any]:
    return {
        "name": None if series.name is None else _label(series.name),
        "dtype": str(series.dtype),
        "index": _index(series.index, depth),
        "values": _values(series, depth),
    }


# ---- capturing a turn's results ----------------------------------------------------------------------


def _result(namespace: dict[str, Any], intent: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {"type": intent["type"]}
    if intent["type"] == "plot":
        import os

        found["exists"] = os.path.isfile(intent["file"]) and not os.path.islink(intent["file"])
        return found
    expression = intent.get("expression") or intent["name"]
    try:
        value = eval(expression, namespace)  # the code's own namespace, inside the sandbox
    except NameError:
        return {**found, "missing": f"no variable {intent['name']!r} after the code ran"}
    except Exception as exc:
        return {**found, "missing": f"{expression!r} fails: {type(exc).__name__}: {exc}"[:500]}
    if intent["type"] == "model" and intent.get("expression"):
        target = namespace.get(intent["name"])
        found["class"] = f"{type(target).__module__}.{type(target).__qualname__}"
    found["value"] = encode(value)
    return found


def capture(namespace: dict[str, Any], request: dict[str, Any]) -> None:
    """Write {"results": [one per intent]} as JSON to request["out"]."""
    results = []
    for intent in request["intents"]:
        try:
            results.append(_result(namespace, intent))
        except Exception as exc:  # an exotic value must not hide the other intents
            results.append({"type": intent["type"], "missing": f"cannot record: {type(exc).__name__}: {exc}"})
    text = json.dumps({"results": results})
    if len(text) > MAX_JSON_BYTES:
        text = json.dumps({"error": f"the results take more than {MAX_JSON_BYTES >> 20} MB"})
    with open(request["out"], "w", encoding="utf-8") as handle:
        handle.write(text)
