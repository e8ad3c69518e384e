"""Turn a run directory into report figures (report.json) and the files people look at."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from daharness.report.agent_metrics import agent_figures
from daharness.report.category_metrics import category_figures
from daharness.report.dabench_metrics import dabench_figures, question_result
from daharness.runs.records import SampleRecord
from daharness.runs.rundir import RunDir

REPORT_JSON = "report.json"
REPORT_HTML = "report.html"


def build_report(run: RunDir) -> dict[str, Any]:
    config = run.config()
    records = sorted(run.latest_records().values(), key=_natural_id)
    scored = [r for r in records if r.status == "scored" and r.score is not None]
    counted = [r for r in scored if not r.score.excluded]  # type: ignore[union-attr]
    errors = [r for r in records if r.status == "error"]
    correct = sum(r.score.value >= 1.0 for r in counted)  # type: ignore[union-attr]
    results = [
        question_result(r.id, r.score.details, r.score.excluded, r.concepts, r.level)  # type: ignore[union-attr]
        for r in scored
    ]
    return {
        "run": {
            "dir": str(run.root),
            "suite": config.get("suite", {}).get("name"),
            "agent": config.get("agent", {}).get("name"),
            "model": config.get("agent", {}).get("model"),
            "scoring": config.get("scoring", {}),
            "created_at": config.get("created_at"),
            "daharness_version": config.get("daharness_version"),
        },
        "counts": {
            "samples": len(records),
            "scored": len(scored),
            "excluded": len(scored) - len(counted),
            "correct": correct,
            "wrong": len(counted) - correct,
            "errors": len(errors),
        },
        "mean_score": round(sum(r.score.value for r in counted) / len(counted), 4) if counted else None,  # type: ignore[union-attr]
        "dabench": dabench_figures(results),
        "agent": agent_figures(records),
        "categories": category_figures(records),
        "errors": [{"id": r.id, "attempt": r.attempt, "error": r.error} for r in errors],
        "wall_time_s": _wall_time(records),
        "samples": [_sample_row(r) for r in records],
    }


def _natural_id(record: SampleRecord) -> tuple[int, int | str]:
    """Numeric ids in numeric order, then the others alphabetically."""
    return (0, int(record.id)) if record.id.isdigit() else (1, record.id)


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
        "id": record.id,
        "status": record.status,
        "value": score.value if score else None,
        "excluded": score.excluded if score else False,
        "explanation": score.explanation if score else record.error,
        "sub_answers": score.details.get("sub_answers", {}) if score else {},
        "answer": record.answer,
        "concepts": record.concepts,
        "level": record.level,
        "duration_s": record.duration_s,
        "attempt": record.attempt,
        "agent_metrics": record.agent_metrics,
    }


def write_report(run: RunDir) -> dict[str, Any]:
    """Compute the report and write report.json and report.html into the run directory."""
    from daharness.report.html import render_html

    report = build_report(run)
    (run.root / REPORT_JSON).write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    (run.root / REPORT_HTML).write_text(render_html(report), encoding="utf-8")
    return report


def official_analysis(figures: dict[str, Any]) -> dict[str, Any]:
    """The official `*_evaluation_analysis.json` layout, plus `by_level`."""
    keys = (
        "main_results",
        "concept_accuracy_analysis",
        "concept_count_accuracy_analysis",
        "two_or_more_concepts_accuracy",
        "by_level",
    )
    return {key: figures[key] for key in keys}


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")
