"""The official Tapilot-Crossing files (`tapilot:` suites): daharness's `official` (compat) scoring equals the
release's own `evaluate.py`, run as the oracle in a subprocess on a temporary copy, entry by entry and in its
figures; the corrected mode differs where the release is unsound; the reference agent scores 100%; bad
entries are one-line errors naming the file, the line and the field."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from daharness.core.errors import UserError
from daharness.core.limits import Limits
from daharness.families.interactive.rescore import rescore_tapilot
from daharness.families.interactive.scorers.release import correct_letter, extract_release_code, judge_lines
from daharness.report.build import build_report
from daharness.runs.pipeline import SandboxSettings
from daharness.runs.rundir import RunDir
from daharness.suites import load_suite

from .tapilot_release import EVALUATE, ROW_CHANGES, TIMEOUT_S, all_files, build, write_responses

DAHARNESS = [sys.executable, "-m", "daharness"]


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = build(tmp_path_factory.mktemp("tapilot") / "release")
    write_responses(folder / "responses")
    return folder


_ENTRY_LINE = re.compile(r"\[\d+/\d+\] data_id=(\S+) -> (PASS|FAIL)")
_MULTI_CHOICE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import evaluate
found = {}
for name in evaluate.MULTI_CHOICE_FILES:
    for detail in evaluate.evaluate_multi_choice(sys.argv[2] + "/" + name)[2]:
        found[name.removesuffix(".jsonl") + ":" + str(detail["data_id"])] = detail["is_correct"]
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def compat_process(
    release: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """`daharness score --tapilot-responses` in official (compat) mode, through the command line, started
    at once: it runs while the release's evaluator does (each waits out an entry's timeout)."""
    folder = tmp_path_factory.mktemp("compat")
    out = folder / "scores.json"
    command = [
        *DAHARNESS, "score", "--tapilot-responses", str(release / "responses"), "--tapilot-data", str(release),
        "--interactive-mode", "official", "--tapilot-timeout", str(TIMEOUT_S), "-j", "2", "--json", str(out),
    ]  # fmt: skip
    # its output goes to files: a full pipe nobody reads until the oracle is done would stop it
    with open(folder / "stdout", "w") as stdout, open(folder / "stderr", "w") as stderr:
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, text=True)
    yield process, out
    if process.poll() is None:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def oracle(
    release: Path,
    compat_process: tuple[subprocess.Popen[str], Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    """The release's evaluate.py on a copy of the responses: each entry's verdict and its summary."""
    work = tmp_path_factory.mktemp("oracle")
    shutil.copyfile(EVALUATE, work / "evaluate.py")
    responses = shutil.copytree(release / "responses", work / "responses")
    command = [
        sys.executable, "evaluate.py", "--response_dir", str(responses), "--resource_dir",
        str(release / "data" / "resource"), "--code_gen_timeout", str(TIMEOUT_S), "--workers", "2",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=1800, check=True)
    entries: dict[str, bool] = {}
    current = ""
    for line in done.stdout.splitlines():
        if heading := re.match(r"\s*Evaluating (\w+)\.\.\.", line):
            current = heading.group(1)
        elif match := _ENTRY_LINE.search(line):
            data_id = match.group(1)
            key = f"{current}:line1" if data_id == "?" else f"{current}:{data_id}"  # the library record
            entries[key] = match.group(2) == "PASS"
    choices = subprocess.run(
        [sys.executable, "-c", _MULTI_CHOICE, str(work), str(responses)],
        capture_output=True, text=True, check=True, cwd=work,
    )  # fmt: skip
    entries.update(json.loads(choices.stdout))
    summary = json.loads((responses / "eval_results.json").read_text())
    summary.pop("model")
    return {"entries": entries, "summary": summary}


@pytest.fixture(scope="module")
def compat(compat_process: tuple[subprocess.Popen[str], Path]) -> dict[str, Any]:
    process, out = compat_process
    assert process.wait(timeout=1800) == 0, (out.parent / "stderr").read_text()[-3000:]
    assert "OVERALL" in (out.parent / "stdout").read_text()
    return json.loads(out.read_text())


def test_compat_scoring_equals_the_release_evaluator_entry_by_entry(
    oracle: dict[str, Any], compat: dict[str, Any]
) -> None:
    ours = {key: verdict["pass"] for key, verdict in compat["entries"].items()}
    entries = sum(len(rows) for rows in all_files().values())
    assert (
        len(oracle["entries"]) == entries + 1
    )  # with the private library's record, as the release counts it
    assert ours == oracle["entries"]
    assert compat["summary"] == oracle["summary"]
    # not a trivial agreement: both verdicts in every kind of file, and the reasons the release tells apart
    assert 10 <= sum(ours.values()) <= len(ours) - 10
    reasons = {verdict["reason"].split(":")[0] for verdict in compat["entries"].values()}
    assert {"pred timeout", "pred failed", "no eval output", "missing response or eval_metrics"} <= reasons
    assert compat["entries"]["normal:2"] == {"pass": True, "intents": 2, "credit": 2, "reason": ""}
    # the rows that differ from the dialogue files: the release reads eval_metrics and the answer from the row
    assert (compat["entries"]["normal:4"]["pass"], compat["entries"]["action_analysis:3"]["pass"]) == (
        True,
        False,
    )
    assert compat["entries"]["action_bg:3"] == {"pass": True, "intents": 1, "credit": 1, "reason": ""}
    assert compat["summary"]["overall"]["total"] == entries + 1 + sum(
        len(row["result_type"]) - 1
        for name, rows in all_files().items()
        if name not in ("action_analysis", "action_una", "action_bg", "action_plotqa")
        for row in rows
        if isinstance(row["result_type"], list)
    )


def _subset(release: Path, target: Path, keep: dict[str, set[int]]) -> Path:
    for name, ids in keep.items():
        rows = [row for row in all_files()[name] if row["data_id"] in ids]
        (target / f"{name}.jsonl").parent.mkdir(parents=True, exist_ok=True)
        (target / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return target


def test_corrected_mode_fixes_what_the_release_gets_wrong(release: Path, tmp_path: Path) -> None:
    keep = {"normal": {7, 8, 13}, "action_analysis": {4}, "action_una": {2}, "action_plotqa": {2}}
    responses = _subset(release, tmp_path / "responses", keep)
    settings = SandboxSettings()
    official = rescore_tapilot(
        responses, release, mode="official", sandbox=settings, timeout_s=TIMEOUT_S, workers=2
    )
    corrected = rescore_tapilot(
        responses, release, mode="corrected", sandbox=settings, timeout_s=TIMEOUT_S, workers=2
    )
    verdicts = {
        key: (official["entries"][key]["pass"], corrected["entries"][key]["pass"])
        for key in official["entries"]
    }
    assert verdicts == {
        "normal:7": (False, False),  # two intents, one right
        "normal:8": (True, False),  # eval printed nan: 'not <= 0.6' passes it in the release
        "normal:13": (True, False),  # the prediction overwrote the reference's results
        "action_analysis:4": (False, True),  # a <choice> tag and an Answer: line agree on D
        "action_una:2": (False, True),  # "I think Not answerable" reads as I in the release
        "action_plotqa:2": (False, True),  # the option's text, no letter
    }
    assert corrected["entries"]["normal:7"]["credit"] == 1 and official["entries"]["normal:7"]["credit"] == 0
    assert "changed the reference's results" in corrected["entries"]["normal:13"]["reason"]


def test_corrected_mode_scores_against_the_data_not_the_response_rows(release: Path, tmp_path: Path) -> None:
    responses = shutil.copytree(release / "responses", tmp_path / "responses")
    for name, data_id in ROW_CHANGES:
        path = responses / f"{name}.jsonl"
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        kept = [row for row in rows if row.get("data_id") == data_id]
        path.write_text("".join(json.dumps(row) + "\n" for row in kept))
    for name in {path.stem for path in responses.glob("*.jsonl")} - {name for name, _ in ROW_CHANGES}:
        (responses / f"{name}.jsonl").unlink()
    verdicts = {
        mode: {
            key: entry["pass"]
            for key, entry in rescore_tapilot(
                responses, release, mode=mode, sandbox=SandboxSettings(), timeout_s=TIMEOUT_S, workers=2
            )["entries"].items()
        }
        for mode in ("official", "corrected")
    }
    assert verdicts == {
        "official": {"normal:4": True, "action_analysis:3": False},  # the rows' eval_metrics and answer
        "corrected": {"normal:4": False, "action_analysis:3": True},  # the data's
    }


def test_the_reference_agent_scores_every_entry_right(release: Path, tmp_path: Path) -> None:
    from daharness.agents import make_agent
    from daharness.runs.runner import run_suite

    # no entry of the reference times out: generous limits, as a loaded machine needs (imports take seconds)
    suite = load_suite(f"tapilot:{release}", timeout_s=600)
    assert len(suite.tasks) == sum(len(rows) for rows in all_files().values())
    sandbox = SandboxSettings(limits=Limits(step_timeout_s=600))
    outcome = run_suite(suite, make_agent("reference"), tmp_path / "run", concurrency=2, sandbox=sandbox)
    errors = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert outcome.errors == 0, [(r["id"], r.get("error")) for r in errors if r["status"] != "scored"]
    records = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert {r["id"]: (r["score"]["value"], r["score"]["details"]["accr"]) for r in records} == {
        task.id: (1.0, 1.0) for task in suite.tasks
    }
    report = build_report(RunDir.open_for_reading(tmp_path / "run"))
    figures = report["families"]["interactive"]
    assert figures["counts"]["samples"] == len(suite.tasks)
    assert set(figures["by_action"]) == {
        "insight_mining",
        "fast_fail",
        "best_guess",
        "plot_qa",
        "update_code",
    }


def test_files_selection_and_task_shape(release: Path) -> None:
    suite = load_suite(f"tapilot:{release}", files="normal,action_una.jsonl")
    assert {task.id.rsplit("-", 1)[0] for task in suite.tasks} == {"normal", "action_una"}
    two = next(task for task in suite.tasks if task.id == "normal-2")
    assert two.metadata.category == "normal" and "multi-intent" in two.metadata.tags
    assert [turn.role for turn in two.dialogue] == ["user", "assistant"]  # the history, not the request
    assert two.gold.data["release"]["eval_metrics"] not in two.instruction
    private = load_suite(f"tapilot:{release}", files="private_action_correction").tasks
    assert [t.metadata.category for t in private] == ["private_action"] * 2
    with pytest.raises(UserError, match="--files: unknown file 'bogus'"):
        load_suite(f"tapilot:{release}", files="normal,bogus")


BAD = [
    ({"current_query": ""}, "normal.jsonl:2: field 'current_query': must be a non-empty text"),
    ({"domain_name": "chess"}, "normal.jsonl:2: field 'domain_name': 'chess' is not one of"),
    ({"result_type": []}, "normal.jsonl:2: field 'result_type'"),
    ({"eval_metrics": ""}, "normal.jsonl:2: field 'eval_metrics': a code-generation entry needs"),
    ({"prompt_with_hist_json": [{"role": "user"}]}, "normal.jsonl:2: field 'prompt_with_hist_json'"),
    ({"data_id": 1}, "normal.jsonl:2: field 'data_id': 1 is also on line 1"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_a_bad_entry_is_one_line_naming_file_line_and_field(
    release: Path, tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    copy = shutil.copytree(release / "data", tmp_path / "data")  # links out of a release are refused
    path = copy / "dialogue_data" / "normal.jsonl"
    lines = path.read_text().splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), **change})
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError) as caught:
        load_suite(f"tapilot:{tmp_path}", files="normal")
    assert message in str(caught.value) and "\n" not in str(caught.value)
    done = subprocess.run(
        [*DAHARNESS, "run", "--agent", "reference", "--suite", f"tapilot:{tmp_path}", "--files", "normal", "-o", str(tmp_path / "run")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and message in " ".join(done.stderr.split())


def test_the_release_readers() -> None:
    assert correct_letter('{"correct_answer": "C"}') == "C" and correct_letter('"correct_answer": b') == ""
    assert correct_letter('{"correct_answer": D}') == "D" and correct_letter("{}") == ""
    two = "```python\nx = 1\n```\ntext\n```\nlonger = 2\n```"
    assert extract_release_code(two) == "longer = 2\n"
    assert extract_release_code("Use this: import os\nprint(1)\n```") == "import os\nprint(1)\n"
    assert extract_release_code("no code") == "no code"
    assert judge_lines("True\n0.61\nnan", "official") == [True, True, True]
    assert judge_lines("True\n0.61\nnan", "corrected") == [True, True, False]
    assert judge_lines("0.6\nFalse\ntrue", "official") == [False, False, False]
