"""What `daharness validate` does to a workspace task's result (DA-Code's check, section 3.5).

The reference's outputs are damaged in ways a wrong agent would damage them — deleted, a column
dropped, numbers moved by 5%, the chart type or a label changed — and every damaged version must score
below the reference. In corrected mode the outputs and the final answer also get the mutations of what
an instruction may fix (case, whitespace, order, rounding; `instruction_mutations`): those the task's
scorer options forbid must score lower, those they allow must keep the score.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from daharness.core.backend import Snapshot
from daharness.core.family import Mutation
from daharness.core.runlog import ScoringSettings
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.families.workspace.instruction_mutations import instruction_mutations
from daharness.families.workspace.modes import WORKSPACE_MODES
from daharness.sandbox.workspace import folder_snapshot

# damages the file in place (its chart captures, when they matter, in the folder given); False when it
# does not apply
FileDamage = Callable[[Path, Path | None], bool]


def mutations(
    task: Task, submission: Submission, snapshot: Snapshot, scoring: ScoringSettings
) -> Iterator[Mutation]:
    """Each output damaged, then (corrected mode) what an instruction may allow or forbid."""
    for name, damaged in _damaged_copies(snapshot, task):
        yield Mutation(name, submission, damaged)
    if scoring.mode(WORKSPACE_MODES.name, WORKSPACE_MODES.default) == "corrected":
        yield from _instruction_mutations(task, submission, snapshot)


def _instruction_mutations(task: Task, submission: Submission, snapshot: Snapshot) -> Iterator[Mutation]:
    """The changes an instruction may fix, each forbidden or allowed by the scorer's options."""
    for spec in task.scorers:
        output = spec.options.get("file")
        for mutation in instruction_mutations(spec):
            name = f"{mutation.label} {output or 'the final answer'}"
            kind: Literal["forbidden", "allowed"] = "forbidden" if mutation.forbidden else "allowed"
            if output and snapshot.path(output) is not None:
                with tempfile.TemporaryDirectory() as scratch:
                    copy = Path(scratch) / "files"
                    shutil.copytree(snapshot.root, copy)
                    if mutation.change_file(copy / output):
                        yield Mutation(
                            name, submission, folder_snapshot(copy, captures=snapshot.captures), kind
                        )
            elif not output and (answer := _changed_answer(submission.answer, mutation.change_value)):
                altered = dataclasses.replace(submission, answers=[*submission.answers[:-1], answer])
                yield Mutation(name, altered, snapshot, kind)


def _changed_answer(answer: str | None, change: Callable[[object], object]) -> str | None:
    """The final answer with `change` applied to its JSON value (None when it is not JSON or unchanged)."""
    try:
        value = json.loads(answer or "")
    except ValueError:
        return None
    changed = change(value)
    return json.dumps(changed) if changed != value else None


def _damaged_copies(snapshot: Snapshot, task: Task) -> Iterator[tuple[str, Snapshot]]:
    outputs = [name for name in task.gold.data.get("outputs", []) if snapshot.path(name) is not None]
    for output in outputs:
        for label, mutation in _mutations_for(output, task):
            with tempfile.TemporaryDirectory() as scratch:
                copy, captures = Path(scratch) / "files", None
                shutil.copytree(snapshot.root, copy)
                if snapshot.captures is not None:
                    captures = shutil.copytree(snapshot.captures, Path(scratch) / "captures")
                if mutation(copy / output, captures):
                    yield f"{label} {output}", folder_snapshot(copy, captures=captures)


def _mutations_for(output: str, task: Task) -> list[tuple[str, FileDamage]]:
    mutations: list[tuple[str, FileDamage]] = [("delete", _delete)]
    suffix = Path(output).suffix.lower()
    scorers = {spec.name for spec in task.scorers if spec.options.get("file") == output}
    if suffix == ".csv" and "ml" in scorers:
        # predictions are aligned by id, so row order is free; what must count is which row got which value
        mutations += [
            ("drop a column of", _drop_column),
            ("scramble the predictions of", _scramble_last_column),
        ]
    elif suffix == ".csv":
        # row order is checked by the instruction mutations ("order changed in")
        mutations += [("drop a column of", _drop_column), ("perturb numbers 5% in", _perturb_csv)]
    elif suffix == ".json":
        mutations.append(("perturb values in", _perturb_json))
    elif suffix in (".db", ".sqlite", ".sqlite3"):
        mutations.append(("perturb numbers 5% in", _perturb_sqlite))
    elif suffix in (".png", ".jpg", ".svg", ".pdf"):
        mutations += [
            ("change chart type of", _change_chart_type),
            ("change a label of", _change_chart_label),
        ]
    return mutations


def _delete(path: Path, captures: Path | None = None) -> bool:
    path.unlink()
    return True


def _drop_column(path: Path, captures: Path | None = None) -> bool:
    import pandas as pd

    frame = pd.read_csv(path)
    if frame.shape[1] < 1:
        return False
    frame.drop(columns=frame.columns[-1]).to_csv(path, index=False)
    return True


