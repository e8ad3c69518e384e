"""A fifth family written outside daharness (tests/fixtures/tally_family: a suite format, a scorer with a mode
group, an agent with one typed option, a rescoring), installed as a plugin and used through the real
command line: `run`, `score`, `validate`, `report`, `agents` and `doctor` take it with no file of daharness
edited (issue 41: the command line loops over what families register)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FAMILY = Path(__file__).parent / "fixtures" / "tally_family"
SUITE = FAMILY / "suite"


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a Python where the tally family is installed: the package on the path and a
    distribution that names it under the entry point `daharness.plugins`."""
    root = tmp_path_factory.mktemp("tally-plugin")
    dist = root / "tally_family-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tally-family\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[daharness.plugins]\ntally = tally_family\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(FAMILY)]), "COLUMNS": "200"}


def _daharness(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "daharness", *args], capture_output=True, text=True, env=env)


def _scores(run: Path) -> dict[str, float]:
    records = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert {record["family"] for record in records} == {"tally"}
    return {record["id"]: record["score"]["value"] for record in records}


def test_run_takes_the_agents_typed_option_and_records_it(plugin_env: dict[str, str], tmp_path: Path) -> None:
    plain = _daharness(plugin_env, "run", "--suite", f"tally:{SUITE}", "--agent", "tally-counter",
                       "--out", str(tmp_path / "plain"), "-j", "2")  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    assert _scores(tmp_path / "plain") == {"mixed": 1.0, "the": 1.0, "none": 1.0}
    spec = json.loads((tmp_path / "plain" / "run.json").read_text())
    assert spec["agent"] == {"name": "tally-counter", "case_sensitive": False}
    assert spec["scoring"]["modes"]["tally"] == "exact"
    # the option, as its own flag: counted case-sensitively, two of the three counts are wrong
    strict = _daharness(plugin_env, "run", "--suite", f"tally:{SUITE}", "--agent", "tally-counter",
                        "--case-sensitive", "--out", str(tmp_path / "strict"), "-j", "2")  # fmt: skip
    assert strict.returncode == 0, strict.stderr
    assert _scores(tmp_path / "strict") == {"mixed": 0.0, "the": 0.0, "none": 1.0}
    assert json.loads((tmp_path / "strict" / "run.json").read_text())["agent"]["case_sensitive"] is True
    # and as -A: a run of the same options resumes the first run, one of others is refused by it
    again = _daharness(plugin_env, "run", "--suite", f"tally:{SUITE}", "--agent", "tally-counter",
                       "-A", "case_sensitive=true", "--out", str(tmp_path / "plain"))  # fmt: skip
    assert again.returncode == 2 and "agent.case_sensitive: False, now True" in again.stderr
    report = _daharness(plugin_env, "report", str(tmp_path / "strict"))
    assert report.returncode == 0, report.stderr
    figures = json.loads((tmp_path / "strict" / "report.json").read_text())
    assert figures["mean_score"] == 0.3333 and figures["run"]["scoring"]["tally"] == "exact"
    assert figures["intervals"]["by_family"]["tally"]["accuracy"]["n"] == 3


def test_options_the_agent_lacks_or_refuses_are_one_line_errors(
    plugin_env: dict[str, str], tmp_path: Path
) -> None:
    for args, message in (
        (["--memory-window", "3"], "error: --memory-window: not an option of agent 'tally-counter' "
                                   "(its options: --case-sensitive)"),
        (["-A", "case_sensitive=maybe"], "error: -A case_sensitive: must be true or false (agent 'tally-counter')"),
    ):  # fmt: skip
        done = _daharness(plugin_env, "run", "--suite", f"tally:{SUITE}", "--agent", "tally-counter",
                          "--out", str(tmp_path / "r"), *args)  # fmt: skip
        assert done.returncode == 2 and done.stderr.strip() == message, done.stderr
        assert not (tmp_path / "r").exists()
    shown = _daharness(plugin_env, "agents", "tally-counter")
    assert shown.returncode == 0, shown.stderr
    assert "--case-sensitive  <bool>  False    Count only the word as the task writes it." in shown.stdout


def test_score_rescores_another_tools_answers_by_the_familys_hook(
    plugin_env: dict[str, str], tmp_path: Path
) -> None:
    help_text = _daharness(plugin_env, "score", "--help").stdout
    assert "--tally-answers" in help_text and "--tally-mode" in help_text
    found = {}
    for mode in ("exact", "lenient"):
        done = _daharness(plugin_env, "score", "--tally-answers", str(FAMILY / "answers.jsonl"), "--tally-suite",
                          str(SUITE), "--tally-mode", mode, "--json", str(tmp_path / f"{mode}.json"))  # fmt: skip
        assert done.returncode == 0, done.stderr
        found[mode] = json.loads((tmp_path / f"{mode}.json").read_text())
    assert found["exact"]["scores"] == {"mixed": 1.0, "the": 0.0, "none": 0.0}  # "3 times" is not a number
    assert found["lenient"]["scores"] == {"mixed": 1.0, "the": 1.0, "none": 0.0}
    missing = _daharness(plugin_env, "score", "--tally-answers", str(FAMILY / "answers.jsonl"))
    assert missing.returncode == 2 and "error: score --tally-answers needs --tally-suite" in missing.stderr


def test_validate_and_doctor_take_the_family(plugin_env: dict[str, str]) -> None:
    checked = _daharness(plugin_env, "validate", "--suite", f"tally:{SUITE}")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("│ 2/2 ") == 3 and "3 of 3 tasks pass" in checked.stdout, checked.stdout
    doctor = _daharness(plugin_env, "doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr
    assert json.loads(doctor.stdout)["tally"] == {"ready": True}
