"""The interactive family (Tapilot-Crossing): multi-turn analysis dialogues over tables.

Around each sample: `prepare` gives the agent a sandbox where the dialogue's earlier code has run (the
agent starts where the conversation is; the history runs when the agent first uses it); `finish` runs
the reference code and the agent's code, each after the same history in a fresh sandbox, and keeps what
each left (unread, `scorers/record.py`) in `submission.evidence["interactive"]` for the
`interactive_code` scorer. Multiple-choice turns
need no execution. `damaged` gives `daharness validate` wrong answers: a changed number or text, a
dropped intent, the same results without the private library, the suite's decoys, a wrong letter.

Report figures (paper Table 3 and Figure 4): `figures.py`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from daharness.core.backend import SandboxBackend
from daharness.core.family import FamilyBase, FormatOption, OpenFresh, SampleEnvironment
from daharness.core.figures import FamilyFigures
from daharness.core.record import SampleRecord, Suspicion
from daharness.core.registry import family
from daharness.core.submission import Submission
from daharness.core.task import Task
from daharness.families.interactive.commands import DialoguesGeneration, ResponseFilesRescoring
from daharness.families.interactive.figures import figure_tables, interactive_figures
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


@family("interactive", order=30)
class InteractiveFamily(FamilyBase):
    """Tapilot-Crossing: Acc and AccR by mode and answer type, by action type and result type."""

    title = "interactive (Tapilot-Crossing)"
    modes = INTERACTIVE_MODES
    mode_help = "Interactive (Tapilot-Crossing) scoring: 'corrected' or 'official' (released rules)."
    suite_dir = Path(__file__).parent / "suite"
    rescoring = ResponseFilesRescoring()
    generation = DialoguesGeneration()
    format_options = (
        FormatOption(
            "files",
            "tapilot: suites: the official files to run, comma-separated (e.g. normal,action_una).",
            kind="text",
            variant=True,
            formats=("tapilot",),
        ),
        FormatOption(
            "cse_url",
            "tapilot: suites: an OpenAI-compatible embeddings endpoint for CSE / AccSE (paper, H.5).",
            kind="text",
            flag="--tapilot-cse-url",
            variant=True,
            formats=("tapilot",),
        ),
        FormatOption(
            "cse_models",
            "tapilot: suites: CSE's two embedding models, CodeT5+ then Ada, comma-separated.",
            kind="text",
            flag="--tapilot-cse-models",
            variant=True,
            formats=("tapilot",),
        ),
        FormatOption(
            "timeout_s",
            "tapilot: suites: seconds each script of an entry's evaluation may run (the release's 30).",
            kind="text",
            flag="--tapilot-timeout",
            variant=True,
            formats=("tapilot",),
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

    def figures(self, records: list[SampleRecord]) -> FamilyFigures | None:
        figures = interactive_figures(records)
        return None if figures is None else figure_tables(figures)


# ---- helpers ------------------------------------------------------------------------------------------


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
