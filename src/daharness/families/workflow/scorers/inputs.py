"""What Spider2-V evaluator functions share: where their result and expected values come from, and how an
error inside an evaluator becomes a 0 with its reason (as the official evaluator treats it).

A task's evaluator names, per function, a `result` and an `expected` source:
`file` (a file the agent left, by its path in the task's home), `first_file` (the first of several such
paths that exists: the official `dbt_profiles` getter), `script_output` (what a check script
printed after the agent, gathered by the workflow family into `submission.evidence`), `screen` (what a
getter read on the sample's desktop right after the agent, e.g. the active browser tab),
`cloud` (what a BigQuery or Snowflake getter read from the account after the agent:
`families/workflow/cloud/getters.py`), `validate_correct_url` and `html_check` (the official getters that join a check script's output with the
browser: `families/workflow/getters.py`; their mode is the scorer's, corrected when it has none),
`superset_localhost_page` (Superset's home page among the browser's tabs, `getters.py`), `gold`
(a hidden file of the task), `rule` (a value written in the task) or `none`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from daharness.core.score import Check, Score
from daharness.core.scoring import GoldMissing, ScorerOptions, ScoringContext
from daharness.families.workflow import getters

SCRIPT_OUTPUTS = "script_outputs"  # submission.evidence key: script path in the home -> its stdout
SCREEN_STATES = "screen_states"  # submission.evidence key: getter name (active_tab_info) -> what it read
PAGE_CHECKS = "page_checks"  # submission.evidence key: html_check script path -> what the live check found
# submission.evidence key: the last action the desktop agent's loop ran, as the release's DesktopEnv keeps it
# in its action_history (pyautogui code, "WAIT" / "DONE" / "FAIL", or a computer_13 JSON action)
LAST_ACTION = "last_action"
FAIL = "FAIL"
CLOUD_RESULTS = (
    "cloud_results"  # submission.evidence key: a cloud getter's key -> what it gave (cloud/getters.py)
)


class Source(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal[
        "file", "first_file", "script_output", "screen", "validate_correct_url", "html_check",
        "superset_localhost_page", "gold", "rule", "cloud", "none",
    ]  # fmt: skip
    # file / script_output / validate_correct_url / html_check: a path in the task's home (of the check
    # script for the last three); gold: the gold file's name
    path: str | None = None
    paths: list[str] = []  # first_file: paths in the task's home, in the order they are looked for
    # rule: the rule as the task writes it; validate_correct_url: {"goto_prefix"}; html_check: {"css_paths",
    # "timeout" (ms)}
    value: Any = None

    def live_needs(self) -> LiveNeeds:
        """What this source reads of the live sandbox after the agent, which the family's `finish`
        collects into the evidence (nothing for files, gold and rules: they are read from the snapshot)."""
        config = self.value if isinstance(self.value, dict) else {}
        path = str(self.path)
        if self.kind == "screen":
            return LiveNeeds(screen=frozenset({path}))
        if self.kind == "validate_correct_url":
            return LiveNeeds(screen=frozenset({getters.TAB_URL}))
        if self.kind == getters.SUPERSET_PAGE:
            page = config or getters.SUPERSET_DEFAULTS
            return LiveNeeds(superset_page=(str(page["url"]), str(page["title"])))
        if self.kind == "html_check":
            css_paths = tuple(str(css) for css in config.get("css_paths", []))
            return LiveNeeds(page_checks={path: PageCheckNeed(css_paths, float(config.get("timeout", 5000)))})
        if self.kind == "file" and config.get("made_by_checks"):
            return LiveNeeds(made_by_checks=(path,))
        return LiveNeeds()


@dataclass(frozen=True)
class PageCheckNeed:
    """An `html_check`: the CSS paths that must show on the page its script prints, each awaited for
    `timeout_ms`."""

    css_paths: tuple[str, ...]
    timeout_ms: float


@dataclass(frozen=True)
class LiveNeeds:
    """What a task's evaluators read of the live sandbox after the agent: the screen states (getter names:
    `active_tab_info`, `active_tab_url`), Superset's home page among the browser's tabs (url, title), the
    page checks (check script path -> its check), and the files the check scripts make (an agent's copy is
    cleared before they run)."""

    screen: frozenset[str] = frozenset()
    superset_page: tuple[str, str] | None = None
    page_checks: Mapping[str, PageCheckNeed] = field(default_factory=dict)
    made_by_checks: tuple[str, ...] = ()

    def __or__(self, other: LiveNeeds) -> LiveNeeds:
        return LiveNeeds(
            screen=self.screen | other.screen,
            superset_page=self.superset_page or other.superset_page,
            page_checks={**self.page_checks, **other.page_checks},
            made_by_checks=self.made_by_checks + other.made_by_checks,
        )


class EvaluatorOptions(ScorerOptions):
    """Options every Spider2-V evaluator function takes, besides its own."""

    result: Source = Source(kind="none")
    expected: Source = Source(kind="none")

    def live_needs(self) -> LiveNeeds:
        return self.result.live_needs() | self.expected.live_needs()


class MissingInput(Exception):
    """The agent left no file, or the check script gave no output: the function scores 0."""


def read_source(context: ScoringContext, source: Source) -> Any:
    """The value a source names: a host Path for files, the output text of a script, a rule's value."""
    if source.kind == "file":
        found = context.output(source.path)
        if found is None:
            raise MissingInput(f"no file {source.path} in the home folder")
        return found
    if source.kind == "first_file":
        for path in source.paths:
            if (found := context.output(path)) is not None:
                return found
        raise MissingInput(f"none of {', '.join(source.paths)} in the home folder")
    if source.kind == "script_output":
        return _script_output(context, source.path)
    if source.kind == "validate_correct_url":
        output = _script_output(context, source.path)
        tab = context.submission.evidence.get(SCREEN_STATES, {}).get(getters.TAB_URL)
        if tab is None:
            raise MissingInput("the browser showed no tab (no desktop, or no browser)")
        prefix = str((source.value or {}).get("goto_prefix", "https://"))
        return getters.validate_correct_url(
            output, str(tab["url"]), prefix, corrected=context.mode != "compat"
        )
    if source.kind == "html_check":
        live = context.submission.evidence.get(PAGE_CHECKS, {}).get(source.path)
        checked = context.submission.evidence.get(SCRIPT_OUTPUTS, {}).get(source.path)
        return getters.html_check(live, checked, corrected=context.mode != "compat")
    if source.kind == getters.SUPERSET_PAGE:  # {"url", "title"}: read on the live screen (getters.py)
        found = context.submission.evidence.get(SCREEN_STATES, {}).get(getters.SUPERSET_PAGE)
        return getters.superset_localhost_page(found, corrected=context.mode != "compat")
    if source.kind == "screen":
        states = context.submission.evidence.get(SCREEN_STATES, {})
        if states.get(source.path) is None:
            raise MissingInput(f"the screen had no {source.path} (no desktop, or nothing was open)")
        return states[source.path]
    if source.kind == "cloud":  # None: the getter found nothing (a missing table), as the release's
        found = context.submission.evidence.get(CLOUD_RESULTS, {}).get(source.path)
        if found is None:
            raise MissingInput(f"the cloud getter {source.path} found nothing (or did not run)")
        return found
    if source.kind == "gold":
        return context.gold(str(source.path))
    if source.kind == "rule":
        return source.value
    return None


