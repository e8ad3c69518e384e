"""The official Tapilot-Crossing evaluation of one code-generation entry, run in a fresh sandbox.

The steps of the release's `evaluate.py`, in its order and with its scripts, but inside daharness's
sandbox (the release runs them on the host): in a folder holding the five tables and the private library
`decision_company.py`, with empty `ref_result/` and `pred_result/`,

1. the reference: `ref_code_all` (or `reference_answer`, when only that one reads a table), its result
   paths turned to `./ref_result/`;
2. the prediction: `ref_code_hist` then the reply's code (`extract_release_code`), its result paths
   turned to `./pred_result/`, `plt.show()` and `show_plots()` removed;
3. the entry's `eval_metrics`, whose printed lines the scorer judges (`scorers/release.py`).

Each is a script run by `python SCRIPT WORKDIR` (`python_script`: forked from the fresh sandbox's kernel,
which has the libraries imported, where the backend can) with the release's preamble (warnings off, matplotlib's
Agg backend) and table paths pointed at the workspace, stopped after the entry's timeout (30 s, the
release's default). A failing step ends the entry. Besides what the release keeps, the hook records
whether the prediction changed the reference's results (the corrected mode fails it).
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from daharness.core.backend import SandboxBackend
from daharness.core.family import OpenFresh
from daharness.core.observation import Observation
from daharness.core.task import Task
from daharness.families.interactive.scorers.release import extract_release_code

TABLES = {
    "credit_card_risk": "credit_customers.csv",
    "ATP_tennis": "atp_tennis.csv",
    "fast_food": "fastfood.csv",
    "laptop_price": "laptops_price.csv",
    "melb_housing": "melb_data.csv",
}
LIBRARY_FILE = "decision_company.py"
PREAMBLE = "import warnings\nwarnings.filterwarnings('ignore')\nimport matplotlib\nmatplotlib.use('Agg')\n"
DEFAULT_TIMEOUT_S = 30.0
_TABLE_PATH = re.compile(
    r"[\"'][^\s\"']*/(credit_customers|atp_tennis|fastfood|laptops_price|melb_data)\.csv[\"']"
)
WARM_UP = "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot\n"
_HASH_RESULTS = (
    "import hashlib, pathlib\n"
    "for p in sorted(pathlib.Path('ref_result').rglob('*')):\n"
    "    print(p, hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else 'dir')\n"
)


def point_tables(code: str, folder: str) -> str:
    """Table names and paths in code pointed at `folder` (the release's `fix_csv_paths`)."""
    for name in TABLES.values():
        path = f"{folder}/{name}"
        code = code.replace(f'"{name}"', f'"{path}"').replace(f"'{name}'", f"'{path}'")
    return _TABLE_PATH.sub(lambda m: f'"{folder}/{m.group(1)}.csv"', code)


def reference_script(entry: dict[str, Any], folder: str) -> str:
    code = entry.get("ref_code_all") or entry.get("reference_answer", "")
    if "read_csv" not in code and "read_csv" in entry.get("reference_answer", ""):
        code = entry["reference_answer"]
    return PREAMBLE + point_tables(code, folder).replace("./pred_result/", "./ref_result/")


def predicted_script(entry: dict[str, Any], reply_code: str, folder: str) -> str:
    history = entry.get("ref_code_hist", "")
    code = f"{history}\n\n{reply_code}" if history else reply_code
    code = point_tables(code, folder).replace("./ref_result/", "./pred_result/")
    return PREAMBLE + re.sub(r"show_plots\(\)", "", re.sub(r"plt\.show\(\)", "", code))


def _step(observation: Observation) -> dict[str, Any]:
    stderr = observation.stderr
    if observation.error is not None:
        stderr = f"{stderr}{observation.error.name}: {observation.error.value}"
    return {
        "ok": observation.ok and not observation.timed_out,
        "timed_out": observation.timed_out,
        "exit_status": observation.exit_status,
        "stdout": observation.stdout[-20_000:],
        "stderr": stderr[-2_000:],
    }


def _run(box: SandboxBackend, name: str, source: str, timeout: float) -> dict[str, Any]:
    written = box.write_file(name, source)
    if not written.ok:
        return _step(written)
    return _step(box.python_script(name, [box.workdir], timeout=timeout))


def is_release_code(task: Task) -> bool:
    """A code-generation entry of the official files (scored by its own eval_metrics)."""
    return any(spec.name == "tapilot_code" for spec in task.scorers)


def evaluate_entry(task: Task, reply: str | None, open_fresh: OpenFresh) -> dict[str, Any]:
    """The release's evaluation of `reply` on the task's entry, in a fresh sandbox; the evidence the
    `tapilot_code` scorer reads."""
    entry = task.gold.data["release"]
    timeout = float(task.gold.data.get("timeout_s", DEFAULT_TIMEOUT_S))
    code = extract_release_code(reply or "")
    evidence: dict[str, Any] = {"code": code, "missing": None}
    if not reply or not entry.get("eval_metrics"):
        evidence["missing"] = "missing response or eval_metrics"
        return evidence
    with open_fresh() as box:
        folder = box.workdir
        # matplotlib's font list is built here, untimed (the release's host has it already), unless the
        # kernel copied in the harness's list (sandbox/font_cache.py): a Python importing pyplot is 0.5 s
        box.bash(
            'mkdir -p ref_result pred_result && { ls "$MPLCONFIGDIR"/fontlist-v*.json > /dev/null 2>&1'
            f" || python -I -c {shlex.quote(WARM_UP)}; }}",
            timeout=120,
        )
        evidence["ref"] = _run(box, "_ref.py", reference_script(entry, folder), timeout)
        if not evidence["ref"]["ok"]:
            return evidence
        before = box.bash(f"python -I -c {shlex.quote(_HASH_RESULTS)}", timeout=timeout).stdout
        evidence["pred"] = _run(box, "_pred.py", predicted_script(entry, code, folder), timeout)
        if not evidence["pred"]["ok"]:
            return evidence
        after = box.bash(f"python -I -c {shlex.quote(_HASH_RESULTS)}", timeout=timeout).stdout
        evidence["reference_results_changed"] = before != after
        eval_code = PREAMBLE + point_tables(entry["eval_metrics"], folder)
        evidence["eval"] = _run(box, "_eval.py", eval_code, timeout)
    return evidence
