"""What a turn's code left behind, as the interactive family keeps it, and how a scorer reads it.

The family (``families/interactive/run.py``) never reads what the code left: it copies the probe's
results file, each plot and each plot's chart capture, unread and within the caps below, into a
folder of the harness, and keeps their paths (a *raw record*):

    {"error": why the code failed, or None, "file": the results file,
     "plots": [one per intent: None, or {"png": the image or None, "capture": its capture or None,
               "missing": why there is no image (over its cap), when so}],
     "private_calls": the private functions the sealed recorder saw run, "tampering": what it saw done
               to the record}

The calls come from the recorder (``families/interactive/calls.py``), whose lines the harness checked
against its key: a "private_calls" the code wrote into the results file is never believed.

``read_record`` turns that into the record the scorer compares: ``{"error", "results",
"private_calls", "tampering"}``, each plot result with its "png" and "capture" paths. It runs where the scorer
runs, the confined scoring worker: the harness reads none of it (a reference's record excepted, which
the family checks before the agent's is scored).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MAX_RESULTS_BYTES = 32 << 20  # the probe refuses to write more (probe.MAX_JSON_BYTES)
MAX_PLOT_BYTES = 16 << 20  # one plot image
MAX_CAPTURE_BYTES = 8 << 20  # one plot's chart capture


def failed(reason: str, raw: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": reason, "results": [], **_calls(raw or {})}


def _calls(raw: dict[str, Any]) -> dict[str, list[str]]:
    """The sealed recorder's findings as the raw record carries them (lists of names, else none)."""
    found = {}
    for key in ("private_calls", "tampering"):
        value = raw.get(key) or []
        found[key] = [str(item) for item in value] if isinstance(value, list) else []
    return found


def read_record(raw: dict[str, Any]) -> dict[str, Any]:
    """The record of a raw record: a results file that is missing, over its cap, not JSON or not of
    the probe's shape gives a record whose "error" says so."""
    if raw.get("error"):
        return failed(str(raw["error"]), raw)
    file = raw.get("file")
    if not isinstance(file, Path) or not file.is_file():
        return failed("the results could not be recorded: no record written", raw)
    size = file.stat().st_size
    if size > MAX_RESULTS_BYTES:
        return failed(
            f"the results file takes {size / 2**20:,.1f} MB, more than the {MAX_RESULTS_BYTES >> 20} MB read",
            raw,
        )
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return failed(f"the results could not be recorded: not JSON ({type(exc).__name__})", raw)
    if not isinstance(record, dict):
        return failed("the results could not be recorded: not a JSON object", raw)
    if "error" in record:
        return failed(f"the results could not be recorded: {str(record['error'])[:500]}", raw)
    results = record.get("results")
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        return failed("the results could not be recorded: no list of results", raw)
    for result, plot in zip(results, raw.get("plots") or [], strict=False):
        if plot is not None:
            result.update(plot)
    return {"error": None, "results": results, **_calls(raw)}
