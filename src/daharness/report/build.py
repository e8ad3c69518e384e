"""Turn a run directory into report figures (report.json) and the files people look at.

The counts, the agent figures and the sample rows are the same for every family; each family present
in the run adds its own figures, computed by the family's registered code: in its paper's layout
(`families.<name>`) and as the tables that the terminal, report.html and the viewer draw
(`family_tables.<name>`, see figures.py).
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from daharness.core.errors import UserError, located
from daharness.core.figures import FamilyFigures
from daharness.core.record import SampleRecord
from daharness.core.registry import FamilyEntry, families
from daharness.core.runlog import FORMAT_VERSION
from daharness.report.agent_metrics import agent_figures
from daharness.report.epochs import epoch_figures, headline_interval
from daharness.report.figures import DrawnFigures
from daharness.report.task_set import task_set
from daharness.runs.rundir import RunDir

REPORT_JSON = "report.json"
REPORT_HTML = "report.html"


def family_of(record: SampleRecord) -> str:
    """A record's family; a record written before records named their family belongs to the first family
    that claims it (`FamilyBase.owns_unlabelled`)."""
    if record.family:
        return record.family
    return next((name for name, entry in _ordered() if entry.impl.owns_unlabelled(record)), "")


def _ordered() -> list[tuple[str, FamilyEntry]]:
    return sorted(families.items(), key=lambda item: (item[1].order, item[0]))


def family_figures(records: list[SampleRecord]) -> dict[str, FamilyFigures]:
    """Each family's figures over its own records, in the families' registered order."""
    found: dict[str, FamilyFigures] = {}
    for name, entry in _ordered():
        own = [r for r in records if family_of(r) == name]
        if own and (figures := entry.impl.figures(own)) is not None:
            found[name] = figures
    return found


def drawn_figures(figures: dict[str, FamilyFigures], modes: dict[str, str]) -> dict[str, Any]:
    """report.json `family_tables`: each family's tables with its title and the mode it was scored in."""
    drawn = {}
    for name, own in figures.items():
        impl = families.get(name).impl
        mode = modes.get(impl.mode_group or "", "")
        drawn[name] = DrawnFigures.of(own, impl.title or name, mode).model_dump(mode="json")
    return drawn


def build_report(run: RunDir) -> dict[str, Any]:
    spec = run.spec()
    records = sorted(run.latest_records().values(), key=_natural_id)
    scored = [r for r in records if r.status == "scored" and r.score is not None]
    counted = [r for r in scored if not r.score.excluded]  # type: ignore[union-attr]
    errors = [r for r in records if r.status == "error"]
    correct = sum(r.score.value >= 1.0 for r in counted)  # type: ignore[union-attr]
    mean = sum(r.score.value for r in counted) / len(counted) if counted else None  # type: ignore[union-attr]
    figures = family_figures(records)
    return {
        "format_version": FORMAT_VERSION,
        "run": {
            "dir": str(run.root),
            "suite": spec.suite.get("name"),
            "agent": spec.agent.get("name"),
            "model": spec.agent.get("model"),
            "scoring": spec.scoring.modes,
            "created_at": spec.created_at,
            "daharness_version": spec.daharness_version,
            "epochs": spec.epochs,
            "tags": spec.tags,
            "metadata": spec.metadata,
            "task_set": task_set(records, spec),
        },
        "counts": {
            "samples": len(records),
            "scored": len(scored),
            "excluded": len(scored) - len(counted),
            "correct": correct,
            "wrong": len(counted) - correct,
            "errors": len(errors),
            "agent_failures": sum(r.failure is not None for r in scored),
            "suspicious": sum(bool(r.suspicious) for r in records),
        },
        "mean_score": round(mean, 4) if mean is not None else None,
        # errors cannot hide a wrong answer: the mean as if every infrastructure error had scored 0
        "mean_score_errors_as_zero": round(mean * len(counted) / (len(counted) + len(errors)), 4)
        if mean is not None
        else (0.0 if errors else None),
        "integrity": [_integrity_row(r) for r in records if r.failure or r.suspicious or r.skipped_files],
        "intervals": headline_intervals(counted),
        "epochs": epoch_figures(records, spec.epochs),
        "families": {name: own.data for name, own in figures.items()},
        "family_tables": drawn_figures(figures, spec.scoring.modes),
        "agent": agent_figures(records),
        "errors": [{"id": r.id, "attempt": r.attempt, "error": r.error} for r in errors],
        "wall_time_s": _wall_time(records),
        "samples": [_sample_row(r) for r in records],
    }


