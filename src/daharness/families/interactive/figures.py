"""The interactive family's figures (Tapilot-Crossing, paper Table 3 and Figure 4): Acc and AccR by mode
(normal, action, private, private-action), code generation and multiple choice apart and together;
accuracy by action type and by result type (each intent on its own); the official intent-weighted
accuracy (an all-right query counts once per intent); the clarification turns, how often the agent asked
and got an answer; and for the official files, their intents as the release counts them and CSE.
"""

from __future__ import annotations

from typing import Any

from daharness.core.figures import Column, FamilyFigures, Figure, FigureTable, Measure, Row, Section
from daharness.core.record import SampleRecord

MODES = ("normal", "action", "private", "private_action")
MODE_TITLES = {"normal": "Normal", "action": "Action", "private": "Private", "private_action": "Pri-Act"}
ANSWER_TYPES = {"code": "code generation", "choice": "multiple choice"}


def interactive_figures(records: list[SampleRecord]) -> dict[str, Any] | None:
    """Table 3's Acc and AccR by mode and answer type, and the other groups (module docstring)."""
    rows = [_row(r) for r in records if r.status == "scored" and r.score is not None and not r.score.excluded]
    if not rows:
        return None
    table3 = {
        metric: {
            **{mode: _mean([r[metric] for r in rows if r["mode"] == mode]) for mode in MODES},
            "code": _mean([r[metric] for r in rows if r["answer_type"] == "code"]),
            "choice": _mean([r[metric] for r in rows if r["answer_type"] == "choice"]),
            "overall": _mean([r[metric] for r in rows]),
        }
        for metric in ("acc", "accr")
    }
    by_mode = {
        mode: {
            answer: _group([r for r in rows if r["mode"] == mode and r["answer_type"] == answer])
            for answer in ("code", "choice")
        }
        for mode in MODES
        if any(r["mode"] == mode for r in rows)
    }
    actions = sorted({r["action"] for r in rows if r["action"]})
    intents = [intent for r in rows for intent in r["intents"]]
    result_types = sorted({intent["type"] for intent in intents})
    weighted = sum(len(r["intents"]) or 1 for r in rows)
    asked = [r for r in rows if r["asked"]]
    clarify = [r for r in rows if r["action"] == "clarification"]
    return {
        "table3": table3,
        "by_mode": by_mode,
        "by_action": {action: _group([r for r in rows if r["action"] == action]) for action in actions},
        "by_result_type": {
            kind: {
                "intents": sum(i["type"] == kind for i in intents),
                "acc": _mean([float(i["right"]) for i in intents if i["type"] == kind]),
            }
            for kind in result_types
        },
        "intent_weighted_acc": round(sum((len(r["intents"]) or 1) * r["acc"] for r in rows) / weighted, 4),
        "clarification": {
            "turns": len(clarify),
            "asked": sum(r["asked"] > 0 for r in clarify),
            "answered": sum(r["answered"] > 0 for r in clarify),
            "acc_asked": _mean([r["acc"] for r in clarify if r["asked"]]),
            "acc_not_asked": _mean([r["acc"] for r in clarify if not r["asked"]]),
            "questions_in_all_turns": sum(r["asked"] for r in rows),
            "turns_with_questions": len(asked),
        },
        "ambiguous_replies": sum(r["ambiguous"] for r in rows),
        **(
            {"release": _release_figures(released)} if (released := [r for r in rows if r["release"]]) else {}
        ),
        "counts": {
            "samples": len(rows),
            "code": sum(r["answer_type"] == "code" for r in rows),
            "choice": sum(r["answer_type"] == "choice" for r in rows),
            "intents": len(intents),
        },
    }


def _row(record: SampleRecord) -> dict[str, Any]:
    details = record.score.details if record.score else {}
    clarification = details.get("clarification") or {}
    value = record.score.value if record.score else 0.0
    return {
        "mode": details.get("mode") or record.category or "normal",
        "action": details.get("action", record.subcategory),
        "answer_type": details.get("answer_type", "code"),
        "acc": float(details.get("acc", value)),
        "accr": float(details.get("accr", value)),
        "intents": details.get("intents", []),
        "release": details.get("release"),
        "cse": details.get("cse"),
        "domain": next((t.removeprefix("domain:") for t in record.tags if t.startswith("domain:")), None),
        "ambiguous": bool(details.get("ambiguous", False)),
        "asked": int(clarification.get("asked", 0)),
        "answered": int(clarification.get("answered", 0)),
    }


