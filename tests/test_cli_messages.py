"""What a new user meets on the command line (issue 22): required options, messages in our words rather
than the parser's or pydantic's, cheap checks before the heavy imports, complete help and listings, and a
README whose paths exist in a checkout."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import cli

from daharness.core.runlog import FORMAT_VERSION

ROOT = Path(__file__).parents[1]


def _one_line_error(*args: str) -> str:
    done = subprocess.run(cli(*args), capture_output=True, text=True)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    return done.stderr


@pytest.mark.parametrize(
    ("args", "missing"),
    [([], "--suite"), (["--suite", "closed-form"], "--agent"), (["--agent", "reference"], "--suite")],
)
def test_run_requires_a_suite_and_an_agent(tmp_path: Path, args: list[str], missing: str) -> None:
    # before: `daharness run` alone started a full reference run of 48 samples into runs/
    done = subprocess.run(cli("run", *args), capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2
    assert f"Missing option '{missing}'" in done.stderr and done.stderr.count("\n") == 1
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["run", "--mode", "bogus"], "error: --mode: choose normalized or strict, not 'bogus'\n"),
        (["run", "--cache", "bogus"], "error: --cache: choose on, off or refresh, not 'bogus'\n"),
        (
            ["schema", "bogus"],
            "error: daharness schema: choose task, record, run or trajectory, not 'bogus'\n",
        ),
        (
            ["run", "--suite", "closed-form", "--agent", "react", "--model", "m", "--base-url", "nourl"],
            "error: --base-url: 'nourl' is not an http:// or https:// URL (e.g. http://localhost:8000/v1)\n",
        ),
        (["validate", "--limit", "0"], "error: --limit: must be at least 1\n"),
    ],
    ids=["mode", "cache", "schema", "base-url", "validate-limit"],
)
def test_bad_values_are_said_in_our_words(tmp_path: Path, args: list[str], line: str) -> None:
    message = _one_line_error(*args, *(["--out", str(tmp_path / "run")] if args[0] == "run" else []))
    assert message == line
    assert "Value error" not in message and "Input should" not in message


def test_a_run_json_from_a_newer_daharness_is_said_without_pydantics_prefix(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text('{"format_version": 99, "suite": {}, "agent": {}}')
    message = _one_line_error("report", str(run))
    assert message == (
        f"error: {run / 'run.json'}: field 'format_version': written by a newer daharness (format 99); "
        f"this one reads formats up to {FORMAT_VERSION}\n"
    )


def _exit_and_modules_loaded(args: list[str], modules: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """`daharness ARGS` in a process that prints, last, its exit code and which of `modules` it imported."""
    probe = (
        "import sys\n"
        "from daharness.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        f"    print(exc.code, [m for m in {modules!r} if m in sys.modules])\n"
    )
    return subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True)


def test_an_unknown_backend_is_refused_before_the_families_and_pandas_are_imported(tmp_path: Path) -> None:
    # the check answered after importing every family (pandas, numpy: 3 to 9 s on a busy machine)
    args = ["run", "--suite", "closed-form", "--agent", "reference", "--backend", "bogus"]
    heavy = ("pandas", "numpy", "ray", "openai", "daharness.families")
    done = _exit_and_modules_loaded([*args, "--out", str(tmp_path / "run")], heavy)
    assert done.stdout == "2 []\n"
    assert done.stderr == "error: --backend: unknown executor 'bogus'; known: local, ray\n"


def test_help_builds_no_model_and_imports_no_family() -> None:
    # `daharness --help` paid for pydantic and every core model at start (issue 27: it is to take 0.2 s)
    heavy = ("pydantic", "pandas", "numpy", "daharness.core.task", "daharness.families")
    done = _exit_and_modules_loaded(["--help"], heavy)
    assert done.stdout.endswith("0 []\n"), done.stdout[-500:] + done.stderr[-2000:]
    assert "Usage: " in done.stdout and " run " in done.stdout


START_HEAVY = (
    "pandas",
    "numpy",
    "matplotlib",
    "sklearn",
    "duckdb",
    "openai",
    "ray",
    "rich",
    "typer.rich_utils",
)


def test_the_command_line_starts_without_heavy_libraries() -> None:
    # issue 27: `daharness --help` is to take 0.2 s; rich's help layout alone took about 0.2 s to import
    probe = f"import sys, daharness.cli; print([m for m in {START_HEAVY!r} if m in sys.modules])"
    imported = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert imported.stdout == "[]\n", imported.stdout + imported.stderr
    done = _exit_and_modules_loaded(["--help"], START_HEAVY)
    assert done.stdout.endswith("0 []\n"), done.stdout[-500:] + done.stderr[-2000:]


def test_the_help_gives_each_command_its_whole_summary() -> None:
    done = subprocess.run(cli("--help"), capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"})
    text = " ".join(done.stdout.split())
    assert done.returncode == 0 and "..." not in text.partition("Commands:")[2], done.stdout
    assert (
        "doctor Say which isolation and limits this machine gives agent code, and whether samples can have "
        "a desktop (exit 1 if the sandbox cannot run). agents List the available agents." in text
    )


def test_suites_list_gives_whole_sentences() -> None:
    done = subprocess.run(cli("suites", "list"), capture_output=True, text=True)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert len(lines) == 10 and any(line.startswith("tapilot:PATH") for line in lines)
    for line in lines:  # `NAME: N tasks — description.` or `PREFIX:PATH: description. (format)`
        description = re.sub(r" \(\w+\)$", "", line)
        assert description.endswith((".", ")")), line
    dabench = next(line for line in lines if line.startswith("dabench:PATH"))
    assert "or `--labels` / `--tables`), or a built-in folder whose suite.json names its files." in dabench


def test_every_sampling_option_of_run_has_help() -> None:
    done = subprocess.run(
        cli("run", "--help"), capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"}
    )
    text = " ".join(done.stdout.replace("│", " ").split())
    assert re.search(r"--seed <int> Sampling seed sent with each request", text)
    assert re.search(r"--temperature <float range> \[0<=x<=2\] Sampling temperature", text)
    assert re.search(r"--top-p <float range> \[0<=x<=1\] Nucleus sampling", text)


def test_validate_takes_a_limit(tmp_path: Path) -> None:
    done = subprocess.run(
        cli("validate", "--suite", "closed-form", "--limit", "1"), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "1 of 1 tasks pass" in done.stdout


def test_the_readme_names_only_paths_a_checkout_has() -> None:
    readmes = [ROOT / "README.md", *sorted((ROOT / "src" / "daharness" / "families").glob("*/README.md"))]
    for readme in readmes:
        text = readme.read_text()
        assert "../shared" not in text, readme
        assert "data/da-dev-questions.jsonl" not in text, readme
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if not target.startswith(("http://", "https://")):
                assert (readme.parent / target).exists(), f"{readme}: {target}"