def _script_output(context: ScoringContext, path: str | None) -> str:
    outputs = context.submission.evidence.get(SCRIPT_OUTPUTS, {})
    if path not in outputs:
        raise MissingInput(f"the check script {path} gave no output")
    return outputs[path]


def evaluate(
    context: ScoringContext, options: EvaluatorOptions, metric: Callable[[Any, Any], tuple[float, str]]
) -> Score:
    """Run `metric(result, expected) -> (value, why)`; a missing input or an error inside it scores 0."""
    name = type(options).__name__.removesuffix("Options")
    if gave_up(context):  # DesktopEnv.evaluate: a task that can be done, given up on, scores 0
        why = "the agent's last action was FAIL, and the task can be done"
        return Score(value=0.0, explanation=why, checks=[Check(name=name, passed=False, explanation=why)])
    try:
        result = read_source(context, options.result)
        expected = read_source(context, options.expected)
        value, why = metric(result, expected)
    except GoldMissing:
        raise  # the benchmark's fault, not the agent's: an error of the harness
    except MissingInput as exc:
        return Score(
            value=0.0, explanation=str(exc), checks=[Check(name=name, passed=False, explanation=str(exc))]
        )
    except Exception as exc:  # the official evaluator scores a crash in a metric as 0
        why = f"evaluator error: {type(exc).__name__}: {exc}"
        return Score(value=0.0, explanation=why, checks=[Check(name=name, passed=False, explanation=why)])
    value = float(value)
    return Score(
        value=value, explanation=why, checks=[Check(name=name, passed=value >= 1.0, explanation=why)]
    )


def gave_up(context: ScoringContext) -> bool:
    """Whether the agent's last action was FAIL, as the release's `DesktopEnv.evaluate` decides it: the
    last action is the string FAIL (a computer_13 `{"action_type": "FAIL"}` is not, officially; the desktop
    agent's corrected mode records it as FAIL)."""
    return context.submission.evidence.get(LAST_ACTION) == FAIL


def text_of(value: Any, errors: str = "replace") -> str:
    """A result as text: a file's content (bytes that are not UTF-8 handled by `errors`, as in `open`), or a
    script's output as it is."""
    if isinstance(value, Path):
        return value.read_text(encoding="utf-8", errors=errors)
    return "" if value is None else str(value)
