"""The interactive family (Tapilot-Crossing): multi-turn analysis dialogues over tables.

Around each sample: `prepare` gives the agent a sandbox where the dialogue's earlier code has run (the
agent starts where the conversation is; the history runs when the agent first uses it); `finish` runs
the reference code and the agent's code, each after the same history in a fresh sandbox, and keeps what
each left (unread, `scorers/record.py`) in `submission.evidence["interactive"]` for the
`interactive_code` scorer. Multiple-choice turns
need no execution. `damaged` gives `daharness validate` wrong answers: a changed number or text, a
dropped intent, the same results without the private library, the suite's decoys, a wrong letter.

Report figures (paper Table 3 and Figure 4): Acc and AccR by mode (normal, action, private,
private-action), code generation and multiple choice apart and together; accuracy by action type and
by result type (each intent on its own); the official intent-weighted accuracy (an all-right query counts
once per intent); and the clarification turns, how often the agent asked and got an answer.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.table import Table

from daharness.core.backend import SandboxBackend
from daharness.core.family import FamilyBase, FormatOption, OpenFresh, SampleEnvironment
from daharness.core.record import SampleRecord, Suspicion
from daharness.core.registry import family
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.families.interactive.release_run import evaluate_entry, is_release_code
from daharness.families.interactive.run import (
    HistoryFirst,
    agent_record,
    code_options,
    record_of,
    reference_record,
)
from daharness.families.interactive.scorers.choice import LETTERS
from daharness.families.interactive.scorers.code import INTERACTIVE_MODES, extract_code
from daharness.families.interactive.scorers.record import read_record
from daharness.report.bars import svg_bars
from daharness.report.html import card
from daharness.report.html import pct as pct_html
from daharness.report.terminal import pct

MODES = ("normal", "action", "private", "private_action")
MODE_TITLES = {"normal": "Normal", "action": "Action", "private": "Private", "private_action": "Pri-Act"}


@family("interactive", order=30)
class InteractiveFamily(FamilyBase):
    """Tapilot-Crossing: Acc and AccR by mode and answer type, by action type and result type."""

    title = "interactive (Tapilot-Crossing)"
    modes = INTERACTIVE_MODES
    mode_help = "Interactive (Tapilot-Crossing) scoring: 'corrected' or 'official' (released rules)."
    suite_dir = Path(__file__).parent / "suite"
    format_options = (
        FormatOption(
            "files",
            "tapilot: suites: the official files to run, comma-separated (e.g. normal,action_una).",
            kind="text",
            variant=True,
        ),
        FormatOption(
            "cse_url",
            "tapilot: suites: an OpenAI-compatible embeddings endpoint for CSE / AccSE (paper, H.5).",
            kind="text",
            flag="--tapilot-cse-url",
            variant=True,
        ),
        FormatOption(
            "cse_models",
            "tapilot: suites: CSE's two embedding models, CodeT5+ then Ada, comma-separated.",
            kind="text",
            flag="--tapilot-cse-models",
            variant=True,
        ),
        FormatOption(
            "timeout_s",
            "tapilot: suites: seconds each script of an entry's evaluation may run (the release's 30).",
            kind="text",
            flag="--tapilot-timeout",
            variant=True,
        ),
    )

    # ---- around the agent ---------------------------------------------------------------------------

    def prepare(self, task: Task, env: SampleEnvironment) -> SandboxBackend:
        return HistoryFirst(task, env.sandbox)  # the history runs when the agent first uses its sandbox

    def finish(self, task: Task, env: SampleEnvironment, submission: Submission) -> None:
        if is_release_code(task):  # an official file's entry: the release's own evaluation, sandboxed
            submission.evidence["tapilot"] = evaluate_entry(task, submission.answer, env.open_fresh)
            return
        options = code_options(task)
        if options is None:
            return
        reference = reference_record(task, options, env.open_fresh)
        code = extract_code(submission.answer)
        agent = agent_record(task, options, code, env.open_fresh, env.scratch / "interactive")
        submission.evidence["interactive"] = {"code": code, "reference": reference, "agent": agent}
        submission.suspicions += [
            Suspicion(kind="call_record_tampering", detail=f"the final answer's code {reason}")
            for reason in agent.get("tampering", [])
        ]

    # ---- validate: wrong versions of the reference's answer ----------------------------------------

    def damaged(
        self, task: Task, submission: Submission, open_fresh: OpenFresh, scratch: Path
    ) -> Iterator[tuple[str, Submission]]:
        if is_release_code(task):
            evidence = {"code": "", "missing": "missing response or eval_metrics"}
            yield "an empty reply", _with_evidence(replace(submission, answers=[""]), evidence, "tapilot")
            return
        options = code_options(task)
        if options is None:
            right = task.gold.choice or "A"
            choices = len(task.answer_format.names) or 2
            wrong = LETTERS[(LETTERS.index(right) + 1) % choices]
            yield f"answer {wrong} instead of {right}", replace(submission, answers=[f"Answer: {wrong}"])
            return
        evidence = submission.evidence["interactive"]
        record = read_record(evidence["agent"])  # validate's reference solution: the suite's code
        changed = copy.deepcopy(record)
        label = _change_a_value(changed["results"])
        if label:
            yield label, _with_record(submission, changed, scratch / "changed")
        dropped = copy.deepcopy(record)
        last = options.intents[-1]
        dropped["results"][-1] = {"type": last.type, "missing": "dropped by validate", "png": None}
        yield (
            f"drop the {last.type} intent {last.label()}",
            _with_record(submission, dropped, scratch / "dropped"),
        )
        if options.library and options.reference_calls:
            plain = {**copy.deepcopy(record), "private_calls": []}
            without = _with_record(submission, plain, scratch / "plain")
            without.evidence["interactive"]["code"] = ""
            yield "the same results without the private library", without
        for decoy in task.gold.data.get("decoys", []):
            decoy_record = record_of(task, options, decoy["code"], open_fresh)
            wrong = {**evidence, "code": decoy["code"], "agent": decoy_record}
            yield decoy["label"], _with_evidence(replace(submission, answers=[decoy["code"]]), wrong)

    # ---- report --------------------------------------------------------------------------------------

    def figures(self, records: list[SampleRecord]) -> dict[str, Any] | None:
        rows = [
            _row(r) for r in records if r.status == "scored" and r.score is not None and not r.score.excluded
        ]
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
            "intent_weighted_acc": round(
                sum((len(r["intents"]) or 1) * r["acc"] for r in rows) / weighted, 4
            ),
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
                {"release": _release_figures(released)}
                if (released := [r for r in rows if r["release"]])
                else {}
            ),
            "counts": {
                "samples": len(rows),
                "code": sum(r["answer_type"] == "code" for r in rows),
                "choice": sum(r["answer_type"] == "choice" for r in rows),
                "intents": len(intents),
            },
        }

    def print_figures(self, console: Any, figures: dict[str, Any], title: str) -> None:
        if "release" in figures:
            _print_release(console, figures["release"], title)
        table3 = Table(title=f"{title} · Table 3 layout", title_justify="left")
        table3.add_column("")
        columns = [*MODES, "code", "choice", "overall"]
        for column in columns:
            table3.add_column(MODE_TITLES.get(column, column.capitalize()), justify="right")
        for metric, label in (("acc", "Acc"), ("accr", "AccR")):
            table3.add_row(label, *(pct(figures["table3"][metric][c]) for c in columns))
        console.print(table3)
        apart = Table(title="by mode and answer type (Acc / AccR, samples)", title_justify="left")
        for column in ("mode", "code generation", "multiple choice"):
            apart.add_column(column)
        for mode, groups in figures["by_mode"].items():
            apart.add_row(MODE_TITLES[mode], *(_cell(groups[answer]) for answer in ("code", "choice")))
        console.print(apart)
        breakdown = Table(show_header=True, title_justify="left")
        for column in ("breakdown", "group", "Acc", "n"):
            breakdown.add_column(column)
        for action, group in figures["by_action"].items():
            breakdown.add_row("action type", action, pct(group["acc"]), str(group["n"]))
        for kind, group in figures["by_result_type"].items():
            breakdown.add_row("result type (intents)", kind, pct(group["acc"]), str(group["intents"]))
        console.print(breakdown)
        clarification = figures["clarification"]
        console.print(
            f"intent-weighted Acc {pct(figures['intent_weighted_acc'])} · ambiguous replies "
            f"{figures['ambiguous_replies']} · clarification turns "
            f"{clarification['turns']}: asked in {clarification['asked']}, answered in {clarification['answered']} "
            f"(Acc asked {pct(clarification['acc_asked'])}, not asked {pct(clarification['acc_not_asked'])}); "
            f"questions in all turns {clarification['questions_in_all_turns']}"
        )

    def html(self, figures: dict[str, Any]) -> str:
        overall = figures["table3"]
        cards = "".join(
            card(label, pct_html(overall[metric][column]))
            for label, metric, column in (
                ("Acc", "acc", "overall"),
                ("AccR", "accr", "overall"),
                ("Acc code generation", "acc", "code"),
                ("Acc multiple choice", "acc", "choice"),
            )
        )
        if cse := figures.get("release", {}).get("cse"):  # the paper's soft metric, when it was computed
            cards += card("AccSE (CSE)", pct_html(cse["accse"])) + card("AccSER", pct_html(cse["accser"]))
        columns = [*MODES, "code", "choice", "overall"]
        header = "".join(f"<th>{MODE_TITLES.get(c, c.capitalize())}</th>" for c in columns)
        body = "".join(
            f"<tr><td>{label}</td>"
            + "".join(f"<td>{pct_html(overall[metric][c])}</td>" for c in columns)
            + "</tr>"
            for metric, label in (("acc", "Acc"), ("accr", "AccR"))
        )
        clarification = figures["clarification"]
        return (
            f'<div class="cards">{cards}</div><table><tr><th></th>{header}</tr>{body}</table>'
            f"<p>Clarification turns: {clarification['turns']}, the agent asked in {clarification['asked']} and "
            f'got an answer in {clarification["answered"]}.</p><div class="charts">'
            f"<figure>{svg_bars({k: v['acc'] or 0.0 for k, v in figures['by_action'].items()}, 'Acc by action type', True, 'Acc')}</figure>"
            f"<figure>{svg_bars({k: v['acc'] or 0.0 for k, v in figures['by_result_type'].items()}, 'Acc by result type (intents)', True, 'Acc')}</figure></div>"
        )


# ---- helpers ------------------------------------------------------------------------------------------


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


def _print_release(console: Any, release: dict[str, Any], title: str) -> None:
    table = Table(
        title=f"{title} · official files (intents, as the release counts them)", title_justify="left"
    )
    for column in ("file", "correct", "total", "accuracy"):
        table.add_column(column, justify="left" if column == "file" else "right")
    for name, figure in [*release["by_file"].items(), ("overall", release["overall"])]:
        table.add_row(name, str(figure["correct"]), str(figure["total"]), pct(figure["accuracy"]))
    console.print(table)
    groups = Table(title="official files by domain and result type (Acc over entries)", title_justify="left")
    for column in ("breakdown", "group", "Acc", "n"):
        groups.add_column(column)
    for label, key in (("domain", "by_domain"), ("result type", "by_result_type")):
        for name, group in release[key].items():
            groups.add_row(label, name, pct(group["acc"]), str(group["n"]))
    console.print(groups)
    if cse := release.get("cse"):
        console.print(
            f"CSE (code entries, {cse['n']} scored, {cse['failed']} without embeddings): AccSE {pct(cse['accse'])}"
            f" · AccSER {pct(cse['accser'])} · mean S1 (CodeT5+) {cse['s1']} · mean S2 (Ada) {cse['s2']}"
        )


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _group(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"n": len(rows), "acc": _mean([r["acc"] for r in rows]), "accr": _mean([r["accr"] for r in rows])}


def _cell(group: dict[str, Any]) -> str:
    if not group["n"]:
        return "—"
    return f"{pct(group['acc'])} / {pct(group['accr'])} ({group['n']})"


def _with_evidence(submission: Submission, evidence: dict[str, Any], key: str = "interactive") -> Submission:
    return replace(submission, evidence={**submission.evidence, key: evidence})


def _with_record(submission: Submission, record: dict[str, Any], folder: Path) -> Submission:
    """The submission with `record` (a changed copy of the agent's) as the agent's raw record."""
    folder.mkdir(parents=True, exist_ok=True)
    results = [
        {k: v for k, v in result.items() if k not in ("png", "capture")} for result in record["results"]
    ]
    (folder / "results.json").write_text(json.dumps({"results": results}), encoding="utf-8")
    plots = [
        {key: result[key] for key in ("png", "capture", "missing") if key in result}
        if "png" in result
        else None
        for result in record["results"]
    ]
    raw = {
        "error": None,
        "file": folder / "results.json",
        "plots": plots,
        "private_calls": record["private_calls"],
        "tampering": record.get("tampering", []),
    }
    evidence = {**submission.evidence["interactive"], "agent": raw}
    return _with_evidence(submission, evidence)


def _damage(value: Any, kind: type) -> tuple[Any, bool]:
    """The first number (kind float: moved by 5%, 0 becomes 1) or text (kind str: marked as changed)
    inside a tagged value; (value, whether one was found)."""
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return (value * 1.05 + (1 if value == 0 else 0)), True
    if kind is str and isinstance(value, str):
        return value + " (changed)", True
    if isinstance(value, list):
        for i, item in enumerate(value):
            damaged, found = _damage(item, kind)
            if found:
                return [*value[:i], damaged, *value[i + 1 :]], True
    if isinstance(value, dict):
        for key in ("data", "values", "list", "tuple", "set", "dict", "array", "dataframe", "series"):
            if key in value:
                damaged, found = _damage(value[key], kind)
                if found:
                    return {**value, key: damaged}, True
    return value, False


def _change_a_value(results: list[dict[str, Any]]) -> str | None:
    """Change one number (else one text) of the first data result that has one; the mutation's name."""
    for kind, what in ((float, "a number"), (str, "a text")):
        for result in results:
            if "value" in result:
                result["value"], found = _damage(result["value"], kind)
                if found:
                    return f"change {what} of the {result['type']} result"
    return None