def _scramble_last_column(path: Path, captures: Path | None = None) -> bool:
    import pandas as pd

    frame = pd.read_csv(path)
    column = frame.columns[-1]
    if frame[column].nunique() < 2:
        return False
    scrambled = frame[column].sample(frac=1.0, random_state=0).to_numpy()
    if (scrambled == frame[column].to_numpy()).all():
        scrambled = frame[column].to_numpy()[::-1]
    frame[column] = scrambled
    frame.to_csv(path, index=False)
    return True


def _bump(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value * 1.05 + (1 if value == 0 else 0)
    if isinstance(value, str):
        return value + " (changed)"
    if isinstance(value, list):
        return [_bump(v) for v in value]
    if isinstance(value, dict):
        return {k: _bump(v) for k, v in value.items()}
    return value


def _perturb_csv(path: Path, captures: Path | None = None) -> bool:
    import pandas as pd

    frame = pd.read_csv(path)
    numeric = frame.select_dtypes("number").columns
    if len(numeric) == 0:
        column = frame.columns[0]
        frame[column] = frame[column].astype(str) + " (changed)"
    else:
        for column in numeric:
            frame[column] = frame[column] * 1.05 + (frame[column] == 0)
    frame.to_csv(path, index=False)
    return True


def _perturb_json(path: Path, captures: Path | None = None) -> bool:
    path.write_text(json.dumps(_bump(json.loads(path.read_text()))))
    return True


def _perturb_sqlite(path: Path, captures: Path | None = None) -> bool:
    connection = sqlite3.connect(path)
    try:
        tables = [row[0] for row in connection.execute("select name from sqlite_master where type='table'")]
        changed = False
        for table in tables:
            for _, column, kind, *_ in connection.execute(f'pragma table_info("{table}")').fetchall():
                if kind.upper() in ("INTEGER", "REAL", "NUMERIC", "FLOAT", "DOUBLE"):
                    connection.execute(f'update "{table}" set "{column}" = "{column}" * 1.05 + 1')
                    changed = True
        connection.commit()
        return changed
    finally:
        connection.close()


def _edit_chart_capture(path: Path, captures: Path | None, edit: Callable[[dict], bool]) -> bool:
    """Apply `edit` to every axes of the image's captured data: the capture the harness received for
    exactly these bytes, or (files from outside a sandbox) `<image>.json` beside it."""
    if captures is None:
        capture = path.with_name(path.name + ".json")
    else:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        index = Snapshot(captures, frozenset(), captures=captures).capture_entries()
        found = [entry for entry in index if entry.get("sha256") == digest]
        capture = captures / f"{found[-1]['n']}.json" if found else captures / "none"
    if not capture.is_file():
        return False
    data = json.loads(capture.read_text())
    changed = [edit(axes) for axes in data.get("axes", [])]
    capture.write_text(json.dumps(data))
    return any(changed)


def _as_other_kind(series: dict) -> dict | None:
    """The same values drawn as another kind of chart (bar <-> line, scatter -> line, pie -> bar)."""
    kind = series.get("kind")
    if kind == "bar":
        centers = [x + w / 2 for x, w in zip(series["x"], series["widths"], strict=False)]
        return {
            "kind": "line",
            "role": "data",
            "x": centers,
            "y": series["heights"],
            "y_numeric": True,
            "color": "#000000",
        }
    if kind == "line":
        n = len(series["y"])
        return {"kind": "bar", "role": "data", "orientation": "vertical", "x": series["x"], "y": [0.0] * n,
                "widths": [0.8] * n, "heights": series["y"], "colors": ["#000000"] * n}  # fmt: skip
    if kind == "scatter":
        points = series.get("offsets") or []
        return {"kind": "line", "role": "data", "x": [p[0] for p in points], "y": [p[1] for p in points],
                "y_numeric": True, "color": "#000000"}  # fmt: skip
    if kind == "pie":
        n = len(series["fractions"])
        return {"kind": "bar", "role": "data", "orientation": "vertical", "x": list(range(n)), "y": [0.0] * n,
                "widths": [0.8] * n, "heights": series["fractions"], "colors": ["#000000"] * n}  # fmt: skip
    return None


def _change_chart_type(path: Path, captures: Path | None) -> bool:
    def edit(axes: dict) -> bool:
        converted = [
            _as_other_kind(series) if series.get("role") == "data" else series
            for series in axes.get("series", [])
        ]
        if not converted or any(series is None for series in converted):
            return False
        axes["series"] = converted
        axes["kinds"] = sorted({series["kind"] for series in converted})
        axes["type"] = axes["kinds"][0]
        return True

    return _edit_chart_capture(path, captures, edit)


def _change_chart_label(path: Path, captures: Path | None) -> bool:
    def edit(axes: dict) -> bool:
        for key in ("title", "xlabel", "ylabel"):
            if axes.get(key):
                axes[key] = "Something else entirely"
                return True
        return False

    return _edit_chart_capture(path, captures, edit)
