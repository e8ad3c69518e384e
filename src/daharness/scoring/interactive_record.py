"""What a turn's code left behind, as the interactive family keeps it, and how a scorer reads it.

The family (``families/interactive_run.py``) never reads what the code left: it copies the probe's
results file, each plot and each plot's chart capture, unread and within the caps below, into a
folder of the harness, and keeps their paths (a *raw record*):

    {"error": why the code failed, or None, "file": the results file,
     "plots": [one per intent: None, or {"png": the image or None, "capture": its capture or None,
               "missing": why there is no image (over its cap), when so}]}

``read_record`` turns that into the record the scorer compares: ``{"error", "results",
"private_calls"}``, each plot result with its "png" and "capture" paths. It runs where the scorer
runs, the confined scoring worker: the harness reads none of it (a reference's record excepted, which
the family checks before the agent's is scored).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MAX_RESULTS_BYTES = 32 << 20  # the probe refuses to write more (interactive_probe.MAX_JSON_BYTES)
MAX_PLOT_BYTES = 16 << 20  # one plot image
MAX_CAPTURE_BYTES = 8 << 20  # one plot's chart capture


def failed(reason: str) -> dict[str, Any]:
    return {"error": reason, "results": [], "private_calls": []}


def read_record(raw: dict[str, Any]) -> dict[str, Any]:
    """The record of a raw record: a results file that is missing, over its cap, not JSON or not of
    the probe's shape gives a record whose "error" says so."""
    if raw.get("error"):
        return failed(str(raw["error"]))
    file = raw.get("file")
    if not isinstance(file, Path) or not file.is_file():
        return failed("the results could not be recorded: no record written")
    size = file.stat().st_size
    if size > MAX_RESULTS_BYTES:
        return failed(
            f"the results file takes {size / 2**20:,.1f} MB, more than the {MAX_RESULTS_BYTES >> 20} MB read"
        )
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return failed(f"the results could not be recorded: not JSON ({type(exc).__name__})")
    if not isinstance(record, dict):
        return failed("the results could not be recorded: not a JSON object")
    if "error" in record:
        return failed(f"the results could not be recorded: {str(record['error'])[:500]}")
    results, calls = record.get("results"), record.get("private_calls", [])
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        return failed("the results could not be recorded: no list of results")
    if not isinstance(calls, list) or not all(isinstance(c, str) for c in calls):
        return failed("the results could not be recorded: private_calls is not a list of names")
    for result, plot in zip(results, raw.get("plots") or [], strict=False):
        if plot is not None:
            result.update(plot)
    return {"error": None, "results": results, "private_calls": calls}
