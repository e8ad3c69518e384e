"""Interactive AccR (private-library recall) cannot be forged: answers that compute the result with
pandas alone and make the record of private-library calls say otherwise, by each route an answer
sharing the recorder's process has, score AccR 0 and are flagged; honest answers keep AccR 1. Every
answer runs through the runner, the replay agent and the real bwrap sandbox."""

from __future__ import annotations

import ast
import dis
import json
import re
from pathlib import Path

import pytest
from helpers import latest_records

from daharness.agents import make_agent
from daharness.core.runlog import TrajectoryFile
from daharness.core.suite import Suite
from daharness.core.task import Task
from daharness.runs.runner import run_suite
from daharness.suites import load_suite

PANDAS = 'alcohol_by_cultivar = wine.groupby("cultivar")["alcohol"].mean()\n'
DEAD_CALL = 'from decision_kit import group_summary\nif False:\n    group_summary(wine, "cultivar", "alcohol", "mean")\n'
HONEST = 'from decision_kit import group_summary\nalcohol_by_cultivar = group_summary(wine, "cultivar", "alcohol", "mean")\n'

# Each forging answer: the result from pandas, a call of group_summary that never runs, and one way to
# make the record say it ran. None of them needs the word "daharness".
FORGERIES = {
    # the route: the old probe's record, reached through the profile function or sys.modules
    "profile_record": """
import sys
try:
    sys.getprofile().__globals__["_state"]["calls"].add("group_summary")
except Exception:
    pass
for name, module in list(sys.modules.items()):
    if name.endswith("_probe") and hasattr(module, "_state"):
        module._state["calls"].add("group_summary")
""",
    # a results file whose capture step was replaced so that it names the call itself
    "patched_capture": """
import json, sys
probe = next(module for name, module in sys.modules.items() if name.endswith("_probe"))
def capture(namespace, request):
    value = probe.encode(namespace["alcohol_by_cultivar"])
    with open(request["out"], "w") as handle:
        json.dump({"results": [{"type": "series", "value": value}], "private_calls": ["group_summary"]}, handle)
probe.capture = capture
""",
    # the garbage collector's objects hold every record in the process
    "gc_walk": """
import gc
try:
    for found in gc.get_objects():
        if isinstance(found, dict) and "proofs" in found:
            found["proofs"].clear()
except PermissionError:
    pass
""",
    # the event a library function raises, raised by code made to look like the library's own
    "forged_event": """
import sys
import decision_kit
event = "".join(["da", "harness.recorder.call"])
exec("def group_summary(*args):\\n    __import__('sys').audit(%r)" % event, decision_kit.__dict__)
decision_kit.group_summary(wine)
sys.audit(event)
""",
    # a finaliser that runs inside the recorder (a garbage collection there) sees its frame: the
    # collection is made to fall on one of the first allocations after the call, one offset at a time
    "recorder_frame": """
import gc, sys
seen = []
class Spy:
    def __del__(self):
        caller = sys._getframe(1)
        if "recorder" in repr(caller):
            seen.append(caller)
seal, out = "".join(["da", "harness.recorder.seal"]), []
for offset in range(12):
    gc.collect()
    gc.disable()
    for _ in range(20):
        spy = Spy()
        spy.self = spy
    del spy
    gc.set_threshold(gc.get_count()[0] + offset)
    gc.enable()
    sys.audit(seal, "0", out)
    if seen:
        break
gc.set_threshold(700)
for frame in seen:
    frame.f_locals.get("names")  # a tuple of what ran: nothing to add to
    try:
        frame.f_code.co_consts
    except PermissionError:
        pass
""",
    # the guard's code can be read (its frames reach tracebacks): its table of refusals cannot be changed
    "guard_state": """
import gc
try:
    gc.get_objects()
except PermissionError as refusal:
    trace = refusal.__traceback__
while trace.tb_next is not None:
    trace = trace.tb_next
state = next(const for const in trace.tb_frame.f_code.co_consts if type(const) is tuple and len(const) > 5)
table = next(index for index, entry in enumerate(state) if "gc.get_objects" in getattr(entry, "keys", list)())
for change in (lambda: state[table].clear(), lambda: state.__setitem__(table, {})):
    try:
        change()
    except (AttributeError, TypeError):
        pass
try:
    gc.get_objects()
except PermissionError:
    pass
""",
    # a trace function may rewrite a running frame's locals
    "trace_function": """
import sys
try:
    sys.settrace(lambda frame, event, arg: None)
except PermissionError:
    pass
""",
    # the process's own memory, read through /proc
    "own_memory": """
import os
try:
    open("/proc/%d/mem" % os.getpid(), "rb")
except PermissionError:
    pass
""",
    # what reports the record replaced, with a forged record of its own
    "forged_seal": """
import sys
def audit(event, *args):
    if len(args) == 2 and isinstance(args[1], list):
        args[1].append("calls=group_summary;tampering=;nonce=%s %s" % (args[0], "0" * 64))
sys.audit = audit
""",
}


def _required(signature: str) -> int:
    """How many arguments a library function needs, from the first line of its documented signature."""
    node = ast.parse(signature.splitlines()[0] + "\n    pass").body[0]
    assert isinstance(node, ast.FunctionDef)
    return len(node.args.args) - len(node.args.defaults)


