"""A run set: the runs one command makes of several suites, agents or models (`run --suite a,b --model
x,y`), one run folder each under the set's folder, which holds `set.json` (the runs it is made of, how
they were asked for) and, once the runs have ended, `summary.json`. The same command resumes the set:
every run folder is reopened, so an unfinished run goes on where it stopped and a finished one is only
reported again."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from daharness.core.errors import UserError, first_problem
from daharness.core.jsonl import read_json
from daharness.core.runlog import file_safe
from daharness.runs.rundir import RUN_FILE, write_atomic
from daharness.runs.runner import RUNS_ROOT

SET_FILE = "set.json"
SUMMARY_FILE = "summary.json"
SET_SUFFIX = "-set"
SET_FORMAT_VERSION = 1


class SetMember(BaseModel):
    """One run of a set: its folder (under the set's) and what it runs."""

    model_config = ConfigDict(extra="forbid")

    dir: str
    suite: str = Field(description="As the command named it: a built-in name or FORMAT:PATH.")
    agent: str
    model: str | None = Field(default=None, description="None for an agent that asks no model.")

    def what(self) -> tuple[str, str, str | None]:
        return self.suite, self.agent, self.model


class RunSetFile(BaseModel):
    """`set.json`."""

    model_config = ConfigDict(extra="allow")

    format_version: int = SET_FORMAT_VERSION
    created_at: str | None = None
    command: list[str] = Field(default_factory=list)
    runs: list[SetMember]


def members(runs: list[tuple[str, str, str | None]]) -> list[SetMember]:
    """The set's runs (suite, agent, model), each with a folder name of its own: `<suite>-<agent>-<model>`
    with anything but letters, digits, `-`, `_` and `.` as `_` (`dabench_q.jsonl-react-gpt-4o`)."""
    found: list[SetMember] = []
    taken: set[str] = set()
    for suite, agent, model in runs:
        base = "-".join(_safe(part) for part in (suite.rsplit("/", 1)[-1], agent, model) if part)
        name, counter = base, 2
        while name in taken:
            name, counter = f"{base}.{counter}", counter + 1
        taken.add(name)
        found.append(SetMember(dir=name, suite=suite, agent=agent, model=model))
    return found


def _safe(text: str) -> str:
    # a folder name of its own: never `.`, `..` or hidden
    return file_safe(text).strip(".") or "_"


def read_set(folder: Path) -> RunSetFile | None:
    """The set in `folder`, or None when it holds no set.json."""
    path = folder / SET_FILE
    if not path.is_file():
        return None
    try:
        return RunSetFile.model_validate(read_json(path))
    except ValidationError as exc:
        raise UserError(f"{path}: {first_problem(exc)}") from None


# the state of each run of a set in a folder: `runner.resume_state` of its run folder
StatesIn = Callable[[Path], list[tuple[str, str | None]]]


def choose_set_dir(
    out: Path | None, runs: list[SetMember], states_in: StatesIn, root: Path = RUNS_ROOT
) -> Path:
    """The set's folder: `out`, refused (one line) when it holds anything but this set or an empty folder,
    or a run of it that cannot be resumed; without `out`, the newest set under `root` of the same runs
    that can go on and is not finished, else a new `<root>/<timestamp>-set`."""
    if out is not None:
        _check_out(out, runs, states_in)
        return out
    for candidate in sorted(root.glob(f"*{SET_SUFFIX}"), reverse=True):
        try:
            found = read_set(candidate)
        except UserError:
            continue
        if found is None or [m.what() for m in found.runs] != [m.what() for m in runs]:
            continue
        states = [state for state, _ in states_in(candidate)]
        if "conflict" not in states and set(states) != {"finished"}:
            return candidate
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    candidate, counter = root / f"{stamp}{SET_SUFFIX}", 2
    while candidate.exists():
        candidate, counter = root / f"{stamp}.{counter}{SET_SUFFIX}", counter + 1
    return candidate


def _check_out(out: Path, runs: list[SetMember], states_in: StatesIn) -> None:
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: not a folder; choose another --out")
    found = read_set(out)
    if found is None:
        if (out / RUN_FILE).is_file():
            raise UserError(f"{out}: holds a single run, not a run set; choose another --out")
        if out.exists() and any(out.iterdir()):
            raise UserError(
                f"{out}: folder exists, is not empty and holds no {SET_FILE}; choose another --out"
            )
        return
    if [m.what() for m in found.runs] != [m.what() for m in runs]:
        held = ", ".join(" · ".join(part or "no model" for part in m.what()) for m in found.runs)
        raise UserError(f"{out / SET_FILE}: this folder holds another run set ({held}); choose another --out")
    for member, (state, why) in zip(runs, states_in(out), strict=True):
        if state == "conflict":
            raise UserError(
                f"{out / member.dir}: this folder holds a different run ({why}); resume with the same "
                "settings or choose another --out"
            )


def write_set(folder: Path, runs: list[SetMember]) -> None:
    """set.json, written when the set is made (a resumed set keeps its own)."""
    if (folder / SET_FILE).is_file():
        return
    made = RunSetFile(created_at=datetime.now(UTC).isoformat(timespec="seconds"), command=sys.argv, runs=runs)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / SET_FILE, made.model_dump_json(indent=2))
    except OSError as exc:
        raise UserError(f"{folder}: cannot write the run set ({exc.strerror or exc})") from None


def set_run_dirs(folder: Path) -> list[Path] | None:
    """The run folders of the set in `folder` that hold a run, in the set's order; None: not a set."""
    found = read_set(folder)
    if found is None:
        return None
    return [folder / member.dir for member in found.runs if (folder / member.dir / RUN_FILE).is_file()]


def with_set_runs(paths: list[Path]) -> tuple[list[Path], bool]:
    """The run folders named: each run set's folder replaced by its runs; and whether any was a set."""
    found: list[Path] = []
    sets = False
    for path in paths:
        members = set_run_dirs(path)
        sets = sets or members is not None
        found += [path] if members is None else members
    return found, sets