def headline_intervals(counted: list[SampleRecord]) -> dict[str, Any]:
    """Accuracy (share scored 1) and mean score with 95% Wilson intervals (see stats.py), for the run and
    per family; a task's epochs are one cluster (see epochs.headline_interval)."""

    def both(records: list[SampleRecord]) -> dict[str, Any]:
        return {
            "accuracy": headline_interval(records, lambda r: float(r.score.value >= 1.0)),  # type: ignore[union-attr]
            "mean_score": headline_interval(records, lambda r: r.score.value),  # type: ignore[union-attr]
        }

    by_family: dict[str, list[SampleRecord]] = {}
    for record in counted:
        by_family.setdefault(family_of(record), []).append(record)
    return {**both(counted), "by_family": {name: both(own) for name, own in sorted(by_family.items())}}


def _natural_id(record: SampleRecord) -> tuple[int, int | str, int]:
    """Numeric ids in numeric order, then the others alphabetically; a task's epochs in order."""
    return (0, int(record.id), record.epoch) if record.id.isdigit() else (1, record.id, record.epoch)


def _wall_time(records: list[SampleRecord]) -> dict[str, float]:
    if not records:
        return {"elapsed": 0.0, "samples_total": 0.0}
    starts = [datetime.fromisoformat(r.started_at).timestamp() for r in records]
    ends = [start + r.duration_s for start, r in zip(starts, records, strict=True)]
    return {
        "elapsed": round(max(ends) - min(starts), 3),
        "samples_total": round(sum(r.duration_s for r in records), 3),
    }


def _sample_row(record: SampleRecord) -> dict[str, Any]:
    score = record.score
    return {
        "id": record.key,
        "task": record.id,
        "epoch": record.epoch,
        "family": family_of(record),
        "status": record.status,
        "value": score.value if score else None,
        "excluded": score.excluded if score else False,
        "explanation": score.explanation if score else record.error,
        "sub_answers": score.details.get("sub_answers", {}) if score else {},
        "answer": record.answer,
        "concepts": record.concepts,
        "level": record.level,
        "category": record.category,
        "duration_s": record.duration_s,
        "attempt": record.attempt,
        "agent_metrics": record.agent_metrics,
        "failure": record.failure,
        "suspicious": [flag.detail for flag in record.suspicious],
    }


def _integrity_row(record: SampleRecord) -> dict[str, Any]:
    """What a reader should look at in a sample: the agent's failure, its suspicious actions, the files
    it left that were not collected."""
    return {
        "id": record.id,
        "failure": record.failure,
        "suspicious": [flag.model_dump() for flag in record.suspicious],
        "skipped_files": [entry.model_dump() for entry in record.skipped_files],
    }


def write_report(run: RunDir) -> dict[str, Any]:
    """Compute the report and write report.json and report.html into the run directory."""
    from daharness.report.html import render_html

    report = build_report(run)
    (run.root / REPORT_JSON).write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    (run.root / REPORT_HTML).write_text(render_html(report), encoding="utf-8")
    return report


def write_json(path: Path, value: Any) -> None:
    write_text(path, json.dumps(value, indent=4, ensure_ascii=False) + "\n")


def write_text(path: Path, text: str) -> None:
    """Write an output file the user named (its folder made as needed); a path that cannot be written
    (a folder, a file where a folder should be, no permission) is one line naming it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise cannot_write(path, exc) from None


def check_writable(path: Path | None) -> None:
    """Refuse now, naming it, an output path that `write_text` could not write after the work: a folder,
    a path under a file, a folder without write permission."""
    if path is None:
        return
    if path.is_dir():
        raise cannot_write(path, IsADirectoryError(21, "Is a directory"))
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise cannot_write(path, NotADirectoryError(20, "Not a directory"))
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise cannot_write(path, PermissionError(13, "Permission denied"))


def cannot_write(path: Path, exc: OSError) -> UserError:
    # mkdir says "File exists" when a file stands where a folder of the path should be
    in_the_way = isinstance(exc, FileExistsError | NotADirectoryError)
    return located(
        path,
        f"cannot write ({'a file stands where a folder is needed' if in_the_way else exc.strerror or exc})",
    )