@pytest.fixture(scope="module")
def wine_02() -> Task:
    return next(task for task in load_suite("interactive").tasks if task.id == "wine-02")


def _run(tmp_path: Path, base: Task, answers: dict[str, str]) -> dict:  # type: ignore[type-arg]
    """Each answer as the final answer of its own copy of `base`, replayed in one run (two at a time)."""
    source = tmp_path / "written"
    (source / "trajectories").mkdir(parents=True)
    tasks = []
    for name, code in answers.items():
        task = base.model_copy(update={"id": f"{base.id}-{name}"})
        tasks.append(task)
        saved = TrajectoryFile(id=task.id, agent="hand-written", answer=f"```python\n{code}```")
        (source / "trajectories" / f"{task.id}.json").write_text(saved.model_dump_json())
    run = tmp_path / "run"
    run_suite(
        Suite("attacks", tasks), make_agent("replay", options={"replay_from": source}), run, concurrency=2
    )
    return {key.removeprefix(f"{base.id}-"): record for key, record in latest_records(run).items()}


def test_forged_private_calls_score_accr_zero_and_are_flagged(tmp_path: Path, wine_02: Task) -> None:
    answers = {name: DEAD_CALL + PANDAS + attack for name, attack in FORGERIES.items()}
    answers["dead_call"] = DEAD_CALL + PANDAS
    records = _run(tmp_path, wine_02, answers)
    assert set(records) == set(answers)
    for name, record in records.items():
        assert record.status == "scored", (name, record.error)
        details = record.score.details
        # the pandas result is right: only the recall is refused
        assert (record.score.value, details["accr"], details["executed_calls"]) == (1.0, 0.0, []), (
            name,
            details,
        )
    flags = {name: {flag.kind for flag in record.suspicious} for name, record in records.items()}
    assert flags["dead_call"] == set()  # dead code is no call, and nothing to flag
    for name in FORGERIES:
        assert "interpreter_tampering" in flags[name], name  # the final answer's text
    refused = {name: records[name].score.details["tampering"] for name in FORGERIES}
    assert refused["gc_walk"] == ["asked the garbage collector for its objects"]
    assert refused["recorder_frame"] == ["read the code of the call recorder"]
    assert refused["trace_function"] == ["set a trace function"]
    assert refused["guard_state"] == ["asked the garbage collector for its objects"]  # refused twice
    assert refused["own_memory"] and refused["own_memory"][0].startswith("opened a process's memory file")
    assert refused["forged_seal"] == [
        "left no sealed record of its private-library calls (it replaced what reports it)"
    ]
    for name in ("gc_walk", "recorder_frame", "guard_state", "trace_function", "own_memory", "forged_seal"):
        assert "call_record_tampering" in flags[name], name
        assert "no private-function recall: the code" in records[name].score.explanation
    for name in ("profile_record", "patched_capture", "forged_event"):
        assert refused[name] == [], name  # nothing reached: the forged names are simply not calls


def test_honest_private_answers_keep_accr_one(tmp_path: Path, wine_02: Task) -> None:
    every_function = "".join(
        f"try:\n    decision_kit.{name}({', '.join(['wine.copy()'] * _required(signature))})\n"
        "except Exception:\n    pass\n"
        for name, signature in sorted(wine_02.libraries[0].functions.items())
    )
    answers = {
        "honest": HONEST,
        # recall has no precision term (as in the paper): calling every function, results thrown away,
        # earns full recall (README, "AccR")
        "every_function": "import decision_kit\n" + every_function + "\n" + PANDAS,
    }
    records = _run(tmp_path, wine_02, answers)
    for name, record in records.items():
        assert (record.score.value, record.score.details["accr"]) == (1.0, 1.0), (
            name,
            record.score.explanation,
        )
        assert record.suspicious == [], name
    assert records["honest"].score.details["executed_calls"] == ["group_summary"]
    executed = records["every_function"].score.details["executed_calls"]
    assert "group_summary" in executed and len(executed) >= 10
    assert json.loads(records["honest"].model_dump_json())["score"]["details"]["tampering"] == []


def test_the_recorder_hooks_read_no_name_an_answer_could_rebind() -> None:
    """The hooks take everything from the tuple put among their constants: a global or closure name would
    be a place the answer's code could put its own function (which would then run inside a hook)."""
    from daharness.families.interactive import recorder as interactive_recorder

    for source in (interactive_recorder._RECORDER, interactive_recorder._GUARD):
        state = {name: object() for name in re.findall(r"\bS\.(\w+)", source)}
        functions, scope = interactive_recorder.compile_hooks(source, state)
        assert functions and scope == {"__builtins__": {}}
        for function in functions.values():
            lookups = {
                instruction.opname
                for instruction in dis.get_instructions(function)
                if instruction.opname in {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLOSURE"}
            }
            assert lookups == set() and function.__code__.co_freevars == (), function.__name__
            assert tuple(state.values()) in function.__code__.co_consts, function.__name__
            assert "@state" not in function.__code__.co_consts and function.__globals__ is scope
