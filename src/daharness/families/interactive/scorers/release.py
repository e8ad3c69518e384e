"""Scoring the official Tapilot-Crossing files (`tapilot:` suites): the `tapilot_choice` and `tapilot_code`
scorers and the release evaluator's reading rules, written here after `evaluate.py` of the release.

Multiple choice: the right letter is the reference answer's `"correct_answer": "X"` (none found: every
reply is wrong, as released); the reply's letter is read by `read_choice_official` (the release's
`extract_model_answer`) in `official` mode, and by the family's corrected reading otherwise (options
parsed from the query where it lists them as `A. ...`).

Code generation: the family's hook (`release_run.py`) runs, in a fresh sandbox, the entry's reference
code, then its history and the reply's code (`extract_release_code`), then the entry's own
`eval_metrics`, and keeps what each step did. The printed lines of `eval_metrics` decide: `official`
mode judges them as released (every line `True` or a number above 0.6; no line, a failing step or a
timeout: wrong; an entry counts once per intent, all or nothing). `corrected` mode differs where the
release is unsound (the family's README lists each difference): `nan` is not above 0.6; a reference
that fails is the benchmark's fault, not the agent's; predicted code that changed the reference's
results is wrong; an entry whose output has one line per intent gets credit per intent.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from pydantic import Field

from daharness.core.registry import scorer
from daharness.core.score import Check, Score
from daharness.core.scoring import GoldProblem, ScorerOptions, ScoringContext
from daharness.families.interactive.cse import CseSettings, acc_se, similarities
from daharness.families.interactive.scorers.choice import read_choice, read_choice_official
from daharness.families.interactive.scorers.code import INTERACTIVE_MODES, turn_details
from daharness.families.interactive.scorers.private import called_functions, recall

_CORRECT = (re.compile(r'"correct_answer":\s*"([A-J])"'), re.compile(r'"correct_answer":\s*([A-J])'))
_BLOCK = re.compile(r"```(?:python)?\s*\n(.*?)```", re.DOTALL)
_OPTION_LINE = re.compile(r"^\s*\(?([A-J])[.)]\s+(.+?)\s*$", re.MULTILINE)
THRESHOLD = 0.6  # a printed number passes above it (the release's SSIM-style scores)


def correct_letter(reference_answer: str) -> str:
    """The right letter in a reference answer, '' when it names none (released: `parse_correct_answer`)."""
    for pattern in _CORRECT:
        if match := pattern.search(reference_answer):
            return match.group(1).upper()
    return ""


def extract_release_code(response: str) -> str:
    """The code of a reply as the release reads it: the longest ```/```python block; else, from the first
    'import ' on (a trailing fence cut); else the whole reply."""
    blocks = _BLOCK.findall(response)
    if blocks:
        return str(max(blocks, key=len))
    if "import " in response:
        code = response[response.find("import ") :]
        code = re.sub(r"```\s*$", "", code)
        return re.sub(r"'''\s*$", "", code)
    return response


def query_options(query: str) -> list[str]:
    """Option texts a query lists as `A. text` lines, A first and without gaps; [] when it does not."""
    found: dict[str, str] = {}
    for letter, text in _OPTION_LINE.findall(query):
        found.setdefault(letter, text)
    letters = "ABCDEFGHIJ"[: len(found)]
    return [found[letter] for letter in letters] if set(found) == set(letters) and len(found) >= 2 else []


def judge_lines(output: str, mode: str) -> list[bool]:
    """Each printed line of eval_metrics: `True` passes, `False` fails, a number passes above 0.6, any other
    line fails. `official` takes float() as released (so `nan` and `inf` pass); corrected wants a finite
    number."""
    verdicts = []
    for line in output.strip().split("\n"):
        line = line.strip()
        if line in ("True", "False"):
            verdicts.append(line == "True")
            continue
        try:
            value = float(line)
        except ValueError:
            verdicts.append(False)
            continue
        if mode == "official":
            verdicts.append(not value <= THRESHOLD)  # released: fails only when <= 0.6 (nan passes)
        else:
            verdicts.append(math.isfinite(value) and value > THRESHOLD)
    return verdicts


def with_history_imports(history: str, code: str) -> str:
    """`code` after the import statements of the history it runs after (their names are bound there)."""
    try:
        tree = ast.parse(history)
    except (SyntaxError, ValueError):
        return code
    imports = [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]
    return "\n".join([*imports, code])


class TapilotChoiceOptions(ScorerOptions):
    answer: str = Field(pattern=r"^[A-J]?$", description="The right letter; '' when the entry names none.")
    choices: list[str] = Field(default_factory=list, description="Option texts found in the query.")
    intents: int = Field(default=1, ge=1)


@scorer("tapilot_choice", options=TapilotChoiceOptions, modes=INTERACTIVE_MODES)
def tapilot_choice(context: ScoringContext, options: TapilotChoiceOptions) -> Score:
    """A multiple-choice entry of the official files: the reply's letter is the reference's."""
    reply = context.submission.answer or ""
    if context.mode == "official":
        reading = read_choice_official(reply)
    else:
        reading = read_choice(reply, options.choices)
    right = bool(options.answer) and reading.letter == options.answer
    if not options.answer:
        explanation = "the reference answer names no correct letter"
    elif reading.ambiguous:
        explanation = f"ambiguous reply: it names {', '.join(reading.candidates)}"
    else:
        explanation = f"picked {reading.letter or 'nothing'} ({reading.how}), the answer is {options.answer}"
    details = {
        **turn_details(context), "answer_type": "choice", "expected": options.answer,
        "picked": reading.letter, "how": reading.how, "ambiguous": reading.ambiguous,
        "acc": float(right), "accr": float(right),
        # the release counts a multiple-choice entry once, whatever its result_type lists
        "release": _release(context, 1 if context.mode == "official" else options.intents, right),
        "intents": [{"type": "multi_choice", "right": right}],
    }  # fmt: skip
    return Score(
        value=float(right),
        explanation=explanation,
        checks=[Check(name="choice", passed=right, explanation=explanation)],
        details=details,
    )


class TapilotCodeOptions(ScorerOptions):
    result_types: list[str] = Field(min_length=1, description="The entry's intents (its result_type).")
    library: str | None = Field(default=None, description="Private files: the library's import name.")
    library_functions: list[str] = Field(default_factory=list)
    reference_calls: list[str] = Field(default_factory=list, description="Its functions the reference calls.")
    cse: CseSettings | None = Field(default=None, description="The embedding models of CSE / AccSE (cse.py).")


def _step_failure(step: dict[str, Any] | None, name: str) -> str | None:
    if step is None:
        return None
    if step.get("timed_out"):
        return f"{name} timeout"
    if not step.get("ok"):
        return f"{name} failed: {str(step.get('stderr', ''))[:200]}"
    return None


def code_verdict(evidence: dict[str, Any], mode: str, intents: int) -> tuple[list[bool], str]:
    """Per intent, whether the entry's code passes, and why not (released rules in `official` mode)."""
    if evidence.get("missing"):
        return [False] * intents, str(evidence["missing"])
    reference = _step_failure(evidence.get("ref"), "ref")
    if reference is not None:
        if mode != "official":
            raise GoldProblem(f"the entry's reference code does not run: {reference}")
        return [False] * intents, reference
    for name in ("pred", "eval"):
        if (why := _step_failure(evidence.get(name), name)) is not None:
            return [False] * intents, why
    if mode != "official" and evidence.get("reference_results_changed"):
        return [False] * intents, "the predicted code changed the reference's results (ref_result/)"
    output = str(evidence["eval"].get("stdout", "")).strip()
    if not output:
        return [False] * intents, "no eval output"
    lines = judge_lines(output, mode)
    if mode != "official" and len(lines) == intents > 1:
        return lines, "" if all(lines) else f"eval output: {output[:200]}"
    passed = all(lines)
    return [passed] * intents, "" if passed else f"eval output: {output[:200]}"