def _release_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Official files' entries as the release counts them (intents credited over intents, per file and
    overall), and Acc over entries by file, domain and result type."""

    def counted(group: list[dict[str, Any]]) -> dict[str, Any]:
        correct = sum(r["release"]["credit"] for r in group)
        total = sum(r["release"]["intents"] for r in group)
        return {"correct": correct, "total": total, "accuracy": round(correct / total, 4) if total else None}

    files = sorted({r["release"]["file"] for r in rows})
    domains = sorted({r["domain"] for r in rows if r["domain"]})
    kinds = sorted({i["type"] for r in rows for i in r["intents"]})
    soft = [r["cse"] for r in rows if r["cse"] and "accse" in r["cse"]]
    return {
        **(
            {
                "cse": {key: _mean([s[key] for s in soft]) for key in ("accse", "accser", "s1", "s2")}
                | {"n": len(soft), "failed": sum(1 for r in rows if r["cse"] and "error" in r["cse"])}
            }
            if soft or any(r["cse"] for r in rows)
            else {}
        ),
        "by_file": {f: counted([r for r in rows if r["release"]["file"] == f]) for f in files},
        "overall": counted(rows),
        "by_domain": {d: _group([r for r in rows if r["domain"] == d]) for d in domains},
        "by_result_type": {
            k: _group([r for r in rows if any(i["type"] == k for i in r["intents"])]) for k in kinds
        },
    }


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _group(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"n": len(rows), "acc": _mean([r["acc"] for r in rows]), "accr": _mean([r["accr"] for r in rows])}


def figure_tables(figures: dict[str, Any]) -> FamilyFigures:
    """Acc and AccR overall and in the paper's Table 3 layout, then the other groups; the official files'
    figures first when the run has some."""
    table3 = figures["table3"]
    headline = [
        Figure(label="Acc", value=table3["acc"]["overall"], measure="mean"),
        Figure(label="AccR", value=table3["accr"]["overall"], measure="mean"),
        Figure(label="Acc code generation", value=table3["acc"]["code"], measure="mean"),
        Figure(label="Acc multiple choice", value=table3["acc"]["choice"], measure="mean"),
        Figure(label="intent-weighted Acc", value=figures["intent_weighted_acc"], measure="mean"),
        Figure(label="ambiguous replies", value=figures["ambiguous_replies"], measure="count"),
    ]
    release = figures.get("release")
    if release and (cse := release.get("cse")):  # the paper's soft metric, when it was computed
        headline += [
            Figure(label="AccSE (CSE)", value=cse["accse"], measure="mean"),
            Figure(label="AccSER", value=cse["accser"], measure="mean"),
        ]
    columns = [*MODES, "code", "choice", "overall"]
    tables = [
        *(_release_tables(release) if release else []),
        FigureTable(
            title="Table 3 layout",
            group="",
            columns=[Column(label=MODE_TITLES.get(c, c.capitalize()), measure="mean") for c in columns],
            sections=[
                Section(rows=[Row(group=label, values=[table3[metric][c] for c in columns])])
                for metric, label in (("acc", "Acc"), ("accr", "AccR"))
            ],
        ),
        FigureTable(
            title="by mode and answer type",
            group="mode",
            columns=[
                Column(label=f"{answer} {label}", measure=measure)
                for answer in ANSWER_TYPES.values()
                for label, measure in (("Acc", "mean"), ("AccR", "mean"), ("samples", "count"))
            ],
            sections=[
                Section(
                    rows=[
                        Row(
                            group=MODE_TITLES[mode],
                            values=[groups[a][key] for a in ANSWER_TYPES for key in ("acc", "accr", "n")],
                        )
                        for mode, groups in figures["by_mode"].items()
                    ]
                )
            ],
        ),
        FigureTable(
            columns=[Column(label="Acc", measure="mean"), Column(label="n", measure="count")],
            sections=[
                Section(
                    name="action type",
                    rows=[Row(group=k, values=[g["acc"], g["n"]]) for k, g in figures["by_action"].items()],
                    chart="bars",
                ),
                Section(
                    name="result type (intents)",
                    rows=[
                        Row(group=k, values=[g["acc"], g["intents"]])
                        for k, g in figures["by_result_type"].items()
                    ],
                    chart="bars",
                ),
            ],
        ),
        _clarification_table(figures["clarification"]),
    ]
    return FamilyFigures(data=figures, headline=headline, tables=tables)


def _clarification_table(clarification: dict[str, Any]) -> FigureTable:
    return _one_row(
        "clarification turns",
        clarification,
        (
            ("turns", "turns", "count"),
            ("asked", "the agent asked", "count"),
            ("answered", "got an answer", "count"),
            ("acc_asked", "Acc asked", "mean"),
            ("acc_not_asked", "Acc not asked", "mean"),
            ("questions_in_all_turns", "questions in all turns", "count"),
        ),
    )


def _one_row(
    title: str, values: dict[str, Any], columns: tuple[tuple[str, str, Measure], ...]
) -> FigureTable:
    """A table of one row: the `values` named by `columns` (key, header, measure)."""
    return FigureTable(
        title=title,
        group="",
        columns=[Column(label=label, measure=measure) for _, label, measure in columns],
        sections=[Section(rows=[Row(group="", values=[values[key] for key, _, _ in columns])])],
    )


def _release_tables(release: dict[str, Any]) -> list[FigureTable]:
    """The official files: intents as the release counts them, per file; Acc over entries by domain and
    result type; CSE when it was computed."""
    by_file = [*release["by_file"].items(), ("overall", release["overall"])]
    tables = [
        FigureTable(
            title="official files (intents, as the release counts them)",
            group="file",
            columns=[
                Column(label="correct", measure="count"),
                Column(label="total", measure="count"),
                Column(label="accuracy", measure="rate"),
            ],
            sections=[
                Section(
                    rows=[Row(group=n, values=[f["correct"], f["total"], f["accuracy"]]) for n, f in by_file]
                )
            ],
        ),
        FigureTable(
            title="official files by domain and result type (Acc over entries)",
            columns=[Column(label="Acc", measure="mean"), Column(label="n", measure="count")],
            sections=[
                Section(
                    name=label,
                    rows=[Row(group=k, values=[g["acc"], g["n"]]) for k, g in release[key].items()],
                )
                for label, key in (("domain", "by_domain"), ("result type", "by_result_type"))
            ],
        ),
    ]
    if cse := release.get("cse"):
        columns: tuple[tuple[str, str, Measure], ...] = (
            ("accse", "AccSE", "mean"),
            ("accser", "AccSER", "mean"),
            ("s1", "mean S1 (CodeT5+)", "number"),
            ("s2", "mean S2 (Ada)", "number"),
            ("n", "scored", "count"),
            ("failed", "without embeddings", "count"),
        )
        tables.append(_one_row("CSE (code entries)", cse, columns))
    return tables
