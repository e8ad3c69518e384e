"""The options the families declare, on the commands that take them: mode switches and format options
come from `FamilyBase` (a plugin's family gets them too), and run.json records the same modes as before."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from daharness.cli.families import FamilyChoices
from daharness.core.registry import families

FLAG = re.compile(r"--[a-z][a-z-]+")


def _flags(*command: str, env: dict[str, str] | None = None) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "daharness", *command, "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return set(FLAG.findall(done.stdout))


def test_each_command_takes_the_family_options_it_took_before() -> None:
    modes = {"--mode", "--workspace-mode", "--interactive-mode"}
    data, variants = {"--labels", "--tables"}, {"--instruction", "--rag"}
    run = _flags("run")
    assert modes | data | variants <= run
    assert modes <= _flags("validate") and not (data | variants) & _flags("validate")
    assert modes <= _flags("rescore")
    score = _flags("score")
    # score rescoring Tapilot-Crossing responses takes the interactive switch, never a run's variants
    assert {"--mode", "--workspace-mode", "--interactive-mode", "--labels"} <= score and not {"--rag"} & score
    check = _flags("suites", "check")
    assert data <= check and not (modes | variants) & check


def test_a_plugin_familys_switch_and_format_option_reach_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "toy_family.py").write_text(
        textwrap.dedent(
            """
            from daharness.core.family import FamilyBase, FormatOption
            from daharness.core.registry import family
            from daharness.core.scoring import ModeGroup

            @family("toy")
            class ToyFamily(FamilyBase):
                modes = ModeGroup("toy", ("lenient", "exact"), default="lenient")
                mode_help = "Toy scoring: 'lenient' or 'exact'."
                format_options = (FormatOption("toy_index", "Index file of a toy: suite."),)
            """
        )
    )
    dist = tmp_path / "toy_family-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-family\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[daharness.plugins]\ntoy = toy_family\n")
    plugin = {"PYTHONPATH": str(tmp_path)}
    assert {"--toy-mode", "--toy-index"} <= _flags("run", env=plugin)
    assert "--toy-mode" in _flags("validate", env=plugin) and "--toy-index" not in _flags(
        "validate", env=plugin
    )
    assert "--toy-index" in _flags("suites", "check", env=plugin)
    done = subprocess.run(
        [sys.executable, "-m", "daharness", "run", "--toy-mode", "loose"],
        capture_output=True,
        text=True,
        env={**os.environ, **plugin},
    )
    assert done.returncode == 2 and "error: --toy-mode: choose lenient or exact, not 'loose'" in done.stderr


def test_run_json_names_the_modes_it_named_before() -> None:
    """closed-form and workspace always; interactive when a task uses it (run, validate), or, rescoring a
    finished run, when it is not the default."""
    owners = [entry.impl for _, entry in sorted(families.items(), key=lambda i: (i[1].order, i[0]))]
    owners = [family for family in owners if family.modes is not None]
    defaults = {family.modes.name: family.modes.default for family in owners}
    chosen = FamilyChoices(
        modes={**defaults, "closed-form": "strict", "workspace": "compat", "interactive": "official"},
        owners=owners,
    )
    assert chosen.scoring({"closed-form"}).modes == {"closed-form": "strict", "workspace": "compat"}
    assert chosen.scoring({"interactive"}).modes == {
        "closed-form": "strict", "workspace": "compat", "interactive": "official",
    }  # fmt: skip
    assert chosen.scoring(None).modes["interactive"] == "official"
    chosen.modes["interactive"] = "corrected"
    assert "interactive" not in chosen.scoring(None).modes