@scorer("tapilot_code", options=TapilotCodeOptions, modes=INTERACTIVE_MODES)
def tapilot_code(context: ScoringContext, options: TapilotCodeOptions) -> Score:
    """A code-generation entry of the official files: its own eval_metrics, run after the reference and the
    reply's code, prints lines that must all pass."""
    evidence = context.submission.evidence.get("tapilot")
    intents = len(options.result_types)
    if evidence is None:
        verdicts, reason = [False] * intents, "no execution evidence (the family's hook did not run)"
    else:
        verdicts, reason = code_verdict(evidence, context.mode, intents)
    acc = float(all(verdicts))
    explanation = reason or f"all {intents} intents pass"
    accr, private = acc, {}
    if options.library:  # AccR as the paper: Acc x recall of the reference's library calls (syntax tree)
        history = str(context.task.gold.data.get("release", {}).get("ref_code_hist", ""))
        code = with_history_imports(history, str((evidence or {}).get("code", "")))
        used = called_functions(code, options.library, options.library_functions)
        share = recall(set(options.reference_calls), used)
        accr, private = acc * share, {"recall": round(share, 4), "agent_calls": sorted(used)}
    if options.cse is not None:
        reference = str(context.task.gold.data.get("release", {}).get("reference_answer", ""))
        share = float(private.get("recall", 1.0))
        private["cse"] = _soft_metric(
            reference, str((evidence or {}).get("code", "")), acc == 1.0, share, options.cse
        )
    details = {
        **turn_details(context), "answer_type": "code", "acc": acc, "accr": accr, **private,
        "intents": [{"type": kind, "right": right} for kind, right in zip(options.result_types, verdicts, strict=True)],
        "release": _release(context, intents, acc == 1.0, sum(verdicts)),
        "eval_output": str(((evidence or {}).get("eval") or {}).get("stdout", ""))[:2000],
        "code": str((evidence or {}).get("code", ""))[:20000],  # the reply's code as run (the viewer shows it)
    }  # fmt: skip
    checks = [
        Check(name=f"intent {i + 1} ({kind})", passed=right, explanation="" if right else reason)
        for i, (kind, right) in enumerate(zip(options.result_types, verdicts, strict=True))
    ]
    return Score(value=acc, explanation=explanation, checks=checks, details=details)


def _soft_metric(
    reference: str, code: str, passed: bool, recall: float, settings: CseSettings
) -> dict[str, Any]:
    """CSE's two similarities, AccSE and AccSER (Appendix H.5); an endpoint that fails leaves the figure out."""
    from openai import OpenAIError

    try:
        s1, s2 = similarities(reference, code, settings)
    except OpenAIError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    soft = acc_se(passed, s1, s2)
    return {"s1": s1, "s2": s2, "accse": soft, "accser": round(soft * recall, 6)}


def _release(
    context: ScoringContext, intents: int, passed: bool, credit: int | None = None
) -> dict[str, Any]:
    """The entry as the release counts it: its file, intents, and intents credited."""
    data = context.task.gold.data.get("release", {})
    return {
        "file": data.get("file"),
        "data_id": data.get("data_id"),
        "intents": intents,
        "pass": passed,
        "credit": intents if passed else (credit if credit is not None and context.mode != "official" else 0),
    }
